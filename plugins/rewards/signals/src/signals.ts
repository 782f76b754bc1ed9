/**
 * `signals-v0`: the reward terms `team` and `local`, read from named signals of the environment's step result.
 */
import type {
  ConfigProblem,
  JsonSchema,
  RewardCheckContext,
  RewardContribution,
  RewardFunction,
  Transition,
} from '@troupe/kernel';
import { injectable, readConfigSchema } from '@troupe/kernel';

/** The contribution id. */
export const SIGNALS_ID = 'signals-v0';

/** The term names. */
export const SIGNALS_TERMS = Object.freeze(['team', 'local'] as const);

/** The validated config. */
export interface SignalsConfig {
  /** Signal read as the `team` term, for every seat. */
  readonly team: string;
  /** Signal read as the `local` term of seats without their own. */
  readonly local?: string;
  /** Per-seat config (from the team spec's `rewards.seats.<seat>.config`). */
  readonly seats: Readonly<Record<string, { readonly local?: string }>>;
}

/**
 * The paper's mapping for the game teams (Plan-Path, Sokoban, Sudoku): team = executed_reward; proposer local =
 * proposal_reward; executor local = executed_reward (with α = 1 the executor's executed reward counts twice).
 */
export const GAME_TEAM_SIGNALS: SignalsConfig = Object.freeze({
  team: 'executed_reward',
  seats: Object.freeze({
    proposer: Object.freeze({ local: 'proposal_reward' }),
    executor: Object.freeze({ local: 'executed_reward' }),
  }),
});

function bad(key: string, message: string): never {
  throw new Error(`${SIGNALS_ID}: rewards.${key} ${message}`);
}

function isName(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0;
}

/** Checks a raw config and fills defaults; errors name the key path. */
export function resolveSignalsConfig(raw: Record<string, unknown>): SignalsConfig {
  for (const key of Object.keys(raw)) {
    if (!['team', 'local', 'seats'].includes(key))
      bad(`config.${key}`, 'is not a known key; known keys: team, local, seats');
  }
  if (!isName(raw.team))
    bad('config.team', `must name a signal (e.g. "executed_reward"), got ${JSON.stringify(raw.team)}`);
  if (raw.local !== undefined && !isName(raw.local))
    bad('config.local', `must name a signal, got ${JSON.stringify(raw.local)}`);
  const seatsRaw = raw.seats ?? {};
  if (typeof seatsRaw !== 'object' || seatsRaw === null || Array.isArray(seatsRaw))
    bad('config.seats', 'must be an object { <seat>: { local: <signal> } }');
  const seats: Record<string, { local?: string }> = {};
  for (const [seat, c] of Object.entries(seatsRaw as Record<string, unknown>)) {
    if (typeof c !== 'object' || c === null || Array.isArray(c))
      bad(`seats.${seat}.config`, 'must be an object { local: <signal> }');
    for (const key of Object.keys(c))
      if (key !== 'local') bad(`seats.${seat}.config.${key}`, 'is not a known key; the only key is local');
    const local = (c as { local?: unknown }).local;
    if (local !== undefined && !isName(local))
      bad(`seats.${seat}.config.local`, `must name a signal, got ${JSON.stringify(local)}`);
    seats[seat] = Object.freeze(local === undefined ? {} : { local: local as string });
  }
  return Object.freeze({
    team: raw.team,
    ...(raw.local === undefined ? {} : { local: raw.local as string }),
    seats: Object.freeze(seats),
  });
}

/**
 * Problems with a config given the signals an environment produces (e.g. `PLAN_PATH_SIGNALS`): one message per
 * signal name that the environment does not produce. For `troupe validate`, before anything runs.
 */
export function checkSignalNames(config: SignalsConfig, available: readonly string[]): string[] {
  return signalProblems(config, { environment: 'the environment', seats: [], signals: available }).map((p) => {
    const where =
      p.path[0] === 'seats'
        ? `seats.${String(p.path[1])}.config.${p.path.slice(2).join('.')}`
        : `config.${p.path.join('.')}`;
    return `rewards.${where}: ${p.message}; ${p.hint ?? ''}`.replace(/; $/, '');
  });
}

/**
 * The problems of a resolved config for an environment, as {@link ConfigProblem}s with paths relative to the config
 * (`['team']`, `['local']`, `['seats', 'proposer', 'local']`): signals the environment does not declare, and seats
 * it does not have (when `context.seats` is not empty).
 */
export function signalProblems(config: SignalsConfig, context: RewardCheckContext): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const available = context.signals;
  const checkName = (path: (string | number)[], name: string | undefined): void => {
    if (name === undefined || available === undefined || available.includes(name)) return;
    const close = available.filter((a) => a.includes(name) || name.includes(a));
    out.push({
      path,
      message: `signal "${name}" is not produced by ${context.environment}`,
      hint: `${close.length ? `did you mean "${close[0]}"? ` : ''}available signals: ${available.join(', ')}`,
    });
  };
  checkName(['team'], config.team);
  checkName(['local'], config.local);
  for (const [seat, c] of Object.entries(config.seats)) {
    if (context.seats.length > 0 && !context.seats.includes(seat)) {
      out.push({
        path: ['seats', seat],
        message: `${context.environment} has no seat "${seat}"`,
        hint: `its seats are: ${context.seats.join(', ')}`,
      });
    }
    checkName(['seats', seat, 'local'], c.local);
  }
  return out;
}

/** The reward function: `{ team: signals[team], local: signals[local of the seat] }`. */
export class SignalsReward implements RewardFunction {
  /** {@inheritDoc RewardFunction.id} */
  readonly id = SIGNALS_ID;
  /** The resolved config. */
  readonly config: SignalsConfig;

  /** Builds the function; throws an error naming the key when the config is malformed. */
  constructor(config: Record<string, unknown>) {
    this.config = resolveSignalsConfig(config);
  }

  /** The signal read as `local` for a seat, or undefined (local = 0). */
  localSignal(seat: string): string | undefined {
    return this.config.seats[seat]?.local ?? this.config.local;
  }

  private read(transition: Transition, name: string, where: string): number {
    const signals = transition.result.signals ?? {};
    const value = signals[name];
    if (value === undefined) {
      const available = Object.keys(signals);
      throw new Error(
        `${SIGNALS_ID}: signal "${name}" (${where}) is not produced by the environment at seat ${transition.seat}, turn ${transition.turn}; ` +
          `available signals: ${available.length ? available.join(', ') : '(none)'}`,
      );
    }
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new Error(
        `${SIGNALS_ID}: signal "${name}" (${where}) is ${String(value)} at seat ${transition.seat}, turn ${transition.turn}; it must be a finite number`,
      );
    }
    return value;
  }

  /** {@inheritDoc RewardFunction.terms} */
  terms(transition: Transition): Record<string, number> {
    const team = this.read(transition, this.config.team, 'rewards.config.team');
    const localName = this.localSignal(transition.seat);
    const where =
      this.config.seats[transition.seat]?.local !== undefined
        ? `rewards.seats.${transition.seat}.config.local`
        : 'rewards.config.local';
    const local = localName === undefined ? 0 : this.read(transition, localName, where);
    return { team, local };
  }
}

/** The config schema file, read once. */
export const SIGNALS_CONFIG_SCHEMA: JsonSchema = readConfigSchema(
  new URL('../schemas/signals.config.json', import.meta.url),
);

/** The `signals-v0` contribution. */
@injectable()
export class SignalsRewardContribution implements RewardContribution {
  /** {@inheritDoc RewardContribution.id} */
  readonly id = SIGNALS_ID;
  /** {@inheritDoc RewardContribution.description} */
  readonly description = 'Reward terms team and local read from named environment signals, per seat';
  /** {@inheritDoc RewardContribution.terms} */
  readonly terms = SIGNALS_TERMS;
  /** {@inheritDoc RewardContribution.configSchema} */
  readonly configSchema = SIGNALS_CONFIG_SCHEMA;
  /**
   * Builds the reward function. `config` is `rewards.config` plus `seats: { <seat>: rewards.seats.<seat>.config }`,
   * e.g. `create({ team: 'executed_reward', seats: { proposer: { local: 'proposal_reward' } } })`.
   */
  create(config: Record<string, unknown>): SignalsReward {
    return new SignalsReward(config);
  }

  /** Checks that every signal the config names is one the environment declares, and every seat exists. */
  check(config: Record<string, unknown>, context: RewardCheckContext): readonly ConfigProblem[] {
    let resolved: SignalsConfig;
    try {
      resolved = resolveSignalsConfig(config);
    } catch (err) {
      return [{ path: [], message: err instanceof Error ? err.message : String(err) }];
    }
    return signalProblems(resolved, context);
  }
}
