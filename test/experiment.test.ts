import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { register as registerExperiment } from '../packages/cli/src/commands/experiment.js';
import { commandRunner } from '../packages/cli/test/helpers/run-command.js';
import type { RunResult } from '@troupe/experiment';
import { json, ROOT, troupe, type CliResult } from '../packages/cli/test/helpers/cli.js';

/** `troupe experiment …` in this process (no child start-up: for runs that spawn nothing). */
const experimentInProcess = commandRunner(registerExperiment, 'experiment');
const troupeInProcess = (args: readonly string[]): Promise<CliResult> => experimentInProcess(...args.slice(1));

const spec = join(ROOT, 'test', 'fixtures', 'experiment-smoke.yaml');

/** Pids of the processes whose command line mentions `text` (read from /proc). */
function processesMentioning(text: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
      } catch {
        return false; // it exited meanwhile
      }
    })
    .map(Number);
}

describe('troupe experiment paper-table (end to end, from source)', function () {
  this.timeout(600_000);
  let out: string;
  before(() => {
    out = mkdtempSync(join(tmpdir(), 'troupe-experiment-'));
  });
  after(() => rmSync(out, { recursive: true, force: true }));

  it('runs a minute-sized table (plan-path; prompt-only, per-role AT-GRPO from its warm start, and its swap; 1 seed) and writes table.md and results.json', async () => {
    const r = await troupe([
      'experiment',
      'paper-table',
      '--games',
      'plan-path',
      '--spec',
      `plan-path=${spec}`,
      '--arms',
      'mas-prompt,mas-atgrpo-per-role,swap',
      '--seeds',
      '1',
      '--episodes',
      '2',
      '--jobs',
      '2',
      '--run-timeout',
      '900',
      '--out',
      out,
      '--json',
      '--no-progress',
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const doc = json<{
      table: string;
      results: string;
      runs: number;
      failed: unknown[];
      cells: { arm: string; game: string; seeds: number; mean: number | null }[];
    }>(r);
    assert.equal(doc.runs, 3);
    assert.deepEqual(doc.failed, []);
    assert.deepEqual(
      doc.cells.map((c) => [c.arm, c.game, c.seeds]),
      [
        ['mas-prompt', 'plan-path', 1],
        ['mas-atgrpo-per-role', 'plan-path', 1],
        ['swap', 'plan-path', 1],
      ],
    );

    const table = readFileSync(join(out, 'table.md'), 'utf8');
    const rows = table.split('\n').filter((l) => /^\| .*\(`[a-z-]+`\) \|/.test(l));
    assert.deepEqual(
      rows.map((l) => /\(`([a-z-]+)`\)/.exec(l)![1]),
      ['mas-prompt', 'mas-atgrpo-per-role', 'swap'],
    );
    assert.match(rows[0]!, /^\| MAS prompt-only \(`mas-prompt`\) \| \d+\.\d ± – \| 0 \(warm start only\) \| 1 \|$/);
    // B·K·N·T = 1·2·2·1 = 4 samples per step, 2 steps: exactly the budget of 8.
    assert.match(rows[1]!, /^\| MAS \+ AT-GRPO per-role \(`mas-atgrpo-per-role`\) \| \d+\.\d ± – \| 8 \| 1 \|$/);
    assert.match(rows[2]!, /^\| per-role, roles swapped \(`swap`\) \| \d+\.\d ± – \| eval only \| 1 \|$/);

    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { runs: RunResult[] };
    const byArm = Object.fromEntries(results.runs.map((x) => [x.arm, x])) as Record<
      'mas-prompt' | 'mas-atgrpo-per-role' | 'swap',
      RunResult
    >;
    assert.deepEqual(Object.keys(byArm).sort(), ['mas-atgrpo-per-role', 'mas-prompt', 'swap']);
    assert.equal(byArm['mas-atgrpo-per-role'].samples.generated, 8);
    assert.equal(byArm['mas-atgrpo-per-role'].level, 'L3');
    assert.equal(byArm['mas-prompt'].samples.generated, 0);
    for (const x of results.runs) assert.equal(x.eval!.episodes, 2, x.arm);
    // One warm start: mas-prompt's; the per-role run loaded its step-0 checkpoint and ran none of its own.
    const runs = join(out, 'runs', 'plan-path');
    assert.ok((byArm['mas-prompt'].warmStartSamples ?? 0) > 0);
    assert.equal(byArm['mas-prompt'].source, undefined);
    assert.equal(byArm['mas-atgrpo-per-role'].warmStartSamples, undefined);
    assert.deepEqual(byArm['mas-atgrpo-per-role'].source, {
      arm: 'mas-prompt',
      uses: 'warm-start',
      dir: 'runs/plan-path/mas-prompt/seed-0',
      checkpoint: 'runs/plan-path/mas-prompt/seed-0/checkpoints/step-0',
    });
    assert.deepEqual(byArm.swap.source!.checkpoint, 'runs/plan-path/mas-atgrpo-per-role/seed-0/checkpoints/step-2');
    const perRoleSpec = readFileSync(join(runs, 'mas-atgrpo-per-role', 'seed-0', 'spec.yaml'), 'utf8');
    assert.match(
      perRoleSpec,
      /^# starts from the warm start \(\.\.\/\.\.\/mas-prompt\/seed-0\/checkpoints\/step-0\) of \.\.\/\.\.\/mas-prompt\/seed-0, plan [0-9a-f]{16}\n/,
    );
    assert.match(perRoleSpec, /model: \.\.\/\.\.\/mas-prompt\/seed-0\/checkpoints\/step-0\/executor/);
    assert.doesNotMatch(perRoleSpec, /warmStart|preset/);
    const perRoleMetrics = readFileSync(join(runs, 'mas-atgrpo-per-role', 'seed-0', 'metrics.jsonl'), 'utf8');
    assert.doesNotMatch(perRoleMetrics, /"kind":"warm-start"/);
    assert.match(readFileSync(join(runs, 'mas-prompt', 'seed-0', 'metrics.jsonl'), 'utf8'), /"kind":"warm-start"/);
    assert.match(table, /\| plan-path \| mas-atgrpo-per-role \| 0 \| L3 \| mas-prompt step-0 \| /);
    // The control (the per-role checkpoint loaded through `model:`, seats unchanged) reproduces the per-role result.
    assert.equal(byArm.swap.control!.successes, byArm['mas-atgrpo-per-role'].eval!.successes);
    const swapSpec = readFileSync(join(out, 'runs', 'plan-path', 'swap', 'seed-0', 'swap.yaml'), 'utf8');
    assert.match(swapSpec, /model: \.\.\/\.\.\/mas-atgrpo-per-role\/seed-0\/checkpoints\/step-2\/proposer/);
    assert.ok(
      existsSync(
        join(
          out,
          'runs',
          'plan-path',
          'mas-atgrpo-per-role',
          'seed-0',
          'checkpoints',
          'step-2',
          'executor',
          'model.safetensors',
        ),
      ),
    );
    assert.ok(existsSync(join(out, 'plots', 'success.vl.json')));

    // A rerun finds every result and runs nothing; --arms swap pulls in the runs it needs.
    const again = await troupeInProcess([
      'experiment',
      'paper-table',
      '--games',
      'plan-path',
      '--spec',
      `plan-path=${spec}`,
      '--arms',
      'swap',
      '--seeds',
      '1',
      '--episodes',
      '2',
      '--out',
      out,
    ]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(
      again.stderr,
      /--arms: added mas-prompt \(needed by mas-atgrpo-per-role\), mas-atgrpo-per-role \(needed by swap\)/,
    );
    assert.match(again.stderr, /\[3\/3\] plan-path swap seed 0: done earlier/);
    assert.doesNotMatch(again.stderr, /: start →/);
    // with --json the note is still on stderr, and the document lists the arms added
    const asJson = await troupeInProcess([
      'experiment',
      'paper-table',
      '--games',
      'plan-path',
      '--spec',
      `plan-path=${spec}`,
      '--arms',
      'swap',
      '--seeds',
      '1',
      '--episodes',
      '2',
      '--out',
      out,
      '--json',
    ]);
    assert.equal(asJson.code, 0, asJson.stderr);
    assert.match(
      asJson.stderr,
      /--arms: added mas-prompt \(needed by mas-atgrpo-per-role\), mas-atgrpo-per-role \(needed by swap\)/,
    );
    const added = JSON.parse(asJson.stdout) as { arms: string[]; arms_added: { arm: string; needed_by: string[] }[] };
    assert.deepEqual(added.arms_added, [
      { arm: 'mas-prompt', needed_by: ['mas-atgrpo-per-role'] },
      { arm: 'mas-atgrpo-per-role', needed_by: ['swap'] },
    ]);
    assert.deepEqual(added.arms, ['mas-prompt', 'mas-atgrpo-per-role', 'swap']);

    // --reuse: another folder takes the results file's runs (same plan) without running them
    const other = join(out, 'reused');
    const reused = await troupeInProcess([
      'experiment',
      'paper-table',
      '--games',
      'plan-path',
      '--spec',
      `plan-path=${spec}`,
      '--arms',
      'swap',
      '--seeds',
      '1',
      '--episodes',
      '2',
      '--reuse',
      join(out, 'results.json'),
      '--out',
      other,
    ]);
    assert.equal(reused.code, 0, reused.stderr);
    assert.match(
      reused.stderr,
      new RegExp(
        `\\[1/3\\] plan-path mas-prompt seed 0: done earlier \\(reused from ${join(out, 'results.json').replaceAll('/', '\\/')}\\)`,
      ),
    );
    assert.doesNotMatch(reused.stderr, /: start →/);
    assert.match(reused.stdout, /paper-table: 3 runs \(0 failed, 3 reused\)/);
    assert.match(readFileSync(join(other, 'table.md'), 'utf8'), /Reused \(not run again.*\): 3 runs, marked \* below/);

    // --report-only with a second seed planned: its runs are "not run yet", not failures, and the exit status is 0
    const soFar = await troupeInProcess([
      'experiment',
      'paper-table',
      '--games',
      'plan-path',
      '--spec',
      `plan-path=${spec}`,
      '--arms',
      'swap',
      '--seeds',
      '2',
      '--episodes',
      '2',
      '--reuse',
      join(out, 'results.json'),
      '--out',
      other,
      '--report-only',
    ]);
    assert.equal(soFar.code, 0, soFar.stderr);
    assert.match(soFar.stdout, /paper-table: 6 runs \(0 failed, 3 not run yet, 3 reused\)/);
    assert.match(soFar.stdout, /mas-prompt\s+\d+\.\d ± – \(1 not run yet\)/);
    assert.doesNotMatch(soFar.stdout, /^\s+failed:/m);
    assert.match(
      readFileSync(join(other, 'table.md'), 'utf8'),
      /\| plan-path \| swap \| 1 \| L3 \| mas-atgrpo-per-role \| not run yet \|/,
    );
  });

  it('SIGTERM to the runner stops its running child and exits 143; the run is recorded as interrupted', async () => {
    const dir = join(out, 'stopped');
    let runner: ChildProcess | undefined;
    const pending = troupe(
      [
        'experiment',
        'paper-table',
        '--games',
        'plan-path',
        '--spec',
        `plan-path=${spec}`,
        '--arms',
        'mas-prompt',
        '--seeds',
        '1',
        '--episodes',
        '2',
        '--out',
        dir,
        '--no-progress',
      ],
      { onSpawn: (c) => (runner = c) },
    );
    const log = join(dir, 'runs', 'plan-path', 'mas-prompt', 'seed-0', 'troupe.log');
    const until = Date.now() + 60_000;
    while (!(existsSync(log) && readFileSync(log, 'utf8').includes('$ troupe train')) && Date.now() < until)
      await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 1000)); // the child is up
    assert.ok(processesMentioning(dir).length >= 2, 'the runner and its troupe train child run');
    runner!.kill('SIGTERM');
    const r = await pending;
    assert.equal(r.code, 143, r.stdout + r.stderr);
    assert.match(r.stderr, /paper-table: SIGTERM: stopping the running runs/);
    assert.match(
      r.stderr,
      /interrupted: 1 running run stopped \(recorded in their failure\.json\), 0 not started; the same command again resumes/,
    );
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    assert.deepEqual(processesMentioning(dir), [], 'no child left training');
    const failure = JSON.parse(
      readFileSync(join(dir, 'runs', 'plan-path', 'mas-prompt', 'seed-0', 'failure.json'), 'utf8'),
    ) as { error: string };
    assert.match(failure.error, /^interrupted: the experiment was stopped; troupe train was killed/);
  });

  it('names unknown games and arms (usage errors, exit 2)', async () => {
    const game = await troupeInProcess([
      'experiment',
      'paper-table',
      '--games',
      'plan-path,chess',
      '--out',
      join(out, 'x'),
    ]);
    assert.equal(game.code, 2);
    assert.match(game.stderr, /unknown game "chess"; the games with a preset are plan-path, sokoban, sudoku/);
    const arm = await troupeInProcess([
      'experiment',
      'paper-table',
      '--games',
      'plan-path',
      '--arms',
      'mas-prompt,solo',
      '--out',
      join(out, 'x'),
    ]);
    assert.equal(arm.code, 2);
    assert.match(arm.stderr, /unknown arm "solo"; the arms are single, single-grpo, mas-prompt/);
    const timeout = await troupeInProcess([
      'experiment',
      'paper-table',
      '--games',
      'plan-path',
      '--run-timeout',
      '0',
      '--out',
      join(out, 'x'),
    ]);
    assert.equal(timeout.code, 2);
    assert.match(timeout.stderr, /--run-timeout must be a positive number of seconds, got "0"/);
    const missing = await troupeInProcess([
      'experiment',
      'paper-table',
      '--games',
      'plan-path',
      '--reuse',
      join(out, 'none.json'),
      '--out',
      join(out, 'x'),
    ]);
    assert.equal(missing.code, 2);
    assert.match(
      missing.stderr,
      /--reuse .*none\.json: cannot read it as JSON \(no such file\); give the results\.json an earlier troupe experiment paper-table wrote/,
    );
    const notResults = join(out, 'not-results.json');
    writeFileSync(notResults, JSON.stringify({ runs: [{ game: 'plan-path', arm: 'single' }] }));
    const bad = await troupeInProcess([
      'experiment',
      'paper-table',
      '--games',
      'plan-path',
      '--reuse',
      notResults,
      '--out',
      join(out, 'x'),
    ]);
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      /not-results\.json: runs\[0\] is not a run result \(it needs game, arm, seed, digest and status\)/,
    );
    assert.doesNotMatch(game.stderr + arm.stderr + timeout.stderr + missing.stderr + bad.stderr, /\n\s+at /);
    assert.equal(existsSync(join(out, 'x')), false, 'nothing written');
  });
});
