import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Move } from '@troupe/kernel';
import { extractLastBoxed, MathEnvironment, rowToProblem, type DatasetFormat, type MathAction } from '../src/index.js';

/** The five dataset formats, 20 whole model responses each, with whether each response's answer is right. */
const FORMATS: readonly Exclude<DatasetFormat, 'auto'>[] = ['gsm8k', 'math', 'aime', 'olympiadbench', 'polaris'];

/** The move a `\boxed{}`-reading solver role makes from a reply: its last box, or invalid without one. */
function solverMove(text: string): Move<MathAction> {
  const boxed = extractLastBoxed(text);
  return boxed === undefined
    ? { kind: 'invalid', error: 'no \\boxed{} answer found', text }
    : { kind: 'action', action: { answer: boxed }, text };
}

describe('math-v0 reward on whole responses of each dataset format', () => {
  const env = new MathEnvironment({ seats: ['solver'], extraction: 'lenient' });
  const boxedOnly = new MathEnvironment({ seats: ['solver'] });

  for (const format of FORMATS) {
    it(`${format}: the solver reward matches the expected correctness on all 20 responses`, async () => {
      const file = fileURLToPath(new URL(`./fixtures/responses/${format}.jsonl`, import.meta.url));
      const rows = readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      assert.equal(rows.length, 20);
      assert.ok(rows.some((r) => r.correct) && rows.some((r) => !r.correct));
      const mismatches: string[] = [];
      for (const [k, row] of rows.entries()) {
        const problem = rowToProblem(row, { path: file, format }, `${format}.jsonl:${k + 1}`);
        const step = await env.step(env.reset(problem), 'solver', solverMove(String(row.response)));
        if (step.signals.solver_correct !== (row.correct ? 1 : 0)) {
          mismatches.push(
            `line ${k + 1}: reward ${step.signals.solver_correct}, expected ${row.correct ? 1 : 0} (${JSON.stringify(step.info)})`,
          );
        }
        assert.equal(step.signals.answer_undecided, 0);
      }
      assert.deepEqual(mismatches, []);
    });
  }

  it('boxed mode (the default) gives no reward to a right answer that is not boxed', async () => {
    const problem = rowToProblem({ problem: 'p', answer: '12' }, { path: 'inline', format: 'polaris' }, 'inline');
    const text = 'Counting gives twelve.\n\n**Answer:** 12';
    assert.equal((await env.step(env.reset(problem), 'solver', solverMove(text))).signals.solver_correct, 1);
    const strict = await boxedOnly.step(boxedOnly.reset(problem), 'solver', solverMove(text));
    assert.equal(strict.signals.solver_correct, 0);
    assert.equal(strict.info?.error, 'no \\boxed{} answer found');
  });

  it('reports an answer the checker cannot decide in the answer_undecided signal, and counts it wrong', async () => {
    const problem = rowToProblem({ problem: 'p', answer: '42' }, { path: 'inline', format: 'polaris' }, 'inline');
    const step = await boxedOnly.step(
      boxedOnly.reset(problem),
      'solver',
      solverMove('So it is \\boxed{42+9^{9^{9}}-9^{9^{9}}}.'),
    );
    assert.equal(step.signals.solver_correct, 0);
    assert.equal(step.signals.answer_undecided, 1);
    assert.equal(step.info?.undecided, true);
  });

  it('reads an OlympiadBench row by its fields: the answer list and the unit', () => {
    const problem = rowToProblem(
      { question: 'q', final_answer: ['$3$', '$5$'], unit: 'm' },
      { path: 'inline' },
      'inline',
    );
    assert.deepEqual([problem.source, problem.answer, problem.unit], ['olympiadbench', '3, 5', 'm']);
  });

  it('drops a <think> block before reading the box', async () => {
    const problem = rowToProblem({ problem: 'p', answer: '9' }, { path: 'inline', format: 'polaris' }, 'inline');
    const inside = await boxedOnly.step(
      boxedOnly.reset(problem),
      'solver',
      solverMove('<think>it is \\boxed{9}, or not</think>\nThe count is \\boxed{8}.'),
    );
    assert.equal(inside.signals.solver_correct, 0);
    assert.equal(inside.info?.answer, '8');
  });
});
