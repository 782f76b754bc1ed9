/**
 * The shared services of a `troupe` process, bound once before any command runs: the kernel binds its logger and
 * random streams itself; the CLI adds the sandbox pool of `@troupe/sandbox`, so the code and math environments and
 * the coder role of a run take their programs' slots from one pool.
 */
import { processServices, SandboxPool, type interfaces } from '@troupe/kernel';
import { sharedSandboxPool } from '@troupe/sandbox';

/** Binds the CLI's services into `services` (default: the process's), once. */
export function bindCliServices(services: interfaces.Container = processServices()): void {
  if (!services.isBound(SandboxPool)) services.bind<SandboxPool>(SandboxPool).toConstantValue(sharedSandboxPool());
}
