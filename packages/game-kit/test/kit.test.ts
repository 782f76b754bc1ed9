import assert from 'node:assert/strict';
import { splitOfContent } from '@troupe/kernel';
import {
  ConfigReader,
  GAME_CONFIG_DEFAULTS,
  drawGrid,
  instanceAt,
  moveListReward,
  readMovesGameConfig,
  runMoveList,
  schemaDefaults,
} from '../src/index.js';

describe('ConfigReader', () => {
  const read = (raw: Record<string, unknown>) =>
    new ConfigReader('toy-v0', { ...GAME_CONFIG_DEFAULTS, size: 5, flag: true }, raw);

  it('fills defaults and returns the kit keys checked', () => {
    assert.deepEqual(read({ maxTurns: 2 }).game(), { ...GAME_CONFIG_DEFAULTS, maxTurns: 2 });
    assert.equal(read({}).integer('size', 1, 9), 5);
  });

  it('names the environment, the key path and the allowed values', () => {
    assert.throws(
      () => read({ sise: 1 }),
      /^Error: toy-v0: environment\.config\.sise is not a known key; known keys: maxTurns, reward, observation, seats, splitFractions, size, flag$/,
    );
    assert.throws(
      () => read({ size: 11 }).integer('size', 1, 9),
      /toy-v0: environment\.config\.size must be an integer from 1 to 9, got 11/,
    );
    assert.throws(
      () => read({ observation: 'x' }).game(),
      /environment\.config\.observation must be "full" or "compact", got "x"/,
    );
    assert.throws(() => read({ size: 'a' }).oneOf('size', ['a1', 'b', 'c']), /must be "a1", "b" or "c", got "a"/);
    assert.throws(() => read({ flag: 1 }).boolean('flag'), /environment\.config\.flag must be a boolean, got 1/);
    assert.throws(() => read({ size: -1 }).finite('size', 0), /must be a finite number ≥ 0, got -1/);
    assert.throws(
      () => read({ seats: ['executor', 'proposer'] }).seats(),
      /config\.seats must be \["proposer", "executor"\] \(the team\) or \["executor"\] \(single agent\)/,
    );
    assert.throws(
      () => read({ splitFractions: { train: 0.5, validation: 0.1, test: 0.1 } }).splitFractions(),
      /splitFractions must add up to 1, got 0\.7/,
    );
    assert.throws(
      () => read({ splitFractions: { train: 2, validation: 0.1, test: 0.1 } }).splitFractions(),
      /splitFractions\.train must be a number from 0 to 1, got 2/,
    );
  });

  it('takes the defaults from a config schema, and reads the moves-game keys', () => {
    const schema = {
      type: 'object',
      properties: { maxMoves: { type: 'integer', default: 6 }, note: { type: 'string' } },
    };
    assert.deepEqual(schemaDefaults(schema), { maxMoves: 6, note: undefined });
    const r = new ConfigReader(
      'toy-v0',
      { ...GAME_CONFIG_DEFAULTS, ...schemaDefaults(schema), malformedPenalty: -1, notation: 'moves' },
      { notation: 'runs' },
    );
    assert.deepEqual(readMovesGameConfig(r, 10), {
      ...GAME_CONFIG_DEFAULTS,
      maxMoves: 6,
      malformedPenalty: -1,
      notation: 'runs',
    });
    assert.throws(
      () =>
        readMovesGameConfig(
          new ConfigReader('toy-v0', { ...GAME_CONFIG_DEFAULTS, maxMoves: 11, malformedPenalty: 0, notation: 'moves' }),
          10,
        ),
      /environment\.config\.maxMoves must be an integer from 1 to 10, got 11/,
    );
  });
});

describe('instance generation', () => {
  const fractions = { train: 0.5, validation: 0.5, test: 0 };
  // candidates: numbers 0..9 from the stream; even numbers belong to train, odd ones to validation
  const source = (maxAttempts = 1000) => ({
    id: 'toy-v0',
    splitFractions: fractions,
    maxAttempts,
    hint: 'widen the range',
    draw: (rng: { int(n: number): number }, split: string) => {
      const n = rng.int(10);
      return (n % 2 === 0) === (split === 'train') ? { n } : null;
    },
  });

  it('instanceAt: deterministic per (split, index, seed), in the split, and refuses an empty split', () => {
    assert.deepEqual(instanceAt(source(), 'train', 3, 7), instanceAt(source(), 'train', 3, 7));
    for (let i = 0; i < 20; i++) assert.equal(instanceAt(source(), 'validation', i, 1).n % 2, 1);
    assert.throws(
      () => instanceAt(source(), 'test', 0, 0),
      /toy-v0: split "test" has fraction 0 in environment\.config\.splitFractions; it holds no instances/,
    );
  });

  it('instanceAt with a content key: keeps a candidate only when its key hashes into the split, deeply frozen', () => {
    const keyed = {
      ...source(),
      splitFractions: { train: 0.5, validation: 0.3, test: 0.2 },
      draw: (rng: { int(n: number): number }) => ({ n: rng.int(1000), tags: ['x'] }),
      key: (i: { n: number }) => String(i.n),
    };
    for (const split of ['train', 'validation', 'test'] as const) {
      const got = instanceAt(keyed, split, 4, 9);
      assert.equal(splitOfContent(String(got.n), keyed.splitFractions), split);
      assert.ok(Object.isFrozen(got) && Object.isFrozen(got.tags));
    }
  });

  it('instanceAt: refuses a bad index, and names the source when no candidate is kept', () => {
    for (const bad of [-1, 1.5, Number.NaN])
      assert.throws(
        () => instanceAt(source(), 'train', bad, 3),
        /toy-v0: instance index must be a non-negative integer/,
      );
    assert.throws(
      () => instanceAt({ ...source(5), draw: () => null }, 'train', 0, 0),
      /toy-v0: no train instance found after 5 candidates \(seed 0, index 0\); widen the range/,
    );
  });
});

describe('move lists and grids', () => {
  it('runMoveList stops once solved, counting invalid and ignored moves; moveListReward rounds, or is sparse', () => {
    const run = runMoveList(
      0,
      ['R', 'U', 'R', 'R', 'L'],
      (at) => at === 2,
      (at, dir) => {
        const valid = dir === 'R';
        return { to: valid ? at + 1 : at, valid, reward: valid ? 0.1 : -0.2 };
      },
    );
    assert.deepEqual(run, { end: 2, processed: 3, invalid: 1, ignored: 2, solved: true, perMove: [0.1, -0.2, 0.1] });
    assert.deepEqual(moveListReward([0.1, 0.2], true, 'shaped'), { reward: 0.3, perMove: [0.1, 0.2] });
    assert.equal(moveListReward([0.1, 0.2], false, 'sparse').reward, 0);
    assert.equal(
      runMoveList(
        2,
        ['L'],
        (at) => at === 2,
        () => assert.fail('never called'),
      ).processed,
      0,
    );
  });

  it('drawGrid draws row and column numbers padded to the widest, or the bare rows', () => {
    assert.equal(
      drawGrid(['.#', '..'], (ch, p) => (p.row === 1 && p.col === 0 ? 'A' : ch)),
      '   0 1\n0  . #\n1  A .',
    );
    assert.equal(
      drawGrid(['.#', '..'], (ch) => ch, { coordinates: false }),
      '.#\n..',
    );
    assert.equal(
      drawGrid(Array(11).fill('.'.repeat(11)), (ch) => ch).split('\n')[0],
      `    ${Array.from({ length: 11 }, (_, c) => String(c).padStart(2)).join(' ')}`,
    );
  });
});
