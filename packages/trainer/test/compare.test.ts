import assert from 'node:assert/strict';
import { exactMcNemar, formatPairedComparison, pairedComparison } from '../src/compare.js';

describe('trainer: paired comparison of two evaluations', () => {
  it('counts the episodes each model solves alone and the rates of both', () => {
    const before = [true, true, false, false, true, false];
    const after = [true, false, true, true, true, false];
    const c = pairedComparison(before, after);
    assert.equal(c.episodes, 6);
    assert.equal(c.gained, 2);
    assert.equal(c.lost, 1);
    assert.equal(c.before, 3 / 6);
    assert.equal(c.after, 4 / 6);
    assert.ok(Math.abs(c.delta - 1 / 6) < 1e-12);
    assert.equal(formatPairedComparison(c), '3 → 4 of 6 (+2 / −1), exact McNemar p = 1.0');
    // counts come back whole from the rates of a long evaluation (48 / 300 is not exact in binary)
    const long = pairedComparison(
      [...Array(300)].map((_, i) => i < 48),
      [...Array(300)].map((_, i) => i >= 29 && i < 115),
    );
    assert.equal(
      formatPairedComparison(long),
      `48 → 86 of 300 (+67 / −29), exact McNemar p = ${exactMcNemar(67, 29).toPrecision(2)}`,
    );
  });

  it('exact McNemar: two-sided binomial tail of the discordant pairs at 1/2', () => {
    // 8 gained, 1 lost: 2 · (C(9,0) + C(9,1)) / 2^9 = 20 / 512
    assert.ok(Math.abs(exactMcNemar(8, 1) - 20 / 512) < 1e-12);
    assert.ok(Math.abs(exactMcNemar(1, 8) - 20 / 512) < 1e-12);
    // 10 vs 0: 2 / 1024
    assert.ok(Math.abs(exactMcNemar(10, 0) - 2 / 1024) < 1e-12);
    // balanced splits and no discordant pairs: no evidence at all
    assert.equal(exactMcNemar(5, 5), 1);
    assert.equal(exactMcNemar(0, 0), 1);
    // large counts stay finite and symmetric: 60 vs 40 → about 0.057
    const p = exactMcNemar(60, 40);
    assert.ok(p > 0.05 && p < 0.065, `p = ${p}`);
    assert.equal(p, exactMcNemar(40, 60));
  });

  it('refuses evaluations of different lengths with a message that says what to pair', () => {
    assert.throws(
      () => pairedComparison([true], [true, false]),
      /1 and 2 episodes; pair only evaluations of the same split, seed and episode count/,
    );
  });
});
