/**
 * The viewer's queries over group summaries and episode outcomes. The server answers the API with them and an
 * exported snapshot runs the very same functions in the page.
 */
import type {
  Comparison,
  CreditCell,
  EpisodeOutcome,
  GroupPage,
  GroupQuery,
  GroupSummary,
  PairedEpisode,
  StepSummary,
} from './types.js';

const mean = (xs: readonly number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

/** Mean reward of a group. */
export const meanReward = (g: GroupSummary): number => mean(g.rewards);

/** Largest |advantage| of a group (0 without advantages). */
export const maxAbsAdvantage = (g: GroupSummary): number =>
  g.advantages.reduce<number>((m, a) => (a === null ? m : Math.max(m, Math.abs(a))), 0);

const SORT_KEYS: Record<NonNullable<GroupQuery['sort']>, (g: GroupSummary) => number | string> = {
  id: (g) => g.id,
  spread: (g) => g.spread,
  meanReward,
  maxAbsAdvantage,
  turn: (g) => g.turn,
  seat: (g) => g.seat,
};

/** The groups that pass the query's filters, in its order, one page of them. */
export function queryGroups(groups: readonly GroupSummary[], q: GroupQuery): GroupPage {
  const rows = groups.filter(
    (g) =>
      (q.step === undefined || g.step === q.step) &&
      (q.seat === undefined || g.seat === q.seat) &&
      (q.turn === undefined || g.turn === q.turn) &&
      (q.failed === undefined || g.episodeSuccess !== q.failed) &&
      (q.malformed === undefined || g.malformed > 0 === q.malformed) &&
      (q.zeroVariance === undefined || g.zeroVariance === q.zeroVariance),
  );
  const key = SORT_KEYS[q.sort ?? 'id'];
  const sign = q.desc ? -1 : 1;
  if (q.sort && q.sort !== 'id')
    rows.sort((x, y) => {
      const a = key(x),
        b = key(y);
      return (a < b ? -1 : a > b ? 1 : x.id - y.id) * sign;
    });
  else if (q.desc) rows.reverse();
  const offset = q.offset ?? 0;
  return { total: rows.length, offset, rows: rows.slice(offset, offset + (q.limit ?? 100)) };
}

/** Per-step figures from a trace's groups and episode outcomes. */
export function stepSummaries(groups: readonly GroupSummary[], outcomes: readonly EpisodeOutcome[]): StepSummary[] {
  const by = new Map<
    number | null,
    { records: number; groups: number; zero: number; malformed: number; episodes: number; solved: number }
  >();
  const at = (step: number | null) => {
    let s = by.get(step);
    if (!s) by.set(step, (s = { records: 0, groups: 0, zero: 0, malformed: 0, episodes: 0, solved: 0 }));
    return s;
  };
  for (const g of groups) {
    const s = at(g.step);
    s.groups++;
    s.records += g.rewards.length;
    s.malformed += g.malformed;
    if (g.zeroVariance) s.zero++;
  }
  for (const e of outcomes) {
    const s = at(e.step);
    s.episodes++;
    if (e.success) s.solved++;
  }
  return [...by.entries()]
    .sort(([a], [b]) => (a ?? -1) - (b ?? -1))
    .map(([step, s]) => ({
      step,
      records: s.records,
      groups: s.groups,
      episodes: s.episodes,
      successRate: s.episodes ? s.solved / s.episodes : 0,
      zeroVarianceShare: s.groups ? s.zero / s.groups : 0,
      malformedShare: s.records ? s.malformed / s.records : 0,
    }));
}

/** Credit diagnostics per (seat, turn): zero-variance share, mean |advantage|, reward and reward-term means. */
export function creditCells(groups: readonly GroupSummary[], step?: number | null): CreditCell[] {
  const cells = new Map<
    string,
    {
      seat: string;
      turn: number;
      groups: number;
      zero: number;
      absAdv: number;
      advN: number;
      rewards: number;
      n: number;
      terms: Map<string, number>;
    }
  >();
  for (const g of groups) {
    if (step !== undefined && g.step !== step) continue;
    const key = `${g.seat}\u0000${g.turn}`;
    let c = cells.get(key);
    if (!c)
      cells.set(
        key,
        (c = {
          seat: g.seat,
          turn: g.turn,
          groups: 0,
          zero: 0,
          absAdv: 0,
          advN: 0,
          rewards: 0,
          n: 0,
          terms: new Map(),
        }),
      );
    c.groups++;
    if (g.zeroVariance) c.zero++;
    for (const a of g.advantages)
      if (a !== null) {
        c.absAdv += Math.abs(a);
        c.advN++;
      }
    for (const r of g.rewards) c.rewards += r;
    c.n += g.rewards.length;
    for (const [t, v] of Object.entries(g.termMeans)) c.terms.set(t, (c.terms.get(t) ?? 0) + v);
  }
  return [...cells.values()]
    .sort((x, y) => (x.seat < y.seat ? -1 : x.seat > y.seat ? 1 : x.turn - y.turn))
    .map((c) => ({
      seat: c.seat,
      turn: c.turn,
      groups: c.groups,
      zeroVarianceShare: c.zero / c.groups,
      meanAbsAdvantage: c.advN ? c.absAdv / c.advN : null,
      meanReward: c.n ? c.rewards / c.n : 0,
      termMeans: Object.fromEntries([...c.terms].map(([t, v]) => [t, v / c.groups])),
    }));
}

/** Exact two-sided McNemar p: a binomial test of `gained` against `lost` at p = 1/2. */
export function mcnemarExact(gained: number, lost: number): number {
  const n = gained + lost;
  if (n === 0) return 1;
  const k = Math.min(gained, lost);
  let logC = 0;
  let tail = 0;
  for (let i = 0; i <= k; i++) {
    if (i > 0) logC += Math.log(n - i + 1) - Math.log(i);
    tail += Math.exp(logC - n * Math.LN2);
  }
  return Math.min(1, 2 * tail);
}

/** Pairs two traces' episodes by instance uid: gained, lost, and the first turn where the selected paths part. */
export function compareOutcomes(
  aName: string,
  a: readonly EpisodeOutcome[],
  bName: string,
  b: readonly EpisodeOutcome[],
): Comparison {
  const byUid = (xs: readonly EpisodeOutcome[]) => new Map(xs.map((e) => [e.instanceUid, e]));
  const ma = byUid(a),
    mb = byUid(b);
  const uids = [...new Set([...ma.keys(), ...mb.keys()])];
  let gained = 0,
    lost = 0,
    paired = 0,
    successA = 0,
    successB = 0;
  const rows: PairedEpisode[] = uids.map((uid) => {
    const x = ma.get(uid),
      y = mb.get(uid);
    if (!x || !y) {
      return {
        instanceUid: uid,
        a: x ? { episodeId: x.episodeId, success: x.success } : null,
        b: y ? { episodeId: y.episodeId, success: y.success } : null,
        status: 'unpaired',
        parts: null,
      };
    }
    paired++;
    if (x.success) successA++;
    if (y.success) successB++;
    const status = x.success === y.success ? (x.success ? 'both' : 'neither') : y.success ? 'gained' : 'lost';
    if (status === 'gained') gained++;
    if (status === 'lost') lost++;
    let parts: PairedEpisode['parts'] = null;
    const n = Math.max(x.path.length, y.path.length);
    for (let i = 0; i < n; i++) {
      const p = x.path[i],
        q = y.path[i];
      if (!p || !q || p.hash !== q.hash || p.seat !== q.seat) {
        parts = { turn: (p ?? q)!.turn, seat: (p ?? q)!.seat };
        break;
      }
    }
    return {
      instanceUid: uid,
      a: { episodeId: x.episodeId, success: x.success },
      b: { episodeId: y.episodeId, success: y.success },
      status,
      parts,
    };
  });
  return { a: aName, b: bName, paired, successA, successB, gained, lost, pValue: mcnemarExact(gained, lost), rows };
}

/** FNV-1a hash of a string (32 bits), to compare completions without keeping them. */
export function hashText(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
