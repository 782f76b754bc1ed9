import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatedSamples, METRICS_FILE, readMetrics, type MetricsRecord } from '../src/index.js';

describe('run folder: metrics.jsonl', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'troupe-run-folder-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a folder without metrics.jsonl has no records', () => {
    assert.deepEqual(readMetrics(dir), []);
  });

  it('reads every record and skips the torn line a crash mid-write leaves at the end', () => {
    const records: MetricsRecord[] = [
      { step: 0, kind: 'warm-start', 'warmstart/samples': 40 },
      { step: 1, kind: 'train', 'rollout/samples': 12, 'rollout/success_rate': 0.5 },
    ];
    writeFileSync(
      join(dir, METRICS_FILE),
      `${records.map((r) => JSON.stringify(r)).join('\n')}\n\n{"step": 2, "kind": "tr`,
    );
    assert.deepEqual(readMetrics(dir), records);
  });

  it('generated samples are the rollout samples of the training steps only', () => {
    const metrics: MetricsRecord[] = [
      { step: 0, kind: 'warm-start', 'warmstart/samples': 40, 'rollout/samples': 99 },
      { step: 1, kind: 'train', 'rollout/samples': 12 },
      { step: 2, kind: 'train', 'rollout/samples': 16 },
      { step: 2, kind: 'train' },
      { step: 2, kind: 'final', 'rollout/samples': 7 },
    ];
    assert.equal(generatedSamples(metrics), 28);
    assert.equal(generatedSamples([]), 0);
  });
});
