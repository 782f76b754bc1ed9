/**
 * The oracle as a program (what the coder learns to write as the proposer): run by the real Python interpreter on
 * starting and mid-episode states of several configs, it prints exactly the BFS oracle's moves.
 */
import assert from 'node:assert/strict';
import { oracleProgramConformance, runPythonPrograms } from '@troupe/testing';
import { SokobanContribution, SokobanEnvironment, parseInstance, sokobanOracleProgram } from '../src/index.js';

/** The moves a program printed (`U R D`), as the coder's parser reads a bare line. */
const moves = (stdout: string): string[] =>
  stdout
    .trim()
    .split(/\s+/)
    .filter((t) => t !== '');

const contribution = new SokobanContribution();
oracleProgramConformance(contribution, {
  config: { observation: 'compact', maxMoves: 12 },
  instances: 40,
  parse: moves,
});
oracleProgramConformance(contribution, {
  config: { size: 7, boxes: 2, maxMoves: 40, floorSymbol: ' ', deadlockTermination: false },
  instances: 20,
  seed: 5,
  parse: moves,
});
// maxMoves 4 cuts most solutions: the program must print the oracle's first moves only
oracleProgramConformance(contribution, { config: { maxMoves: 4 }, instances: 20, seed: 8, parse: moves });

describe('sokoban: the oracle program', () => {
  it('writes the board as the compact observation draws it, one row per line', () => {
    const env = new SokobanEnvironment({ observation: 'compact' });
    const s0 = env.reset(env.instance('test', 0, 1));
    const program = env.oracleProgram(s0, 'proposer', 'python')!;
    const board = /g="""([\s\S]*?)"""/.exec(program)![1]!;
    assert.ok(env.observe(s0, 'proposer').state.endsWith(`\n${board}`), 'the observation ends with the same rows');
    assert.equal(board.split('\n').length, 6);
  });

  it('reads a player or a box standing on a goal (`+`, `*`) as a goal, with one box and with two', async () => {
    const env = new SokobanEnvironment({ maxMoves: 40 });
    const rooms = [
      ['######', '#    #', '# $  #', '# +  #', '#    #', '######'], // one box, the player on the goal
      ['######', '#    #', '# $$ #', '# +* #', '#  . #', '######'], // two boxes, one already on a goal
    ].map((picture) => parseInstance(picture));
    const states = rooms.map((room) => env.reset(room));
    const programs = states.map((s) => env.oracleProgram(s, 'proposer', 'python')!);
    assert.match(programs[0]!, /\+/);
    const runs = await runPythonPrograms(programs);
    states.forEach((s, i) => assert.deepEqual(moves(runs[i]!.stdout), env.oracle(s, 'proposer'), programs[i]));
  });

  it('has no program for another language, when solved or deadlocked, or for a room without an outer wall', async () => {
    const env = new SokobanEnvironment({});
    const s0 = env.reset(env.instance('test', 0, 1));
    assert.equal(env.oracleProgram(s0, 'proposer', 'javascript'), undefined);
    const solved = await env.step(s0, 'proposer', { kind: 'action', action: env.oracle(s0, 'proposer'), text: '' });
    const done = await env.step(solved.state, 'executor', {
      kind: 'action',
      action: env.oracle(solved.state, 'executor'),
      text: '',
    });
    assert.ok(done.state.success);
    assert.equal(env.oracleProgram(done.state, 'proposer', 'python'), undefined);
    // a box in a corner that is not a goal: the oracle has no moves, so there is no program
    const room = parseInstance(['#####', '# $.#', '# @ #', '#   #', '#####']);
    const state = { ...env.reset(room), placement: { player: room.player, boxes: [{ row: 1, col: 1 }] } };
    assert.deepEqual(env.oracle(state, 'proposer'), []);
    assert.equal(env.oracleProgram(state, 'proposer', 'python'), undefined);
    const open = parseInstance(['     ', ' $ . ', ' @   ', '     ', '     ']);
    assert.equal(
      sokobanOracleProgram(open, { player: open.player, boxes: open.boxes }, { maxMoves: 12, floor: '_' }, 'python'),
      undefined,
    );
    assert.throws(() => env.oracleProgram(s0, 'nobody', 'python'), /nobody/);
  });
});
