/**
 * The oracle as a program (what the coder learns to write as the proposer): run by the real Python interpreter on
 * starting and mid-episode grids, it prints exactly the oracle's fills or grid, as JSON on its last line.
 */
import assert from 'node:assert/strict';
import { oracleProgramConformance } from '@troupe/testing';
import { SudokuContribution, SudokuEnvironment, sudokuOracleProgram } from '../src/index.js';

/** The last printed line as JSON: how the coder's output parser reads an action that is not a move list. */
const json = (stdout: string): unknown => JSON.parse(stdout.trim().split('\n').at(-1)!);

const contribution = new SudokuContribution();
oracleProgramConformance(contribution, { config: { observation: 'compact' }, instances: 40, parse: json });
oracleProgramConformance(contribution, {
  config: { observation: 'compact', action: 'grid' },
  instances: 40,
  seed: 5,
  parse: json,
});
oracleProgramConformance(contribution, { config: { size: 9 }, instances: 6, seed: 2, parse: json });

describe('sudoku: the oracle program', () => {
  it('writes the current grid as the compact observation shows it', () => {
    const env = new SudokuEnvironment({ observation: 'compact' });
    const s0 = env.reset(env.instance('test', 0, 1));
    const program = env.oracleProgram(s0, 'proposer', 'python')!;
    assert.equal(/"""([\s\S]*?)"""/.exec(program)![1], env.observe(s0, 'proposer').state);
  });

  it('has no program for another language, for a grid with a wrong fill, or for a full grid', async () => {
    const env = new SudokuEnvironment({ observation: 'compact' });
    const s0 = env.reset(env.instance('test', 0, 1));
    assert.equal(env.oracleProgram(s0, 'proposer', 'javascript'), undefined);
    const [r, c] = [0, 1, 2, 3]
      .flatMap((row) => [0, 1, 2, 3].map((col) => [row, col]))
      .find(([row, col]) => s0.grid[row!]![col!] === 0)!;
    const wrong = (s0.instance.solution[r!]![c!]! % 4) + 1;
    const played = await env.step(s0, 'proposer', { kind: 'action', action: [[r! + 1, c! + 1, wrong]], text: '' });
    const after = await env.step(played.state, 'executor', {
      kind: 'action',
      action: [[r! + 1, c! + 1, wrong]],
      text: '',
    });
    assert.equal(after.state.grid[r!]![c!], wrong);
    assert.equal(env.oracleProgram(after.state, 'proposer', 'python'), undefined);
    assert.equal(sudokuOracleProgram(s0.instance.solution, s0.instance.solution, 'grid', 'python'), undefined);
    assert.throws(() => env.oracleProgram(s0, 'nobody', 'python'), /nobody/);
  });
});
