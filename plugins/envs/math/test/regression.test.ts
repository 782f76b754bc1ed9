import assert from 'node:assert/strict';
import { extractAnswer, extractReference, MathVerifier } from '../src/checker/index.js';
import { REGRESSION_CASES, type RegressionCase } from './fixtures/regression-cases.js';
import { scoreCases, formatScores } from './helpers/regression-score.js';

describe('checker: regression suite (whole responses, notations, reference formats, hostile inputs)', () => {
  const verifier = new MathVerifier();
  after(() => verifier.close());
  const verdicts = new Map<RegressionCase, string>();

  before(async function () {
    this.timeout(120_000);
    for (const c of REGRESSION_CASES) {
      const extracted = extractAnswer(c.response, 'lenient');
      const r = extracted ? await verifier.check(extracted.answer, extractReference(c.reference)) : undefined;
      verdicts.set(c, r?.verdict ?? 'not-equal');
    }
  });

  it('has cases of every kind, both verdicts in each kind but the hostile one', () => {
    const kinds = new Set(REGRESSION_CASES.map((c) => c.kind));
    assert.ok(kinds.size >= 20, `only ${kinds.size} kinds`);
    for (const kind of kinds) {
      const cases = REGRESSION_CASES.filter((c) => c.kind === kind);
      assert.ok(cases.length >= 3, `kind ${kind} has ${cases.length} cases`);
      if (kind !== 'hostile')
        assert.ok(
          cases.some((c) => c.expected === 'not-equal'),
          `kind ${kind} has no not-equal case`,
        );
    }
  });

  it('never says "equal" to a wrong answer, and agrees on every case not marked as a known miss', () => {
    const scores = scoreCases(REGRESSION_CASES, (c) => verdicts.get(c)!);
    console.log(formatScores(scores));
    assert.equal(scores.total.falseEqual, 0, 'false "equal" verdicts');
    const wrong = REGRESSION_CASES.filter((c) => !c.miss && (verdicts.get(c) === 'equal') !== (c.expected === 'equal'));
    assert.deepEqual(
      wrong.map((c) => `${c.kind}: ${c.response.slice(-60)} vs ${c.reference.slice(0, 40)} → ${verdicts.get(c)}`),
      [],
    );
    const fixed = REGRESSION_CASES.filter((c) => c.miss && (verdicts.get(c) === 'equal') === (c.expected === 'equal'));
    assert.deepEqual(
      fixed.map((c) => c.response.slice(0, 60)),
      [],
      'a case marked as a known miss now agrees: drop its mark',
    );
  });
});
