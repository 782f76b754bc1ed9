/**
 * Where the app's data comes from: the viewer's HTTP API (`troupe view`), or the snapshot an exported page inlines
 * (`troupe view --export`), answered in the page by the same query functions the server runs.
 */
import { compareOutcomes, creditCells, queryGroups, stepSummaries } from '../src/common/queries.js';
import { episodeKey, type Snapshot } from '../src/common/snapshot.js';
import type {
  Comparison,
  CreditCell,
  GroupPage,
  GroupQuery,
  Overview,
  StepSummary,
  TraceLine,
} from '../src/common/types.js';

/** The queries the views make. */
export interface DataSource {
  /** True for a live server (the page polls it), false for an exported snapshot. */
  readonly live: boolean;
  overview(): Promise<Overview>;
  /** A fingerprint of the run's files that changes when the run writes (a snapshot never changes). */
  status(): Promise<string>;
  steps(trace: string): Promise<StepSummary[]>;
  groups(trace: string, q: GroupQuery): Promise<GroupPage>;
  credit(trace: string, step?: number): Promise<CreditCell[]>;
  /** An episode's records; null when an export left it out. */
  episode(trace: string, id: string, step: number | null): Promise<TraceLine[] | null>;
  compare(a: string, b: string): Promise<Comparison>;
}

/** The API of `troupe view`. */
export class HttpSource implements DataSource {
  readonly live = true;

  private async get<T>(path: string, params: Record<string, string | number | boolean | null | undefined>): Promise<T> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) qs.set(k, String(v));
    const res = await fetch(`api/${path}?${qs}`);
    const body = (await res.json()) as T & { error?: string };
    if (!res.ok) throw new Error(body.error ?? `${res.status} ${res.statusText}`);
    return body;
  }

  overview(): Promise<Overview> {
    return this.get('overview', {});
  }
  async status(): Promise<string> {
    return JSON.stringify(await this.get('status', {}));
  }
  steps(trace: string): Promise<StepSummary[]> {
    return this.get('steps', { trace });
  }
  groups(trace: string, q: GroupQuery): Promise<GroupPage> {
    return this.get('groups', { trace, ...q });
  }
  credit(trace: string, step?: number): Promise<CreditCell[]> {
    return this.get('credit', { trace, step });
  }
  async episode(trace: string, id: string, step: number | null): Promise<TraceLine[] | null> {
    return this.get('episode', { trace, id, step });
  }
  compare(a: string, b: string): Promise<Comparison> {
    return this.get('compare', { a, b });
  }
}

/** An exported page's inlined snapshot. */
export class SnapshotSource implements DataSource {
  readonly live = false;

  constructor(private readonly snap: Snapshot) {}

  private trace(name: string) {
    const t = this.snap.traces[name];
    if (!t) throw new Error(`trace ${name}: not in this export`);
    return t;
  }

  async overview(): Promise<Overview> {
    return this.snap.overview;
  }
  async status(): Promise<string> {
    return '';
  }
  async steps(trace: string): Promise<StepSummary[]> {
    const t = this.trace(trace);
    return stepSummaries(t.groups, t.outcomes);
  }
  async groups(trace: string, q: GroupQuery): Promise<GroupPage> {
    const t = this.trace(trace);
    const evalTrace = t.groups.every((g) => g.step === null);
    return queryGroups(t.groups, evalTrace ? { ...q, step: q.step === undefined ? undefined : null } : q);
  }
  async credit(trace: string, step?: number): Promise<CreditCell[]> {
    return creditCells(this.trace(trace).groups, step);
  }
  async episode(trace: string, id: string, step: number | null): Promise<TraceLine[] | null> {
    const t = this.trace(trace);
    const evalTrace = t.groups.every((g) => g.step === null);
    return (t.episodes[episodeKey(evalTrace ? null : step, id)] as TraceLine[] | undefined) ?? null;
  }
  async compare(a: string, b: string): Promise<Comparison> {
    return compareOutcomes(a, this.trace(a).outcomes, b, this.trace(b).outcomes);
  }
}

/** The snapshot inlined in the page, if any. */
export function pageSource(): DataSource {
  const el = document.getElementById('troupe-snapshot');
  return el?.textContent ? new SnapshotSource(JSON.parse(el.textContent) as Snapshot) : new HttpSource();
}
