/**
 * The kernel re-exports inversify and rxjs so that every plugin uses exactly one copy of each
 * (plugins import `ContainerModule`, `injectable`, `Observable` from `@troupe/kernel`).
 *
 * Contributions are classes marked `@injectable()` that receive the shared services (see `contracts/services.ts`)
 * through their constructors, by token. esbuild and tsx emit no decorator metadata, so every parameter names its
 * token explicitly, with {@link injectParameters}.
 */
import 'reflect-metadata';
import { decorate, inject, optional, type interfaces } from 'inversify';
export { Container, ContainerModule, injectable, inject, optional, multiInject } from 'inversify';
export type { interfaces } from 'inversify';
export * as rx from 'rxjs';
export { Observable, Subject, defer, from, of, EMPTY, firstValueFrom, lastValueFrom } from 'rxjs';

/** A constructor parameter's token, or `optionalService(token)` for one that may be unbound (it then gets its default). */
export type ParameterToken = interfaces.ServiceIdentifier | { readonly optional: interfaces.ServiceIdentifier };

/** Marks a parameter token optional: when nothing is bound to it, the parameter is `undefined` (its default applies). */
export function optionalService(token: interfaces.ServiceIdentifier): {
  readonly optional: interfaces.ServiceIdentifier;
} {
  return { optional: token };
}

/**
 * Declares the tokens `target`'s constructor parameters are injected with, in order: the same metadata as writing
 * `@inject(TOKEN)` (and `@optional()`) on each parameter. Parameter decorators compile only with
 * `experimentalDecorators`, which tsx applies only to the files that the tsconfig of the CURRENT folder includes, so a
 * plugin's TypeScript source that used them would fail to load from source in any other folder; this call loads
 * everywhere. The class itself is marked with `@injectable()`, which works under either decorator mode.
 *
 * ```ts
 * @injectable()
 * export class CodeEnvironmentContribution {
 *   constructor(pool: SandboxPool = sharedSandboxPool(), random: RandomStreams, logger: Logger) { ... }
 * }
 * injectParameters(CodeEnvironmentContribution, [optionalService(SandboxPool), RandomStreams, Logger]);
 * ```
 */
export function injectParameters(
  target: abstract new (...args: never[]) => unknown,
  tokens: readonly ParameterToken[],
): void {
  tokens.forEach((entry, index) => {
    const isOptional = typeof entry === 'object' && entry !== null && 'optional' in entry;
    decorate(inject(isOptional ? entry.optional : (entry as interfaces.ServiceIdentifier)), target, index);
    if (isOptional) decorate(optional(), target, index);
  });
}
