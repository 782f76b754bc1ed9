/**
 * Plays one instance with the environment's own oracle for every seat, without any role or policy. Used by
 * `troupe env sample` (the oracle solution of each instance) and for warm-start demonstrations.
 */
import type { Environment, StepResult } from '../contracts/environment.js';

/** One oracle step. */
export interface OracleStep {
  /** Turn index. */
  readonly turn: number;
  /** The seat that acted. */
  readonly seat: string;
  /** The oracle's action. */
  readonly action: unknown;
  /** The signals the environment returned. */
  readonly signals: Readonly<Record<string, number>>;
}

/** The result of an oracle play-through. */
export interface OraclePlay {
  /** Every step, in order. */
  readonly steps: readonly OracleStep[];
  /** Whether the oracle solved the instance. */
  readonly success: boolean;
  /** Turns played. */
  readonly turns: number;
}

/** Plays `instance` with `environment.oracle` for every seat; undefined when the environment has no oracle. */
export async function playOracle<I>(environment: Environment<I>, instance: I): Promise<OraclePlay | undefined> {
  if (!environment.oracle) return undefined;
  let state = environment.reset(instance);
  const steps: OracleStep[] = [];
  let success = false;
  let turn = 0;
  outer: for (; turn < environment.maxTurns; turn++) {
    for (const seat of environment.seats) {
      const action = environment.oracle(state, seat.name);
      const result: StepResult<unknown> = await environment.step(state, seat.name, { kind: 'action', action, text: '' });
      steps.push({ turn, seat: seat.name, action, signals: result.signals });
      state = result.state;
      success = result.success;
      if (result.done.terminated || result.done.truncated) {
        turn++;
        break outer;
      }
    }
  }
  return { steps, success, turns: turn };
}
