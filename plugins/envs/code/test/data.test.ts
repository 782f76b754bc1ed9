import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SPLITS } from '@troupe/kernel';
import { CodeEnvironment, outputsMatch, shippedProblems } from '@troupe/env-code';
import { sharedSandbox } from './helpers.js';

/**
 * A Python harness that runs one program on many stdin inputs in ONE sandboxed process (a fresh globals dict, stdin
 * and stdout per test), so checking 200+ golden tests costs one sandbox start per problem.
 */
function harness(source: string, inputs: readonly string[]): string {
  return `import io, json, sys, contextlib, traceback
SRC = ${JSON.stringify(source)}
INPUTS = json.loads(${JSON.stringify(JSON.stringify(inputs))})
code = compile(SRC, "<reference>", "exec")
outs = []
real_stdout = sys.stdout
for data in INPUTS:
    sys.stdin = io.StringIO(data)
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            exec(code, {"__name__": "__main__"})
    except SystemExit:
        pass
    except BaseException:
        buf.write("\\n<crash>\\n" + traceback.format_exc())
    outs.append(buf.getvalue())
real_stdout.write(json.dumps(outs))
`;
}

describe('shipped problem set (data/problems.jsonl)', () => {
  const problems = shippedProblems();

  it('has at least 24 problems, unique ids, each with at least 5 golden tests and a reference', () => {
    assert.ok(problems.length >= 24, `only ${problems.length} problems`);
    assert.equal(new Set(problems.map((p) => p.id)).size, problems.length);
    for (const p of problems) {
      assert.ok(p.tests.length >= 5, `${p.id} has ${p.tests.length} tests`);
      assert.equal(typeof p.reference, 'string', `${p.id} has no reference`);
      assert.ok(p.question.length > 40, `${p.id} has no real statement`);
    }
  });

  it('is exactly what scripts/build-problems.mjs generates', () => {
    const script = fileURLToPath(new URL('../scripts/build-problems.mjs', import.meta.url));
    const out = execFileSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
    assert.match(out, /up to date \(\d+ problems\)/);
  });

  it('every reference solution passes 100% of its golden tests in the sandbox', async () => {
    const runs = await sharedSandbox().runMany(
      problems.map((p) => ({
        language: 'python' as const,
        source: harness(
          p.reference!,
          p.tests.map((t) => t.input),
        ),
        limits: { cpuMs: 20_000, wallMs: 60_000, memoryMb: 512 },
      })),
    );
    const failures: string[] = [];
    problems.forEach((p, i) => {
      const run = runs[i]!;
      if (run.verdict !== 'ok') {
        failures.push(`${p.id}: harness ${run.verdict} ${run.reason ?? ''} ${run.stderr.slice(-300)}`);
        return;
      }
      const outs = JSON.parse(run.stdout) as string[];
      p.tests.forEach((t, j) => {
        if (!outputsMatch(outs[j]!, t.output, p.tolerance ?? null))
          failures.push(
            `${p.id} test ${j}: expected ${JSON.stringify(t.output)}, got ${JSON.stringify(outs[j]!.slice(0, 200))}`,
          );
      });
    });
    assert.deepEqual(failures, []);
    const total = problems.reduce((n, p) => n + p.tests.length, 0);
    assert.ok(total >= 24 * 5);
  });

  it('splits by content hash into the documented counts (27 train / 1 validation / 6 test), disjoint', () => {
    const env = new CodeEnvironment({}, { sandbox: sharedSandbox() });
    assert.deepEqual(Object.fromEntries(SPLITS.map((s) => [s, env.problems[s].length])), {
      train: 27,
      validation: 1,
      test: 6,
    });
    const keys = SPLITS.flatMap((s) => env.problems[s].map((p) => `${p.question}`));
    assert.equal(new Set(keys).size, problems.length);
  });
});
