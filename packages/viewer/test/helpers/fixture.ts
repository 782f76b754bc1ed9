/** The fixture run's raw records, read independently of the viewer's index, for the expected values of the tests. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TraceLine } from '../../src/index.js';

export const FIXTURE_RUN = join(import.meta.dirname, '..', 'fixtures', 'run');

/** Every record of a trace of the fixture run. */
export function fixtureRecords(name = 'trace.jsonl'): TraceLine[] {
  return readFileSync(join(FIXTURE_RUN, name), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as TraceLine);
}

/** metrics.jsonl of the fixture run. */
export function fixtureMetrics(): Record<string, unknown>[] {
  return readFileSync(join(FIXTURE_RUN, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Records grouped by (step, episode, turn, seat), in file order. */
export function rawGroups(records: readonly TraceLine[]): TraceLine[][] {
  const out = new Map<string, TraceLine[]>();
  for (const r of records) {
    const key = `${r.step}|${r.episodeId}|${r.turn}|${r.seat}`;
    if (!out.has(key)) out.set(key, []);
    out.get(key)!.push(r);
  }
  return [...out.values()];
}

/** Whether each episode (step|episodeId) ended solved: the success of its last selected record. */
export function rawOutcomes(records: readonly TraceLine[]): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const r of records) if (r.selected) out.set(`${r.step}|${r.episodeId}`, r.success);
  return out;
}
