/**
 * A reward function that turns a transition's signals into named terms: `team` and `local` are copied from the
 * environment signals named in the config, `bonus` pays `successBonus` on the step that solves the task. The team
 * spec mixes the terms per seat (r = α·team + local + bonus); every term is logged separately.
 */
import type { JsonSchema, RewardContribution, RewardFunction, Transition } from '@troupe/kernel';
import { injectable, readConfigSchema } from '@troupe/kernel';

/** The contribution id. Bump the `-vN` suffix whenever the terms change. */
export const ID = '__ID__';

/** The config schema, read from `schemas/config.json` (`troupe manifest` names this file in package.json). */
export const CONFIG_SCHEMA: JsonSchema = readConfigSchema(new URL('../schemas/config.json', import.meta.url));

/** The terms this reward produces, always all of them. */
export const TERMS = ['team', 'local', 'bonus'] as const;

/** The validated config. */
export interface SignalTermsConfig {
  /** Signal used as the `team` term. */
  readonly team: string;
  /** Signal used as the `local` term. */
  readonly local: string;
  /** `bonus` on the solving step. */
  readonly successBonus: number;
  /** Value of a term whose signal is absent. */
  readonly missing: number;
}

/** The reward function for one config. */
export class SignalTermsReward implements RewardFunction {
  /** The contribution id. */
  readonly id = ID;

  /** @param config the validated config */
  constructor(readonly config: SignalTermsConfig) {}

  /** The terms of one transition: every declared term, always finite. */
  terms(transition: Transition): Record<string, number> {
    const signals = transition.result.signals;
    const read = (name: string): number => {
      const value = signals[name];
      return typeof value === 'number' && Number.isFinite(value) ? value : this.config.missing;
    };
    return {
      team: read(this.config.team),
      local: read(this.config.local),
      bonus: transition.result.success ? this.config.successBonus : 0,
    };
  }
}

/** The contribution the plugin's module binds to `RewardContribution`. */
@injectable()
export class SignalTermsContribution implements RewardContribution {
  /** The contribution id. */
  readonly id = ID;
  /** One line for listings. */
  readonly description = 'Team and local terms read from named environment signals, plus a success bonus';
  /** The term names. */
  readonly terms = [...TERMS];
  /** The schema of `schemas/config.json`. */
  readonly configSchema = CONFIG_SCHEMA;

  /** Builds the reward function for one validated config. */
  create(config: Record<string, unknown>): SignalTermsReward {
    const str = (v: unknown, d: string): string => (typeof v === 'string' && v.length > 0 ? v : d);
    const num = (v: unknown, d: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : d);
    return new SignalTermsReward({
      team: str(config.team, 'executed_reward'),
      local: str(config.local, 'executed_reward'),
      successBonus: num(config.successBonus, 0),
      missing: num(config.missing, 0),
    });
  }
}
