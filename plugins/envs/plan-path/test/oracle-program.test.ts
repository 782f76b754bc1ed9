/**
 * The oracle as a program (what the coder learns to write as the proposer): run by the real Python interpreter on
 * starting and mid-episode states of several sizes, it prints exactly the oracle's moves.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createRng } from '@troupe/kernel';
import { PlanPathEnvironment, planPathOracleProgram, type PlanPathState } from '../src/index.js';

/** Runs every program in one Python process (each in a fresh namespace) and returns what each printed. */
function runPrograms(programs: readonly string[]): string[] {
  const driver = [
    'import contextlib, io, json, sys',
    'out = []',
    'for p in json.load(sys.stdin):',
    '    buf = io.StringIO()',
    '    with contextlib.redirect_stdout(buf):',
    '        exec(p, {})',
    '    out.append(buf.getvalue())',
    'print(json.dumps(out))',
  ].join('\n');
  return JSON.parse(execFileSync('python3', ['-c', driver], { input: JSON.stringify(programs), encoding: 'utf8', timeout: 60_000 })) as string[];
}

/** Starting states of `count` train instances and, for each, the state after a random proposal and execution. */
async function states(env: PlanPathEnvironment, count: number): Promise<PlanPathState[]> {
  const rng = createRng(5);
  const out: PlanPathState[] = [];
  for (let i = 0; i < count; i += 1) {
    const s0 = env.reset(env.instance('train', i, 3));
    out.push(s0);
    const proposed = await env.step(s0, 'proposer', { kind: 'action', action: env.randomAction(s0, 'proposer', rng), text: '' });
    const executed = await env.step(proposed.state, 'executor', { kind: 'action', action: env.randomAction(proposed.state, 'executor', rng), text: '' });
    if (!executed.state.done) out.push(executed.state);
  }
  return out;
}

describe('plan-path: the oracle as a Python program', () => {
  for (const config of [{ size: 5, maxMoves: 12 }, { size: 8, maxMoves: 24 }, { size: 10, maxMoves: 5 }]) {
    it(`prints the oracle's moves on starting and mid-episode states (size ${config.size}, maxMoves ${config.maxMoves})`, async function () {
      this.timeout(120_000);
      const env = new PlanPathEnvironment({ ...config, wallProbability: 0.25 });
      const all = await states(env, 60);
      assert.ok(all.length > 60, 'mid-episode states too');
      assert.ok(all.some((s) => s.history.length > 0 && (s.position.row !== s.instance.start.row || s.position.col !== s.instance.start.col)), 'a walker that moved');
      const programs = all.map((s) => env.oracleProgram(s, 'proposer', 'python'));
      assert.ok(programs.every((p) => p !== undefined));
      const printed = runPrograms(programs as string[]);
      let truncated = 0;
      all.forEach((s, i) => {
        const oracle = env.oracle!(s, 'proposer');
        assert.deepEqual(printed[i]!.trim().split(/\s+/), oracle, `state ${i}: ${programs[i]}`);
        if (oracle.length === config.maxMoves) truncated += 1;
      });
      if (config.maxMoves === 5) assert.ok(truncated > 0, 'some paths are cut at maxMoves');
    });
  }

  it('writes the grid, the walker and the goal as data, one row per line', () => {
    const env = new PlanPathEnvironment({ size: 5 });
    const s0 = env.reset(env.instance('test', 0, 1));
    const program = env.oracleProgram(s0, 'executor', 'python')!;
    const rows = /g="""([\s\S]*?)"""/.exec(program)![1]!.split('\n');
    assert.equal(rows.length, 5);
    assert.ok(rows.every((r) => r.length === 5));
    assert.equal(rows[s0.position.row]![s0.position.col], 'A');
    assert.equal(rows[s0.instance.goal.row]![s0.instance.goal.col], 'G');
    rows.forEach((r, i) => [...r].forEach((ch, j) => assert.equal(ch === '#', s0.instance.grid[i]![j] === '#', `cell (${i},${j})`)));
  });

  it('has no program for another language, nor on the goal; names an unknown seat', () => {
    const env = new PlanPathEnvironment({ size: 5 });
    const s0 = env.reset(env.instance('test', 0, 1));
    assert.equal(env.oracleProgram(s0, 'proposer', 'javascript'), undefined);
    assert.equal(planPathOracleProgram(s0.instance.grid, s0.instance.goal, s0.instance.goal, 12, 'python'), undefined);
    assert.throws(() => env.oracleProgram(s0, 'nobody', 'python'), /nobody/);
  });
});
