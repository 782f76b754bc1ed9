/**
 * The render context of an oracle action: the environment's oracle as a program, for roles that write programs (the
 * coder as the games' proposer learns to write the search, not a program that prints a memorised answer).
 */
import type { ProgramLanguage } from '../contracts/common.js';
import type { Environment } from '../contracts/environment.js';
import type { RenderContext } from '../contracts/role.js';

/** The {@link RenderContext} of `environment.oracle(state, seat)`: its `oracleProgram`, when the environment has one. */
export function oracleRenderContext<S>(
  environment: Environment<unknown, S, unknown>,
  state: S,
  seat: string,
): RenderContext {
  if (typeof environment.oracleProgram !== 'function') return {};
  return { oracleProgram: (language: ProgramLanguage) => environment.oracleProgram!(state, seat, language) };
}
