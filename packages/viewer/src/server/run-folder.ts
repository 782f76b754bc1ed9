/**
 * A run folder as the viewer reads it: `troupe train --out` (trace.jsonl, metrics.jsonl, report.md,
 * baseline-eval.json, checkpoints/step-N/trainer-state.json, checkpoints/best.json, spec.yaml when an experiment wrote
 * one) and any further rollout traces (`troupe eval --trace`) in it or in its evals/ folder. A single trace file is a
 * run of its own.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { loadTeamSpec } from '@troupe/kernel';
import type { CheckpointInfo, Overview } from '../common/types.js';
import { TraceIndex, TraceFileError } from './trace-index.js';

/** A run folder that cannot be viewed; the message names the path and what to do. */
export class RunFolderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RunFolderError';
  }
}

/** How long the overview and the status wait for trace indexing before they answer with what is indexed. */
export const OVERVIEW_BUDGET_MS = 250;

/** step-2 before step-10. */
const natural = (a: string, b: string): number => a.localeCompare(b, 'en', { numeric: true });

/** Files of a run folder that are not rollout traces. */
const NOT_TRACES = new Set(['metrics.jsonl']);

/** Reads a JSON file, or undefined when it is missing or not JSON. */
function readJson(file: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The run folder being viewed, its trace indexes and its small files (re-read on each overview: they are small). */
export class RunFolder {
  /** The folder (a lone trace file's folder). */
  readonly dir: string;
  private readonly traces = new Map<string, TraceIndex>();
  private readonly only: string | undefined;
  private mixCache: { text: string; mix: Overview['mix'] } | undefined;

  /**
   * @param path A run folder or one trace file.
   * @throws RunFolderError when the path does not exist or holds neither a trace nor metrics.jsonl.
   */
  constructor(path: string) {
    const abs = resolve(path);
    if (!existsSync(abs))
      throw new RunFolderError(
        `${path}: no such file or folder; pass a run folder (troupe train --out) or a trace file (troupe eval --trace)`,
      );
    if (statSync(abs).isFile()) {
      if (!abs.endsWith('.jsonl'))
        throw new RunFolderError(
          `${path}: not a .jsonl trace; pass a run folder (troupe train --out) or a trace file (troupe eval --trace)`,
        );
      this.dir = dirname(abs);
      this.only = basename(abs);
    } else {
      this.dir = abs;
      if (this.traceNames().length === 0 && !existsSync(join(abs, 'metrics.jsonl'))) {
        throw new RunFolderError(
          `${path}: not a run folder (no trace.jsonl, metrics.jsonl or evals/*.jsonl in it); pass the --out folder of troupe train, or a trace file written by troupe eval --trace`,
        );
      }
    }
  }

  /** Names (paths relative to the folder) of its trace files: trace.jsonl first, then other *.jsonl, then evals/. */
  traceNames(): string[] {
    if (this.only) return [this.only];
    const list = (dir: string): string[] =>
      existsSync(dir)
        ? readdirSync(dir)
            .filter((f) => f.endsWith('.jsonl') && !NOT_TRACES.has(f))
            .sort(natural)
        : [];
    const root = list(this.dir);
    const evals = list(join(this.dir, 'evals')).map((f) => `evals/${f}`);
    return [...root.filter((f) => f === 'trace.jsonl'), ...root.filter((f) => f !== 'trace.jsonl'), ...evals];
  }

  /** The index of one trace, brought up to date with the file. */
  async trace(name: string): Promise<TraceIndex> {
    if (!this.traceNames().includes(name))
      throw new RunFolderError(
        `trace ${name}: not a trace of ${this.dir} (its traces: ${this.traceNames().join(', ') || 'none'})`,
      );
    let index = this.traces.get(name);
    if (!index) this.traces.set(name, (index = new TraceIndex(join(this.dir, name), name)));
    await index.update();
    return index;
  }

  /** Every trace, indexed up to now. */
  async allTraces(): Promise<TraceIndex[]> {
    return Promise.all(this.traceNames().map((n) => this.trace(n)));
  }

  /**
   * Every trace, indexed for at most `budgetMs`: a big trace keeps indexing in the background and reports how far it
   * got (the overview paints at once; a live page sees the counts grow).
   */
  private async tracesWithin(budgetMs: number): Promise<TraceIndex[]> {
    const all = this.allTraces();
    all.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), budgetMs);
    });
    const done = await Promise.race([all, late]).finally(() => clearTimeout(timer));
    return done ?? this.traceNames().map((name) => this.traces.get(name) ?? new TraceIndex(join(this.dir, name), name));
  }

  /** metrics.jsonl (a torn last line is skipped). */
  metrics(): Record<string, unknown>[] {
    const file = join(this.dir, 'metrics.jsonl');
    if (this.only || !existsSync(file)) return [];
    return readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line) => {
        if (!line.trim()) return [];
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      });
  }

  /** checkpoints/step-N folders with their trainer state, and which one best.json names. */
  checkpoints(): CheckpointInfo[] {
    const dir = join(this.dir, 'checkpoints');
    if (this.only || !existsSync(dir)) return [];
    const best = readJson(join(dir, 'best.json'));
    const bestStep = typeof best?.step === 'number' ? best.step : undefined;
    return readdirSync(dir)
      .flatMap((name) => {
        const m = /^step-(\d+)$/.exec(name);
        if (!m) return [];
        const state = readJson(join(dir, name, 'trainer-state.json'));
        const step = Number(m[1]);
        return [
          {
            step,
            samplesGenerated: typeof state?.samplesGenerated === 'number' ? state.samplesGenerated : null,
            best: step === bestStep,
          },
        ];
      })
      .sort((a, b) => a.step - b.step);
  }

  /** The newest checkpoint's trainer state (its `run` names the run and its spec file). */
  private runInfo(): { name?: string; spec?: string } {
    const newest = this.checkpoints().at(-1);
    const state = newest
      ? readJson(join(this.dir, 'checkpoints', `step-${newest.step}`, 'trainer-state.json'))
      : undefined;
    return (state?.run as { name?: string; spec?: string } | undefined) ?? {};
  }

  /** The spec as run: spec.yaml in the folder, else the file the trainer state names (when it still exists). */
  spec(): { file: string; text: string } | null {
    const local = join(this.dir, 'spec.yaml');
    const named = this.runInfo().spec;
    for (const file of [local, ...(named ? [named] : [])]) {
      if (!this.only && existsSync(file))
        return { file: file === local ? 'spec.yaml' : file, text: readFileSync(file, 'utf8') };
    }
    return null;
  }

  /** A fingerprint of the run's files (trace and metrics sizes): it changes whenever the run writes. */
  async status(): Promise<{
    traces: { name: string; size: number; indexedBytes: number; groups: number }[];
    metricsBytes: number;
  }> {
    const traces = await this.tracesWithin(OVERVIEW_BUDGET_MS);
    const metrics = join(this.dir, 'metrics.jsonl');
    return {
      traces: traces.map((t) => ({
        name: relative(this.dir, t.file),
        size: t.size,
        indexedBytes: t.indexedBytes,
        groups: t.groups.length,
      })),
      metricsBytes: !this.only && existsSync(metrics) ? statSync(metrics).size : 0,
    };
  }

  /** Each seat's reward mix from the spec as run, resolved (extends, presets); null when it does not load. */
  private mix(spec: { file: string; text: string } | null): Overview['mix'] {
    if (!spec) return null;
    if (this.mixCache?.text === spec.text) return this.mixCache.mix;
    const mix = this.resolveMix(spec.file);
    this.mixCache = { text: spec.text, mix };
    return mix;
  }

  private resolveMix(file: string): Overview['mix'] {
    const spec = { file };
    try {
      const resolved = loadTeamSpec(spec.file === 'spec.yaml' ? join(this.dir, 'spec.yaml') : spec.file);
      return Object.fromEntries(
        Object.keys(resolved.seats).map((seat) => {
          const m = resolved.rewards.seats[seat];
          return [seat, { alpha: m?.alpha ?? 1, weights: { ...(m?.weights ?? {}) } }];
        }),
      );
    } catch {
      return null;
    }
  }

  /** The run overview (traces as indexed so far, within {@link OVERVIEW_BUDGET_MS}). */
  async overview(): Promise<Overview> {
    const traces = await this.tracesWithin(OVERVIEW_BUDGET_MS);
    const report = join(this.dir, 'report.md');
    const spec = this.spec();
    return {
      name: this.runInfo().name ?? basename(this.only ? join(this.dir, this.only) : this.dir),
      folder: this.dir,
      spec,
      mix: this.mix(spec),
      metrics: this.metrics(),
      checkpoints: this.checkpoints(),
      baseline: this.only ? null : (readJson(join(this.dir, 'baseline-eval.json')) ?? null),
      report: !this.only && existsSync(report) ? readFileSync(report, 'utf8') : null,
      traces: traces.map((t) => ({
        name: relative(this.dir, t.file),
        size: t.size,
        indexedBytes: t.indexedBytes,
        records: t.records,
        groups: t.groups.length,
        episodes: t.episodeCount,
        kind: t.kind,
      })),
    };
  }
}

export { TraceFileError };
