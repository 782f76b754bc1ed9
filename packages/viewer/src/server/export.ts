/** `troupe view RUN --export FILE.html`: one self-contained page (the app, its styles and the run's data inlined). */
import { writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { episodeKey, type Snapshot, type TraceSnapshot } from '../common/snapshot.js';
import type { TraceLine } from '../common/types.js';
import { readAppAssets, renderPage, type AppAssets } from './assets.js';
import { RunFolder } from './run-folder.js';

/** Options of {@link exportRun}. */
export interface ExportOptions {
  /** Bytes of trace records inlined, all traces together (episodes past it keep their groups, not their text). Default 64 MiB. */
  readonly maxEpisodeBytes?: number;
  readonly assets?: AppAssets;
}

/** What {@link exportRun} wrote. */
export interface ExportResult {
  readonly file: string;
  readonly bytes: number;
  readonly episodes: number;
  readonly omittedEpisodes: number;
}

/** Builds the snapshot of a run: the overview, every group and outcome, and episodes up to the byte budget. */
export async function snapshotRun(run: RunFolder, maxEpisodeBytes = 64 << 20): Promise<Snapshot> {
  const traces: Record<string, TraceSnapshot> = {};
  let budget = maxEpisodeBytes;
  for (const name of run.traceNames()) {
    const t = await run.trace(name);
    await t.settle();
    const episodes: Record<string, TraceLine[]> = {};
    let omitted = 0;
    for (const { episodeId, step } of t.episodeIds()) {
      if (budget <= 0) {
        omitted++;
        continue;
      }
      const records = (await t.episode(episodeId, step))!;
      budget -= records.reduce((n, r) => n + JSON.stringify(r).length, 0);
      episodes[episodeKey(step, episodeId)] = records;
    }
    traces[name] = { groups: t.groups, outcomes: t.outcomes(), episodes, omittedEpisodes: omitted };
  }
  return { overview: await run.overview(), traces };
}

/** Writes the self-contained page of a run (or trace file) to `file`. */
export async function exportRun(path: string, file: string, options: ExportOptions = {}): Promise<ExportResult> {
  const run = new RunFolder(path);
  const assets = options.assets ?? readAppAssets();
  const snapshot = await snapshotRun(run, options.maxEpisodeBytes);
  const html = renderPage(snapshot.overview.name || basename(run.dir), { assets, snapshot });
  writeFileSync(file, html);
  const all = Object.values(snapshot.traces);
  return {
    file,
    bytes: Buffer.byteLength(html),
    episodes: all.reduce((n, t) => n + Object.keys(t.episodes).length, 0),
    omittedEpisodes: all.reduce((n, t) => n + t.omittedEpisodes, 0),
  };
}
