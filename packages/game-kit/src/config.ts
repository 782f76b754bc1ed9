/**
 * Config reading for proposer/executor games: the keys every such game has (turns, reward and observation variants,
 * seats, split fractions), their defaults, and a reader whose checks throw an error naming the environment, the key
 * path (`environment.config.KEY`) and the allowed values.
 */
import type { JsonSchema, SplitFractions } from '@troupe/kernel';
import { DEFAULT_SPLIT_FRACTIONS } from '@troupe/kernel';

/** A seat name of a proposer/executor game. */
export type SeatName = 'proposer' | 'executor';

/** The two-seat team, in turn order. */
export const TEAM_SEATS: readonly SeatName[] = Object.freeze(['proposer', 'executor'] as const);

/** The single-agent baseline: the executor plays alone, with no proposal. */
export const SOLO_SEATS: readonly SeatName[] = Object.freeze(['executor'] as const);

/** The seat lists `config.seats` accepts: the team, or the executor alone. */
export const SEAT_LISTS: readonly (readonly SeatName[])[] = Object.freeze([TEAM_SEATS, SOLO_SEATS]);

/** Reward variants: `shaped` (per-step shaping) or `sparse` (1 on success, else 0). */
export type RewardKind = 'shaped' | 'sparse';

/**
 * Observation variants: `full` (sentences, coordinates, pictures with row/column numbers) or `compact` (for tiny
 * byte-level models, where every character is a token: terse state and context lines).
 */
export type ObservationKind = 'full' | 'compact';

/** The config keys every proposer/executor game has. */
export interface GameConfig {
  /** Maximum number of turns T (each turn: proposer, then executor). */
  readonly maxTurns: number;
  /** Reward variant. */
  readonly reward: RewardKind;
  /** Observation text variant. */
  readonly observation: ObservationKind;
  /** The seats, in turn order: {@link TEAM_SEATS} or {@link SOLO_SEATS}. */
  readonly seats: readonly SeatName[];
  /** Fractions of the content-hash space per split. */
  readonly splitFractions: SplitFractions;
}

/** The defaults of {@link GameConfig}: 4 turns, shaped reward, full observation, the team, 0.8 / 0.1 / 0.1. */
export const GAME_CONFIG_DEFAULTS: GameConfig = Object.freeze({
  maxTurns: 4,
  reward: 'shaped',
  observation: 'full',
  seats: TEAM_SEATS,
  splitFractions: DEFAULT_SPLIT_FRACTIONS,
});

/**
 * The `default` of each property of a config schema (`undefined` where it has none): the defaults a
 * {@link ConfigReader} fills, so that the schema file states them once.
 */
export function schemaDefaults(schema: JsonSchema): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, { readonly default?: unknown }>;
  return Object.fromEntries(Object.entries(properties).map(([key, property]) => [key, property.default]));
}

/** `"a" or "b"`, `"a", "b" or "c"`: allowed values for an error message. */
function alternatives(values: readonly unknown[]): string {
  const quoted = values.map((v) => JSON.stringify(v));
  return quoted.length < 2 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}

/**
 * Reads a raw config over its defaults. The constructor rejects unknown keys; each reading method checks one key and
 * returns its value, or throws `ID: SECTION.KEY must be …, got …` (SECTION: `environment.config` by default,
 * `roleConfig` for a role). The kernel validates against the JSON schema first; the reader keeps direct users of a
 * constructor safe too.
 */
export class ConfigReader {
  private readonly values: Record<string, unknown>;

  /** Merges `raw` over `defaults`; throws on a key `defaults` does not have (a key may default to `undefined`). */
  constructor(
    readonly id: string,
    defaults: object,
    raw: Record<string, unknown> = {},
    readonly section = 'environment.config',
  ) {
    const known = Object.keys(defaults);
    for (const key of Object.keys(raw)) {
      if (!known.includes(key)) this.fail(key, `is not a known key; known keys: ${known.join(', ')}`);
    }
    this.values = { ...defaults, ...raw };
  }

  /** Throws the error for `key`. */
  fail(key: string, message: string): never {
    throw new Error(`${this.id}: ${this.section}.${key} ${message}`);
  }

  /** The raw value of `key` (default filled), unchecked. */
  raw(key: string): unknown {
    return this.values[key];
  }

  /** An integer from `min` to `max`. */
  integer(key: string, min: number, max: number): number {
    const v = this.values[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
      this.fail(key, `must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
    return v;
  }

  /** A number from `min` to `max`. */
  number(key: string, min: number, max: number): number {
    const v = this.values[key];
    if (typeof v !== 'number' || !(v >= min && v <= max))
      this.fail(key, `must be a number from ${min} to ${max}, got ${JSON.stringify(v)}`);
    return v;
  }

  /** A finite number, at least `min` when given. */
  finite(key: string, min = -Infinity): number {
    const v = this.values[key];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min)
      this.fail(key, `must be a finite number${min > -Infinity ? ` ≥ ${min}` : ''}, got ${JSON.stringify(v)}`);
    return v;
  }

  /** A boolean. */
  boolean(key: string): boolean {
    const v = this.values[key];
    if (typeof v !== 'boolean') this.fail(key, `must be a boolean, got ${JSON.stringify(v)}`);
    return v;
  }

  /** A string, or `undefined` when absent: `{ [key]: value }` or `{}`, to spread into a config. */
  optionalString<K extends string>(key: K): { readonly [P in K]?: string } {
    const v = this.values[key];
    if (v !== undefined && typeof v !== 'string') this.fail(key, `must be a string, got ${JSON.stringify(v)}`);
    return (v === undefined ? {} : { [key]: v }) as { readonly [P in K]?: string };
  }

  /** One of `values` (compared with `===`). */
  oneOf<T>(key: string, values: readonly T[]): T {
    const v = this.values[key];
    if (!values.includes(v as T)) this.fail(key, `must be ${alternatives(values)}, got ${JSON.stringify(v)}`);
    return v as T;
  }

  /** `seats`: one of {@link SEAT_LISTS}, returned as the shared frozen list. */
  seats(): readonly SeatName[] {
    const v = this.values.seats;
    const match = SEAT_LISTS.find(
      (list) => Array.isArray(v) && v.length === list.length && list.every((s, i) => v[i] === s),
    );
    if (!match)
      this.fail(
        'seats',
        `must be ["proposer", "executor"] (the team) or ["executor"] (single agent), got ${JSON.stringify(v)}`,
      );
    return match;
  }

  /** `splitFractions`: train, validation and test, each from 0 to 1, adding up to 1. */
  splitFractions(): SplitFractions {
    const f = this.values.splitFractions as Record<string, unknown> | undefined;
    const fractions = { train: f?.train, validation: f?.validation, test: f?.test };
    for (const [k, v] of Object.entries(fractions)) {
      if (typeof v !== 'number' || !(v >= 0 && v <= 1))
        this.fail(`splitFractions.${k}`, `must be a number from 0 to 1, got ${JSON.stringify(v)}`);
    }
    const sum = (fractions.train as number) + (fractions.validation as number) + (fractions.test as number);
    if (Math.abs(sum - 1) > 1e-9) this.fail('splitFractions', `must add up to 1, got ${sum}`);
    return Object.freeze(fractions) as SplitFractions;
  }

  /** The {@link GameConfig} keys, checked: maxTurns 1..50, reward, observation, seats, splitFractions. */
  game(): GameConfig {
    return {
      maxTurns: this.integer('maxTurns', 1, 50),
      reward: this.oneOf('reward', ['shaped', 'sparse'] as const),
      observation: this.oneOf('observation', ['full', 'compact'] as const),
      seats: this.seats(),
      splitFractions: this.splitFractions(),
    };
  }
}
