import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { json, ROOT, troupe } from '../packages/cli/test/helpers/cli.js';

const spec = join(ROOT, 'test', 'fixtures', 'train-smoke.yaml');

describe('troupe train / eval / sft (end to end, from source)', function () {
  this.timeout(600_000);
  let out: string;
  before(() => {
    out = mkdtempSync(join(tmpdir(), 'troupe-train-'));
  });
  after(() => rmSync(out, { recursive: true, force: true }));

  it('validates the smoke spec (it extends the all-planner Plan-Path team)', async () => {
    const r = await troupe(['validate', spec]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
  });

  it('train writes trace, metrics, atomic checkpoints and a report', async () => {
    const r = await troupe(['train', spec, '--out', out, '--json', '--no-progress']);
    assert.equal(r.code, 0, r.stderr);
    const doc = json<{ memory: { bases: { policies: string[]; bytes: number }[] } }>(r);
    const bases = doc.memory.bases.reduce((n, b) => n + b.bytes, 0);
    assert.ok(doc.memory.bases.length > 0 && bases > 0, 'the memory its bases hold');
    const metrics = readFileSync(join(out, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const steps = metrics.filter((m) => typeof m.step === 'number' && (m.step as number) >= 1);
    assert.ok(steps.length >= 2, `metrics for 2 steps, got ${metrics.length} records`);
    assert.ok(
      metrics.some((m) => Object.keys(m).some((k) => k.startsWith('rollout/'))),
      'rollout/* metrics',
    );
    assert.ok(
      metrics.some((m) => Object.keys(m).some((k) => k.startsWith('loss/'))),
      'loss/* metrics',
    );
    assert.ok(
      steps.filter((m) => m.kind === 'train').every((m) => m['memory/bases_mb'] === bases / 2 ** 20),
      'memory/* metrics',
    );
    const trace = readFileSync(join(out, 'trace.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(trace.length > 0);
    for (const key of [
      'step',
      'instanceUid',
      'split',
      'turn',
      'seat',
      'policy',
      'policyVersion',
      'branch',
      'prompt',
      'completion',
      'reward',
      'advantage',
      'selected',
    ]) {
      assert.ok(key in trace[0]!, `trace record has ${key}`);
    }
    const ckpts = readdirSync(join(out, 'checkpoints')).filter((d) => d.startsWith('step-'));
    assert.ok(ckpts.includes('step-2'), `checkpoints: ${ckpts.join(', ')}`);
    assert.ok(existsSync(join(out, 'checkpoints', 'step-2', 'proposer', 'model.safetensors')));
    assert.ok(existsSync(join(out, 'checkpoints', 'step-2', 'executor', 'config.json')));
    assert.equal(
      readdirSync(join(out, 'checkpoints')).some((d) => d.includes('tmp')),
      false,
      'no temporary checkpoint left',
    );
    assert.ok(existsSync(join(out, 'report.md')));
  });

  it('eval loads the checkpoint, reports success with a 95% interval and traces every turn with --trace', async () => {
    const tracePath = join(out, 'eval-trace', 'test.jsonl');
    const r = await troupe(['eval', spec, '--checkpoint', out, '-n', '4', '--trace', tracePath, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const report = json(r) as {
      episodes: number;
      successes: number;
      success_rate: number;
      ci95: [number, number];
      trace_records: number;
      checkpoint: string;
    };
    assert.equal(report.episodes, 4);
    assert.match(report.checkpoint, /checkpoints[\\/]step-\d+$/);
    assert.ok(
      report.ci95[0] <= report.success_rate && report.success_rate <= report.ci95[1],
      JSON.stringify(report.ci95),
    );
    const records = readFileSync(tracePath, 'utf8')
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            episodeId: string;
            split: string;
            seat: string;
            branch: number;
            completion: string;
            success: boolean;
            step: unknown;
          },
      );
    assert.equal(records.length, report.trace_records);
    assert.deepEqual([...new Set(records.map((x) => x.split))], ['test']);
    assert.ok(
      records.every((x) => x.branch === 0 && x.step === null && typeof x.completion === 'string'),
      'K = 1 evaluation records',
    );
    const episodes = new Set(records.map((x) => x.episodeId));
    assert.equal(episodes.size, 4, 'every evaluated episode is traced');
    const solved = new Set(records.filter((x) => x.success).map((x) => x.episodeId));
    assert.equal(solved.size, report.successes, 'the trace shows the reported successes');
  });

  it('eval --checkpoint RUN/checkpoints/best.json evaluates the checkpoint it names; a name that is not a checkpoint is a clear error', async () => {
    const best = join(out, 'checkpoints', 'best.json');
    try {
      writeFileSync(
        best,
        JSON.stringify({ format: 1, step: 1, checkpoint: 'step-2', split: 'validation', success_rate: 0.5 }),
      );
      const r = await troupe(['eval', spec, '--checkpoint', best, '-n', '2', '--json']);
      assert.equal(r.code, 0, r.stderr);
      assert.match((json(r) as { checkpoint: string }).checkpoint, /checkpoints[\\/]step-2$/);
      writeFileSync(
        best,
        JSON.stringify({ format: 1, step: 99, checkpoint: 'step-99', split: 'validation', success_rate: 0.5 }),
      );
      const gone = await troupe(['eval', spec, '--checkpoint', best, '-n', '2']);
      assert.equal(gone.code, 1);
      assert.match(gone.stderr, /best\.json: it names "step-99", which is not a complete checkpoint/);
      assert.doesNotMatch(gone.stderr, /\n\s+at /, 'no stack trace');
    } finally {
      rmSync(best, { force: true });
    }
  });

  it('eval --baseline plays the same episodes with the baseline first and pairs them: gained, lost, exact McNemar p', async () => {
    type Report = {
      successes: number;
      success_rate: number;
      checkpoint: string;
      baseline: { checkpoint: string; successes: number; success_rate: number };
      comparison: { episodes: number; delta: number; gained: number; lost: number; p_value: number };
    };
    const warm = join(out, 'checkpoints', 'step-0');
    const r = await troupe(['eval', spec, '--checkpoint', out, '--baseline', warm, '-n', '6', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const report = json(r) as Report;
    // each side equals its own evaluation of the same 6 episodes
    const alone = json(await troupe(['eval', spec, '--checkpoint', warm, '-n', '6', '--json'])) as Report;
    assert.equal(report.baseline.checkpoint, warm);
    assert.equal(report.baseline.successes, alone.successes);
    const after = json(await troupe(['eval', spec, '--checkpoint', out, '-n', '6', '--json'])) as Report;
    assert.equal(report.successes, after.successes);
    const c = report.comparison;
    assert.equal(c.episodes, 6);
    assert.equal(c.gained - c.lost, report.successes - report.baseline.successes, JSON.stringify(c));
    assert.ok(c.gained + c.lost <= 6 && c.p_value > 0 && c.p_value <= 1, JSON.stringify(c));
    // against itself no episode differs
    const self = json(
      await troupe(['eval', spec, '--checkpoint', warm, '--baseline', warm, '-n', '6', '--json']),
    ) as Report;
    assert.deepEqual(
      [self.comparison.gained, self.comparison.lost, self.comparison.p_value, self.successes],
      [0, 0, 1, alone.successes],
    );
    const text = await troupe(['eval', spec, '--checkpoint', warm, '--baseline', warm, '-n', '2']);
    assert.match(text.stdout, /paired\s+(\d) → \1 of 2 \(\+0 \/ −0\), exact McNemar p = 1\.0/);
    const lone = await troupe(['eval', spec, '--baseline', warm, '-n', '2']);
    assert.equal(lone.code, 2, lone.stderr);
    assert.match(lone.stderr, /--baseline needs --checkpoint/);
    const missing = await troupe(['eval', spec, '--checkpoint', out, '--baseline', join(out, 'no-such'), '-n', '2']);
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(missing.stderr, /--baseline .*no-such: no such file or folder/);
  });

  it('eval without SPEC plays the team the run was trained from; a checkpoint of another team that does not record its spec is refused', async () => {
    const last = join(
      out,
      'checkpoints',
      readdirSync(join(out, 'checkpoints'))
        .filter((d) => /^step-\d+$/.test(d))
        .sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)))
        .at(-1)!,
    );
    const state = JSON.parse(readFileSync(join(last, 'trainer-state.json'), 'utf8')) as {
      run: { name: string; spec?: string };
    };
    assert.deepEqual(state.run.spec, spec, 'the checkpoint records the spec file it was trained from');
    const r = await troupe(['eval', '--checkpoint', out, '-n', '2', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((json(r) as { spec: string }).spec, spec);

    const old = mkdtempSync(join(tmpdir(), 'troupe-old-checkpoint-'));
    try {
      cpSync(last, old, { recursive: true });
      const { spec: _recorded, ...run } = state.run;
      writeFileSync(join(old, 'trainer-state.json'), JSON.stringify({ ...state, run }));
      const refused = await troupe(['eval', '--checkpoint', old, '-n', '2']);
      assert.equal(refused.code, 1, refused.stdout + refused.stderr);
      assert.match(
        refused.stderr,
        new RegExp(`written by a run of '${state.run.name}'.*pass that spec: troupe eval SPEC --checkpoint`),
      );
      assert.doesNotMatch(refused.stderr, /\n\s+at /);
      const given = await troupe(['eval', spec, '--checkpoint', old, '-n', '2', '--json']);
      assert.equal(given.code, 0, given.stderr);
    } finally {
      rmSync(old, { recursive: true, force: true });
    }
  });

  it('resume continues from the last checkpoint', async () => {
    const r = await troupe([
      'train',
      spec,
      '--out',
      out,
      '--steps',
      '3',
      '--resume',
      '--json',
      '--no-progress',
      '--no-final-eval',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(existsSync(join(out, 'checkpoints', 'step-3')), 'step 3 checkpoint');
    const metrics = readFileSync(join(out, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { step?: number });
    const trained = metrics.map((m) => m.step).filter((s): s is number => typeof s === 'number' && s >= 1);
    assert.deepEqual([...new Set(trained)].sort(), [1, 2, 3], 'each step once after resume');
    const generated = (metrics as { kind?: string; 'rollout/samples'?: number }[])
      .filter((m) => m.kind === 'train')
      .reduce((n, m) => n + m['rollout/samples']!, 0);
    const doc = json(r) as { steps: number; samples_generated: number; stopped_by: string };
    assert.deepEqual([doc.steps, doc.samples_generated, doc.stopped_by], [3, generated, 'steps']);
    // --sample-budget: the resumed steps' samples already reach it, so no step runs though --steps allows 6
    const capped = await troupe([
      'train',
      spec,
      '--out',
      out,
      '--steps',
      '6',
      '--sample-budget',
      String(generated),
      '--resume',
      '--json',
      '--no-progress',
      '--no-final-eval',
    ]);
    assert.equal(capped.code, 0, capped.stderr);
    assert.deepEqual(
      (({ steps, samples_generated, stopped_by }) => [steps, samples_generated, stopped_by])(
        json(capped) as typeof doc,
      ),
      [3, generated, 'sample-budget'],
    );
    assert.ok(!existsSync(join(out, 'checkpoints', 'step-4')));
    const bad = await troupe(['train', spec, '--out', out, '--sample-budget', '0', '--resume']);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /--sample-budget must be a positive integer, got "0"/);
  });

  it('a run folder another running troupe train holds is refused with its pid (exit 1, no stack), and nothing is written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-train-locked-'));
    try {
      writeFileSync(
        join(dir, '.lock'),
        JSON.stringify({
          pid: process.pid,
          token: 't',
          command: 'troupe train other.yaml',
          since: '2026-12-02T10:00:00.000Z',
        }),
      );
      const r = await troupe(['train', spec, '--out', dir, '--steps', '1', '--no-progress']);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(
        r.stderr,
        new RegExp(
          `troupe: ${dir} is in use by process ${process.pid} \\(troupe train other\\.yaml\\) since 2026-12-02T10:00:00\\.000Z: troupe train refuses to write it too`,
        ),
      );
      assert.doesNotMatch(r.stderr, /internal error|\n\s+at /);
      assert.deepEqual(readdirSync(dir), ['.lock']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sft warm-starts the team on oracle demonstrations and evaluates it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-sft-'));
    try {
      const r = await troupe([
        'sft',
        spec,
        '--out',
        dir,
        '--demonstrations',
        '2',
        '--epochs',
        '1',
        '-n',
        '2',
        '--json',
      ]);
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.stringify(json(r));
      assert.match(report, /success/i);
      assert.match(report, /demonstrations|samples/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a bad algorithm key is a clear error naming the key path (exit 1)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-train-bad-'));
    try {
      writeFileSync(
        join(dir, 'team.yaml'),
        `extends: ${JSON.stringify(spec)}\nalgorithm:\n  loss: { aggregation: mean-of-everything }\n`,
      );
      const r = await troupe([
        'train',
        join(dir, 'team.yaml'),
        '--out',
        join(dir, 'out'),
        '--steps',
        '1',
        '--no-progress',
      ]);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stderr, /algorithm\.loss\.aggregation/);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
