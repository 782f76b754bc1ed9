import assert from 'node:assert/strict';
import { checkEquivalence } from '../src/checker/index.js';
import { TABLE } from './fixtures/checker-table.js';

describe('checker: equivalence table', () => {
  it('has at least 60 rows, both verdicts, every layer', () => {
    assert.ok(TABLE.length >= 60, `only ${TABLE.length} rows`);
    assert.ok(TABLE.some((r) => r.equivalent) && TABLE.some((r) => !r.equivalent));
    for (const layer of ['normalized-string', 'rational', 'symbolic', 'numeric', 'none'] as const) {
      assert.ok(
        TABLE.some((r) => r.layer === layer),
        `no row pins layer ${layer}`,
      );
    }
  });

  for (const row of TABLE) {
    it(`${row.topic}: ${JSON.stringify(row.answer)} vs ${JSON.stringify(row.reference)} → ${row.equivalent ? 'equivalent' : 'different'}${row.layer ? ` (${row.layer})` : ''}`, () => {
      const result = checkEquivalence(row.answer, row.reference);
      assert.equal(result.equivalent, row.equivalent, `verdict: ${JSON.stringify(result)}`);
      if (row.layer) assert.equal(result.layer, row.layer, `layer: ${JSON.stringify(result)}`);
      if (!row.equivalent) assert.equal(result.layer, 'none');
      assert.ok(result.details.length > 0);
      // Symmetry: swapping answer and reference gives the same verdict.
      assert.equal(checkEquivalence(row.reference, row.answer).equivalent, row.equivalent, 'verdict is not symmetric');
    });
  }
});
