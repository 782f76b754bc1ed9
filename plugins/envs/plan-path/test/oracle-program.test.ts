/**
 * The oracle as a program (what the coder learns to write as the proposer): run by the real Python interpreter on
 * starting and mid-episode states of several sizes, it prints exactly the oracle's moves.
 */
import assert from 'node:assert/strict';
import { oracleProgramConformance, startAndLaterStates } from '@troupe/testing';
import { PlanPathContribution, PlanPathEnvironment, planPathOracleProgram, type PlanPathState } from '../src/index.js';

/** The moves a program printed (`U R D`), as the coder's parser reads a bare line. */
const moves = (stdout: string): string[] =>
  stdout
    .trim()
    .split(/\s+/)
    .filter((t) => t !== '');

const CONFIGS = [
  { size: 5, maxMoves: 12 },
  { size: 8, maxMoves: 24 },
  { size: 10, maxMoves: 5 },
] as const;
for (const config of CONFIGS) {
  oracleProgramConformance(new PlanPathContribution(), {
    config: { ...config, wallProbability: 0.25 },
    instances: 60,
    parse: moves,
  });
}

describe('plan-path: the oracle as a Python program', () => {
  it('the checked states include walkers that moved and paths cut at maxMoves', async () => {
    const env = new PlanPathEnvironment({ ...CONFIGS[2], wallProbability: 0.25 });
    const states = (await startAndLaterStates(env, 60, 3)).map((s) => s.state as PlanPathState);
    assert.ok(
      states.some(
        (s) =>
          s.history.length > 0 && (s.position.row !== s.instance.start.row || s.position.col !== s.instance.start.col),
      ),
      'a walker that moved',
    );
    assert.ok(
      states.some((s) => env.oracle(s, 'proposer').length === CONFIGS[2].maxMoves),
      'some paths are cut at maxMoves',
    );
  });

  it('writes the grid, the walker and the goal as data, one row per line', () => {
    const env = new PlanPathEnvironment({ size: 5 });
    const s0 = env.reset(env.instance('test', 0, 1));
    const program = env.oracleProgram(s0, 'executor', 'python')!;
    const rows = /g="""([\s\S]*?)"""/.exec(program)![1]!.split('\n');
    assert.equal(rows.length, 5);
    assert.ok(rows.every((r) => r.length === 5));
    assert.equal(rows[s0.position.row]![s0.position.col], 'A');
    assert.equal(rows[s0.instance.goal.row]![s0.instance.goal.col], 'G');
    rows.forEach((r, i) =>
      [...r].forEach((ch, j) => assert.equal(ch === '#', s0.instance.grid[i]![j] === '#', `cell (${i},${j})`)),
    );
  });

  it('has no program for another language, nor on the goal; names an unknown seat', () => {
    const env = new PlanPathEnvironment({ size: 5 });
    const s0 = env.reset(env.instance('test', 0, 1));
    assert.equal(env.oracleProgram(s0, 'proposer', 'javascript'), undefined);
    assert.equal(planPathOracleProgram(s0.instance.grid, s0.instance.goal, s0.instance.goal, 12, 'python'), undefined);
    assert.throws(() => env.oracleProgram(s0, 'nobody', 'python'), /nobody/);
  });
});
