import assert from 'node:assert/strict';
import type { Move } from '@troupe/kernel';
import {
  CodeEnvironment,
  shippedProblems,
  type CodeInstance,
  type CodeState,
  type ProgramAction,
  type UnitTestsAction,
} from '@troupe/env-code';
import type { RunRequest, RunResult } from '@troupe/sandbox';
import { sharedSandbox } from './helpers.js';

const act = <A>(action: A): Move<A> => ({ kind: 'action', action, text: JSON.stringify(action) });
const py = (source: string): Move<ProgramAction> => act({ language: 'python', source });
const tests = (...pairs: [string, string][]): Move<UnitTestsAction> =>
  act({ tests: pairs.map(([input, output]) => ({ input, output })) });

const problem = (id: string) => {
  const p = shippedProblems().find((x) => x.id === id);
  assert.ok(p, `no shipped problem ${id}`);
  return p;
};
const sumTrain: CodeInstance = { problem: problem('sum-of-two'), split: 'train' };
const sumTest: CodeInstance = { problem: problem('sum-of-two'), split: 'test' };

/** Right on small sums, wrong (prints 0) when |a + b| >= 10^9: fails golden test 4 (10^18 + 10^18). */
const WRONG_SUM = 'a, b = map(int, input().split())\nprint(a + b if abs(a + b) < 10**9 else 0)\n';

/** Counts runMany calls and requests (the environment must batch each step into one call). */
class CountingSandbox {
  calls: number[] = [];
  runMany(requests: readonly RunRequest[]): Promise<RunResult[]> {
    this.calls.push(requests.length);
    return sharedSandbox().runMany([...requests]);
  }
}

describe('code-v0 episodes (scripted)', () => {
  const env = new CodeEnvironment({}, { sandbox: sharedSandbox() });

  it('oracle coder and oracle tester: full pass rates, the episode ends in turn 1 with success', async () => {
    let s: CodeState = env.reset(sumTrain);
    const c = await env.step(s, 'coder', act(env.oracle(s, 'coder')));
    assert.equal(c.signals['coder_pass_rate'], 1);
    assert.equal(c.signals['team'], 1);
    assert.equal(c.signals['program_correct'], 1);
    assert.equal(c.success, false, 'success is reported when the episode ends');
    assert.deepEqual(c.done, { terminated: false, truncated: false });
    s = c.state;
    const t = await env.step(s, 'tester', act(env.oracle(s, 'tester')));
    assert.equal(t.signals['tester_reference_pass_rate'], 1);
    assert.equal(t.signals['tests_pass_rate'], 1);
    assert.equal(t.signals['tester_discrimination'], 0, 'nothing to discriminate: the program is correct');
    assert.deepEqual(t.done, { terminated: true, truncated: false });
    assert.equal(t.success, true);
    assert.equal(t.signals['success'], 1);
  });

  it('a wrong coder gets a partial pass rate: first 4 golden tests on train, all of them on test', async () => {
    const train = await env.step(env.reset(sumTrain), 'coder', py(WRONG_SUM));
    assert.equal(train.state.golden.total, 4);
    assert.equal(train.signals['coder_pass_rate'], 3 / 4);
    assert.equal(train.signals['team'], 3 / 4);
    const evalRun = await env.step(env.reset(sumTest), 'coder', py(WRONG_SUM));
    assert.equal(evalRun.state.golden.total, sumTest.problem.tests.length);
    assert.equal(evalRun.signals['coder_pass_rate'], (sumTest.problem.tests.length - 1) / sumTest.problem.tests.length);
    const capped = new CodeEnvironment({ maxGoldenTests: 2, maxGoldenTestsEval: 5 }, { sandbox: sharedSandbox() });
    assert.equal(capped.scoredTests(sumTrain).length, 2);
    assert.equal(capped.scoredTests(sumTest).length, 5);
  });

  it('tester reward is computed against the REFERENCE solution; mismatches are shown to both seats next turn', async () => {
    let s = (await env.step(env.reset(sumTrain), 'coder', py(WRONG_SUM))).state;
    // 2 of 3 tests are correct; '2 2' -> '5' is wrong (the reference prints 4).
    const t1 = await env.step(s, 'tester', tests(['1 2', '3'], ['2 2', '5'], ['10 -3', '7']));
    assert.equal(t1.signals['tester_reference_pass_rate'], 2 / 3);
    assert.deepEqual(t1.state.testsValid, [true, false, true]);
    assert.equal(t1.signals['tests_pass_rate'], 2 / 3);
    assert.equal(t1.signals['tester_discrimination'], 0, 'only the WRONG test rejects the program');
    assert.deepEqual(t1.done, { terminated: false, truncated: false });
    s = t1.state;
    assert.equal(s.turn, 1);
    for (const seat of ['coder', 'tester']) {
      const o = env.observe(s, seat);
      assert.equal(o.turn, 1);
      assert.match(o.state, /Turn 2 of 3\./);
      assert.match(o.state, /passes 2 of 3 unit tests/);
      const failing = o.context.find((c) => c.label === 'Failing unit tests');
      assert.ok(failing, `${seat} sees the failing tests`);
      assert.match(
        failing.text,
        /Test 2 failed\.\nInput:\n```\n2 2\n```\nExpected output:\n```\n5\n```\nGot:\n```\n4\n```/,
      );
      assert.doesNotMatch(
        JSON.stringify(o),
        /10000000000000000000|2000000000000000000/,
        'golden tests are never shown',
      );
    }
    // Turn 2: the coder resubmits the same wrong program; a correct test that catches it earns discrimination.
    s = (await env.step(s, 'coder', py(WRONG_SUM))).state;
    const t2 = await env.step(s, 'tester', tests(['1 2', '3'], ['1000000000 1000000000', '2000000000']));
    assert.equal(t2.signals['tester_reference_pass_rate'], 1);
    assert.equal(t2.signals['tester_discrimination'], 1);
    assert.equal(t2.signals['tester_reward'], 1, 'discriminationWeight defaults to 0');
    const weighted = new CodeEnvironment({ discriminationWeight: 0.5 }, { sandbox: sharedSandbox() });
    const w2 = await weighted.step(s, 'tester', tests(['1 2', '3'], ['1000000000 1000000000', '2000000000']));
    assert.equal(w2.signals['tester_reward'], 1.5);
    assert.equal(t2.signals['coder_pass_rate'], 3 / 4);
    // Turn 3 (last): nothing passes everything, the episode is truncated without success.
    s = (await env.step(t2.state, 'coder', py(WRONG_SUM))).state;
    const t3 = await env.step(s, 'tester', tests(['1 2', '3']));
    assert.deepEqual(
      t3.done,
      { terminated: true, truncated: false },
      "the program passes all of the tester's tests: the episode ends",
    );
    assert.equal(t3.success, false, 'but it fails the golden tests');
  });

  it('ends truncated after T turns; success then reflects the final program', async () => {
    const short = new CodeEnvironment({ maxTurns: 1 }, { sandbox: sharedSandbox() });
    let s = (await short.step(short.reset(sumTrain), 'coder', py(WRONG_SUM))).state;
    const t = await short.step(s, 'tester', tests(['2 2', '5']));
    assert.deepEqual(t.done, { terminated: false, truncated: true });
    assert.equal(t.success, false);
    s = (await short.step(short.reset(sumTrain), 'coder', act(short.oracle(short.reset(sumTrain), 'coder')))).state;
    const t2 = await short.step(s, 'tester', tests(['2 2', '5']));
    assert.deepEqual(
      t2.done,
      { terminated: true, truncated: false },
      'a correct final program is a solved terminal state',
    );
    assert.equal(t2.success, true);
  });

  it('stderr warnings with exit code 0 are not failures; crashes show the verdict and trimmed stderr', async () => {
    const warn =
      'import sys\nprint("DeprecationWarning: careful", file=sys.stderr)\na, b = map(int, input().split())\nprint(a + b)\n';
    const ok = await env.step(env.reset(sumTrain), 'coder', py(warn));
    assert.equal(ok.signals['coder_pass_rate'], 1);
    const crash =
      'import sys\na, b = map(int, input().split())\nif a == 1:\n    print("noise " * 400, file=sys.stderr)\n    raise ValueError("boom")\nprint(a + b)\n';
    const c = await env.step(env.reset(sumTrain), 'coder', py(crash));
    assert.equal(c.signals['coder_pass_rate'], 1, 'no golden test of the first 4 has a = 1');
    const t = await env.step(c.state, 'tester', tests(['1 2', '3'], ['3 4', '7']));
    assert.equal(t.signals['tests_pass_rate'], 1 / 2);
    const failing = env.observe(t.state, 'coder').context.find((x) => x.label === 'Failing unit tests')!;
    assert.match(failing.text, /The program crashed \(exit code 1\) \[verdict: runtime-error\]\.\nstderr \(end\):/);
    assert.match(
      failing.text,
      /\[\d+ characters cut\]…[\s\S]*ValueError: boom\n```$/,
      'the END of stderr (the traceback) is kept',
    );
    assert.ok(failing.text.length < 2500, 'stderr is trimmed');
    assert.equal(env.observe(t.state, 'coder').data!['failures'] instanceof Array, true);
  });

  it('a timeout is a failure with its verdict shown', async () => {
    const slow = new CodeEnvironment(
      { maxGoldenTests: 1, limits: { cpuMs: 1000, wallMs: 3000 } },
      { sandbox: sharedSandbox() },
    );
    const c = await slow.step(slow.reset(sumTrain), 'coder', py('while True:\n    pass\n'));
    assert.equal(c.signals['coder_pass_rate'], 0);
    const t = await slow.step(c.state, 'tester', tests(['1 2', '3']));
    assert.match(
      slow.observe(t.state, 'tester').context.find((x) => x.label === 'Failing unit tests')!.text,
      /timed out \[verdict: timeout\]/,
    );
  });

  it('JavaScript programs run too', async () => {
    const js =
      "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(BigInt);\nconsole.log(String(a + b));\n";
    const r = await env.step(env.reset(sumTrain), 'coder', act({ language: 'javascript', source: js }));
    assert.equal(r.signals['coder_pass_rate'], 1);
  });

  it('invalid moves: zero rewards, the error is shown next turn, the episode goes on', async () => {
    const c = await env.step(env.reset(sumTrain), 'coder', {
      kind: 'invalid',
      error: 'no fenced code block found',
      text: 'hello',
    });
    assert.equal(c.signals['coder_pass_rate'], 0);
    assert.equal(c.signals['valid'], 0);
    assert.match(
      env.observe(c.state, 'tester').state,
      /Program: none; the coder's output in turn 1 could not be used: no fenced code block found/,
    );
    const t = await env.step(c.state, 'tester', { kind: 'invalid', error: 'no test found', text: '' });
    assert.equal(t.signals['tester_reference_pass_rate'], 0);
    assert.deepEqual(t.done, { terminated: false, truncated: false });
    assert.match(
      env.observe(t.state, 'coder').state,
      /Unit tests: none; the tester's output in turn 1 could not be used: no test found/,
    );
    const bad = await env.step(t.state, 'coder', act({ language: 'cobol', source: 'x' } as unknown as ProgramAction));
    assert.equal(bad.signals['valid'], 0);
  });

  it('each step batches its executions into one runMany call', async () => {
    const counting = new CountingSandbox();
    // Limits of its own: no run cached by another test has the same key.
    const e = new CodeEnvironment({ limits: { maxFileBytes: 1_048_577 } }, { sandbox: counting });
    const inst: CodeInstance = { problem: problem('reverse-string'), split: 'train' };
    let s = (await e.step(e.reset(inst), 'coder', py('print(input()[::-1])\n'))).state;
    s = (await e.step(s, 'tester', tests(['ab', 'ba'], ['abc', 'cba']))).state;
    // coder: 4 golden runs; tester: 2 reference runs + 1 program run ('ab' is also golden test 4: already run).
    assert.deepEqual(counting.calls, [4, 3]);
    assert.equal(s.done, true);
    // A (program, input) pair runs once: another tester branch with the same inputs but other expected outputs, or
    // a test repeated in one set, costs no new run.
    const s1 = (await e.step(e.reset(inst), 'coder', py('print(input()[::-1])\n'))).state;
    assert.equal(counting.calls.length, 2, "the coder's golden runs were cached");
    const other = await e.step(s1, 'tester', tests(['ab', 'ab'], ['abc', 'xyz'], ['ab', 'ba']));
    assert.equal(counting.calls.length, 2, 'no new run');
    assert.deepEqual(other.state.testsValid, [false, false, true]);
    assert.equal(other.signals['tests_pass_rate'], 1 / 3);
    const uncached = new CodeEnvironment({ limits: { maxFileBytes: 1_048_577 }, cacheSize: 0 }, { sandbox: counting });
    await uncached.step(uncached.reset(inst), 'coder', py('print(input()[::-1])\n'));
    assert.deepEqual(counting.calls.slice(2), [4], 'cacheSize 0 runs again');
  });

  it('refuses to step out of turn, after the end, or for an unknown seat', async () => {
    const s = env.reset(sumTrain);
    await assert.rejects(
      async () => env.step(s, 'tester', tests(['1 2', '3'])),
      /it is the coder's turn, not the tester's/,
    );
    await assert.rejects(async () => env.step(s, 'judge', py('print(1)')), /unknown seat "judge"/);
  });

  it('single-seat variant (seats: [coder]) is one-shot: one step, terminated, success from the golden tests', async () => {
    const single = new CodeEnvironment({ seats: ['coder'] }, { sandbox: sharedSandbox() });
    assert.deepEqual(
      single.seats.map((x) => x.name),
      ['coder'],
    );
    assert.equal(single.maxTurns, 1);
    assert.deepEqual(
      single.actionTypes.map((a) => a.name),
      ['program'],
    );
    const o = single.observe(single.reset(sumTrain), 'coder');
    assert.doesNotMatch(o.task, /tester/);
    const r = await single.step(single.reset(sumTrain), 'coder', act(single.oracle(single.reset(sumTrain), 'coder')));
    assert.deepEqual(r.done, { terminated: true, truncated: false });
    assert.equal(r.success, true);
    const w = await single.step(single.reset(sumTrain), 'coder', py(WRONG_SUM));
    assert.equal(w.success, false);
    assert.equal(w.signals['coder_pass_rate'], 3 / 4);
  });

  it('instances are deterministic per (split, index, seed), cover the split, and states are frozen', () => {
    const a = Array.from({ length: 27 }, (_, i) => env.instance('train', i, 5).problem.id);
    const b = Array.from({ length: 27 }, (_, i) => env.instance('train', i, 5).problem.id);
    assert.deepEqual(a, b);
    assert.equal(new Set(a).size, 27, 'one epoch visits every train problem once');
    assert.notDeepEqual(
      a,
      Array.from({ length: 27 }, (_, i) => env.instance('train', i, 6).problem.id),
    );
    const s = env.reset(env.instance('test', 0, 1));
    assert.ok(Object.isFrozen(s));
    assert.equal(env.describe(s.instance)['split'], 'test');
    assert.equal(env.describe(s.instance)['scoredGoldenTests'], s.instance.problem.tests.length);
  });
});
