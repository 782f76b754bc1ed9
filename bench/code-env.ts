/**
 * What does one step of the code environment cost? Every (program, test) pair of a step runs in the sandbox through
 * one runMany call. Measures, on the shipped problems (train split, 4 scored golden tests):
 *   coder step, cold   — K distinct programs (the tree sampler's branches) on the golden tests, nothing cached
 *   coder step, cached — the same K programs again (outcomes are cached by content)
 *   tester step        — K test sets with the same 3 inputs and different expected outputs (the usual tester group):
 *                        each input runs once with the reference and once with the current program
 * Run: npx tsx --conditions=troupe:source bench/code-env.ts [problems=4] [branches=4] [concurrency=2]
 */
import { Sandbox, probeIsolation } from '@troupe/sandbox';
import { CodeEnvironment, type CodeState, type ProgramAction, type UnitTestsAction } from '@troupe/env-code';

const [PROBLEMS, K, CONCURRENCY] = [4, 4, 2].map((d, i) => Number(process.argv[2 + i] ?? d)) as [
  number,
  number,
  number,
];
const sandbox = new Sandbox({ concurrency: CONCURRENCY });
const env = new CodeEnvironment({}, { sandbox });

const time = async (f: () => Promise<unknown>): Promise<number> => {
  const t = performance.now();
  await f();
  return performance.now() - t;
};
const rows: Record<string, number[]> = { 'coder step, cold': [], 'coder step, cached': [], 'tester step': [] };
let runs = 0;
for (let p = 0; p < PROBLEMS; p++) {
  const s0: CodeState = env.reset(env.instance('train', p, 1));
  const reference = env.oracle(s0, 'coder') as { language: 'python'; source: string };
  // K distinct programs: the reference with a different trailing comment each (distinct content, same behaviour).
  const programs = Array.from({ length: K }, (_, k) => ({
    ...reference,
    source: `${reference.source}# branch ${k} ${Date.now()}\n`,
  }));
  const step = (s: CodeState, seat: string, action: ProgramAction | UnitTestsAction) =>
    env.step(s, seat, { kind: 'action', action, text: '' });
  rows['coder step, cold']!.push(await time(() => Promise.all(programs.map((a) => step(s0, 'coder', a)))));
  rows['coder step, cached']!.push(await time(() => Promise.all(programs.map((a) => step(s0, 'coder', a)))));
  const s1 = (await step(s0, 'coder', programs[0]!)).state;
  const testSets = Array.from({ length: K }, (_, k) => ({
    tests: s0.instance.problem.tests
      .slice(0, 3)
      .map((t) => ({ input: t.input, output: `${t.output}`.trimEnd() + ' '.repeat(k) + '\n' })),
  }));
  rows['tester step']!.push(await time(() => Promise.all(testSets.map((a) => step(s1, 'tester', a)))));
  runs += K * env.scoredTests(s0.instance).length + 3 * 2;
}
await sandbox.close();
console.log(
  `code-v0 steps: ${PROBLEMS} problems, K = ${K} branches, sandbox concurrency ${CONCURRENCY}, isolation ${(await probeIsolation()).kind}`,
);
for (const [name, ms] of Object.entries(rows)) {
  const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
  console.log(
    `  ${name.padEnd(20)} ${mean.toFixed(0).padStart(6)} ms per step of ${K} branches (${(mean / K).toFixed(0)} ms per branch)`,
  );
}
console.log(`  sandbox runs (uncached): ${runs}`);
