/**
 * The shared services of a `troupe` process, bound once before any command runs: the kernel binds its logger and
 * random streams itself; the CLI adds the sandbox pool of `@troupe/sandbox`, so the code and math environments and
 * the coder role of a run take their programs' slots from one pool, and the tokenizer cache of `@troupe/lm`, so every
 * causal LM policy of a run that reads the same folder shares one tokenizer.
 */
import { processServices, SandboxPool, TokenizerCache, type interfaces } from '@troupe/kernel';
import type { Tokenizer } from '@troupe/lm';
import { sharedSandboxPool } from '@troupe/sandbox';
import { importOptional } from './optional.js';

/**
 * The tokenizer cache of `@troupe/lm`, imported on the first load: commands that never load a model do not pay for
 * tfjs and transformers at start-up.
 */
const lazyTokenizerCache: TokenizerCache<Tokenizer> = {
  load: async (dir) =>
    (await importOptional('@troupe/lm', 'a causal LM policy', () => import('@troupe/lm'))).tokenizerCache.load(dir),
};

/** Binds the CLI's services into `services` (default: the process's), once. */
export function bindCliServices(services: interfaces.Container = processServices()): void {
  if (!services.isBound(SandboxPool)) services.bind<SandboxPool>(SandboxPool).toConstantValue(sharedSandboxPool());
  if (!services.isBound(TokenizerCache))
    services.bind<TokenizerCache<Tokenizer>>(TokenizerCache).toConstantValue(lazyTokenizerCache);
}
