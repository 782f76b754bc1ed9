/**
 * Cross-check: on every symbolic row of the table, sympy (run in a plain python3 child process, not in the sandbox)
 * must reach the same verdict as the checker. Variables are real (as the checker samples them). When python3 or sympy is missing the test is skipped with the reason.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { checkEquivalence } from '../src/checker/index.js';
import { TABLE } from './fixtures/checker-table.js';

const SCRIPT = String.raw`
import json, sys
import sympy
from sympy import sympify, Symbol
rows = json.load(sys.stdin)
out = []
for a, b in rows:
    names = {n: Symbol(n, real=True) for n in ['x', 'y', 'a', 'b', 'x_1', 'x_2']}
    ea, eb = sympify(a, locals=names), sympify(b, locals=names)
    d = sympy.expand(ea - eb)
    if d == 0:
        out.append(True)
    else:
        eq = d.equals(0)
        out.append(bool(eq) if eq is not None else False)
print(json.dumps(out))
`;

describe('checker: sympy cross-check on the symbolic rows', function () {
  const rows = TABLE.filter((r) => r.sympy);

  it('covers at least 20 symbolic rows', () => {
    assert.ok(rows.length >= 20, `only ${rows.length} rows carry a sympy form`);
  });

  it('agrees with sympy on every symbolic row', function () {
    const run = spawnSync('python3', ['-c', SCRIPT], {
      input: JSON.stringify(rows.map((r) => r.sympy)),
      encoding: 'utf8',
      timeout: 120_000,
    });
    const missing = run.error
      ? `python3 could not be started (${run.error.message})`
      : run.status !== 0 && /No module named '?sympy/.test(run.stderr)
        ? 'python3 has no sympy module'
        : undefined;
    if (missing) {
      console.warn(
        `      sympy cross-check skipped: ${missing}. Install sympy for python3 (pip install sympy) to run it.`,
      );
      this.skip();
    }
    assert.equal(run.status, 0, `sympy script failed: ${run.stderr}`);
    const verdicts = JSON.parse(run.stdout) as boolean[];
    assert.equal(verdicts.length, rows.length);
    const disagreements: string[] = [];
    rows.forEach((row, k) => {
      const ours = checkEquivalence(row.answer, row.reference).equivalent;
      if (ours !== verdicts[k] || row.equivalent !== verdicts[k]) {
        disagreements.push(
          `${row.answer} vs ${row.reference}: checker ${ours}, sympy ${verdicts[k]}, table ${row.equivalent}`,
        );
      }
    });
    assert.deepEqual(disagreements, []);
  });
});
