/**
 * The process's shared services (see `contracts/services.ts`): one container per process that every plugin host
 * descends from. The kernel binds its own light services here; the host of the process (the CLI, an app) binds the
 * rest once at start-up, e.g. `processServices().bind(SandboxPool).toConstantValue(sharedSandboxPool())`.
 */
import { Container } from 'inversify';
import { Logger, RandomStreams } from '../contracts/services.js';
import { StreamLogger } from './logger.js';
import { DerivedRandomStreams } from './random.js';

export { StreamLogger, isLogLevel, logLevelFromEnv, type LogSink } from './logger.js';
export { DerivedRandomStreams } from './random.js';

/** A container with the kernel's default services bound: a {@link StreamLogger} and {@link DerivedRandomStreams}. */
export function createServices(): Container {
  const services = new Container();
  services
    .bind(Logger)
    .toDynamicValue(() => new StreamLogger())
    .inSingletonScope();
  services.bind(RandomStreams).toConstantValue(new DerivedRandomStreams());
  return services;
}

let shared: Container | undefined;

/** The services of this process (created on first use with {@link createServices}). */
export function processServices(): Container {
  shared ??= createServices();
  return shared;
}
