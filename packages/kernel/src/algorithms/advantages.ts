/**
 * Group-relative advantages (GRPO family), as pure functions over samples.
 *
 * AT-GRPO groups samples by exactly (instance uid, turn, seat): the K branches sampled from ONE prompt. Instances,
 * seats and turns are never merged (defect 4 of the official code pooled K problems into one group).
 *
 *   A^c = (r^c − mean_g) / (std_g + ε)      std 'unbiased' (n − 1) or 'biased' (n); ε = 1e-6
 *   A^c =  r^c − mean_g                     'dr-grpo' (no std division)
 *   a group of one sample gets A = 0.
 */

/** What grouping needs from a sample. */
export interface GroupableSample {
  /** Unique id of the task instance. */
  readonly instanceUid: string;
  /** Turn index. */
  readonly turn: number;
  /** Seat name. */
  readonly seat: string;
  /** Mixed reward of the sample. */
  readonly reward: number;
}

/** How rewards are normalised within a group. */
export type AdvantageNormalization = 'unbiased' | 'biased' | 'dr-grpo';

/** Options of the advantage computation. */
export interface AdvantageOptions {
  /** 'unbiased' (divide by the n − 1 standard deviation, the default), 'biased' (n), or 'dr-grpo' (no division). */
  readonly std?: AdvantageNormalization;
  /** Added to the standard deviation before dividing. Default 1e-6. */
  readonly epsilon?: number;
}

/** One group of samples, with the indices of its members in the input array. */
export interface SampleGroupOf<T> {
  /** Canonical key (see {@link atGroupKey} / {@link trajectoryGroupKey}). */
  readonly key: string;
  /** Instance uid shared by the members. */
  readonly instanceUid: string;
  /** Turn shared by the members (AT-GRPO groups only; `null` for trajectory groups). */
  readonly turn: number | null;
  /** Seat shared by the members (AT-GRPO groups only; `null` for trajectory groups). */
  readonly seat: string | null;
  /** The members, in input order. */
  readonly members: readonly T[];
  /** Indices of the members in the input array. */
  readonly indices: readonly number[];
}

/** Statistics of one group. */
export interface GroupStats {
  /** The group key. */
  readonly key: string;
  /** Number of samples. */
  readonly size: number;
  /** Mean reward. */
  readonly mean: number;
  /** Standard deviation of the rewards (n − 1 for 'unbiased', n otherwise; 0 for groups of one or equal rewards). */
  readonly std: number;
  /** Whether all rewards are equal (the group carries no learning signal; groups of one count). */
  readonly zeroVariance: boolean;
}

/** Result of an advantage computation. */
export interface AdvantageResult {
  /** One advantage per input sample, aligned with the input. */
  readonly advantages: number[];
  /** Per-group statistics, in order of first appearance. */
  readonly groups: GroupStats[];
  /** Number of groups whose rewards are all equal (groups of one included). */
  readonly zeroVarianceGroups: number;
  /** Number of groups with a single sample. */
  readonly singletonGroups: number;
  /** zeroVarianceGroups / number of groups (0 when there are no groups): the share of groups with no signal. */
  readonly zeroVarianceFraction: number;
}

/** The AT-GRPO group key of a sample: exactly (instance uid, turn, seat). */
export function atGroupKey(sample: Pick<GroupableSample, 'instanceUid' | 'turn' | 'seat'>): string {
  return JSON.stringify([sample.instanceUid, sample.turn, sample.seat]);
}

/** The trajectory-level (grpo-naive) group key of a sample: the instance uid alone. */
export function trajectoryGroupKey(sample: Pick<GroupableSample, 'instanceUid'>): string {
  return JSON.stringify([sample.instanceUid]);
}

/** Groups samples by exactly (instance uid, turn, seat), in order of first appearance. */
export function groupByTurnSeat<T extends GroupableSample>(samples: readonly T[]): SampleGroupOf<T>[] {
  return groupBy(samples, atGroupKey, (s) => ({ instanceUid: s.instanceUid, turn: s.turn, seat: s.seat }));
}

/**
 * Advantages of one group's rewards, in order. A group of one gets [0].
 * Throws on a non-finite reward (it would poison every advantage of the group).
 */
export function groupAdvantages(rewards: readonly number[], options: AdvantageOptions = {}): number[] {
  return groupAdvantagesWithStats(rewards, options).advantages;
}

/**
 * AT-GRPO advantages: samples grouped by (instance uid, turn, seat), normalised within each group. Also reports the
 * fraction of zero-variance groups (which carry no learning signal).
 */
export function computeAdvantages<T extends GroupableSample>(
  samples: readonly T[],
  options: AdvantageOptions = {},
): AdvantageResult {
  return advantagesOver(samples, groupByTurnSeat(samples), options);
}

/** Options of the trajectory-level (grpo-naive) grouping. */
export interface TrajectoryGroupingOptions {
  /**
   * Keep only the samples of each episode's last turn (the grpo-naive baseline trains on those). Default true.
   * Needs `episodeId` on the samples to find each episode's last turn; without it the instance's last turn is used.
   */
  readonly lastTurnOnly?: boolean;
}

/** A sample as the trajectory grouping sees it (episodeId tells the K rollouts of one instance apart). */
export interface TrajectorySample extends GroupableSample {
  /** Id of the episode the sample belongs to. */
  readonly episodeId?: string;
}

/**
 * The grpo-naive baseline's grouping: ONE group per instance over all its episodes, seats and turns (the
 * identical-prompt assumption of GRPO is broken on purpose). With `lastTurnOnly` (default) only each episode's last
 * turn's samples are kept.
 */
export function groupByTrajectory<T extends TrajectorySample>(
  samples: readonly T[],
  options: TrajectoryGroupingOptions = {},
): SampleGroupOf<T>[] {
  const keep = trajectoryMask(samples, options);
  const groups = groupBy(
    samples,
    trajectoryGroupKey,
    (s) => ({ instanceUid: s.instanceUid, turn: null, seat: null }),
    keep,
  );
  return groups;
}

/** Result of the trajectory-level computation: `null` marks samples that are not trained on. */
export interface TrajectoryAdvantageResult extends Omit<AdvantageResult, 'advantages'> {
  /** One entry per input sample: its advantage, or null when the sample is left out (not in its episode's last turn). */
  readonly advantages: (number | null)[];
}

/**
 * grpo-naive advantages: each sample's reward normalised over all kept samples of its instance (see
 * {@link groupByTrajectory}); samples that are left out get `null`.
 */
export function computeTrajectoryAdvantages<T extends TrajectorySample>(
  samples: readonly T[],
  options: AdvantageOptions & TrajectoryGroupingOptions = {},
): TrajectoryAdvantageResult {
  const groups = groupByTrajectory(samples, options);
  const result = advantagesOver(samples, groups, options);
  const advantages: (number | null)[] = samples.map(() => null);
  for (const g of groups) for (const i of g.indices) advantages[i] = result.advantages[i]!;
  return { ...result, advantages };
}

function trajectoryMask<T extends TrajectorySample>(
  samples: readonly T[],
  options: TrajectoryGroupingOptions,
): boolean[] {
  if (options.lastTurnOnly === false) return samples.map(() => true);
  const lastTurn = new Map<string, number>();
  const episodeOf = (s: T): string => JSON.stringify([s.instanceUid, s.episodeId ?? null]);
  for (const s of samples) lastTurn.set(episodeOf(s), Math.max(lastTurn.get(episodeOf(s)) ?? -Infinity, s.turn));
  return samples.map((s) => s.turn === lastTurn.get(episodeOf(s)));
}

function groupBy<T>(
  samples: readonly T[],
  keyOf: (s: T) => string,
  fields: (s: T) => { instanceUid: string; turn: number | null; seat: string | null },
  keep?: readonly boolean[],
): SampleGroupOf<T>[] {
  const byKey = new Map<
    string,
    { key: string; instanceUid: string; turn: number | null; seat: string | null; members: T[]; indices: number[] }
  >();
  samples.forEach((s, i) => {
    if (keep && !keep[i]) return;
    const key = keyOf(s);
    let g = byKey.get(key);
    if (!g) byKey.set(key, (g = { key, ...fields(s), members: [], indices: [] }));
    g.members.push(s);
    g.indices.push(i);
  });
  return [...byKey.values()];
}

function advantagesOver<T extends GroupableSample>(
  samples: readonly T[],
  groups: readonly SampleGroupOf<T>[],
  options: AdvantageOptions,
): AdvantageResult {
  const advantages = samples.map(() => 0);
  const stats: GroupStats[] = [];
  let zero = 0;
  let singles = 0;
  for (const g of groups) {
    const r = groupAdvantagesWithStats(
      g.members.map((m) => m.reward),
      options,
      g.key,
    );
    g.indices.forEach((idx, j) => (advantages[idx] = r.advantages[j]!));
    stats.push({ key: g.key, size: g.members.length, mean: r.mean, std: r.std, zeroVariance: r.zeroVariance });
    if (r.zeroVariance) zero++;
    if (g.members.length === 1) singles++;
  }
  return {
    advantages,
    groups: stats,
    zeroVarianceGroups: zero,
    singletonGroups: singles,
    zeroVarianceFraction: groups.length === 0 ? 0 : zero / groups.length,
  };
}

function groupAdvantagesWithStats(
  rewards: readonly number[],
  options: AdvantageOptions,
  key = 'group',
): { advantages: number[]; mean: number; std: number; zeroVariance: boolean } {
  const mode = options.std ?? 'unbiased';
  const eps = options.epsilon ?? 1e-6;
  if (mode !== 'unbiased' && mode !== 'biased' && mode !== 'dr-grpo') {
    throw new Error(`advantages: std must be 'unbiased', 'biased' or 'dr-grpo', got '${String(mode)}'.`);
  }
  if (!(eps >= 0) || !Number.isFinite(eps))
    throw new Error(`advantages: epsilon must be a finite number >= 0, got ${String(eps)}.`);
  rewards.forEach((r, i) => {
    if (typeof r !== 'number' || !Number.isFinite(r))
      throw new Error(`advantages: reward ${i} of group ${key} is ${String(r)}; rewards must be finite.`);
  });
  const n = rewards.length;
  if (n === 0) return { advantages: [], mean: 0, std: 0, zeroVariance: true };
  const mean = rewards.reduce((a, b) => a + b, 0) / n;
  const zeroVariance = rewards.every((r) => r === rewards[0]);
  if (n === 1) return { advantages: [0], mean, std: 0, zeroVariance: true };
  const ss = rewards.reduce((a, r) => a + (r - mean) * (r - mean), 0);
  const std = Math.sqrt(ss / (mode === 'unbiased' ? n - 1 : n));
  if (zeroVariance) return { advantages: rewards.map(() => 0), mean, std: 0, zeroVariance };
  const advantages = mode === 'dr-grpo' ? rewards.map((r) => r - mean) : rewards.map((r) => (r - mean) / (std + eps));
  return { advantages, mean, std, zeroVariance };
}
