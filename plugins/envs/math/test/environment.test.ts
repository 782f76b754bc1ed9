import assert from 'node:assert/strict';
import { createRng, type Move, type StepResult } from '@troupe/kernel';
import { MathEnvironment, type MathAction, type MathProblem, type MathState } from '../src/index.js';
import { LocalPythonSandbox, PrintSandbox, ScriptedSandbox } from './helpers/local-python.js';

const PROBLEM: MathProblem = { question: 'What is 3/4 of 60?', answer: '45', source: 'test' };
const FRACTION: MathProblem = { question: 'What is 1/2 + 1/4?', answer: '\\frac{3}{4}', source: 'test' };

/** An `action` move. */
function act(action: MathAction): Move<MathAction> {
  return { kind: 'action', action, text: JSON.stringify(action) };
}
/** A program move printing `text`. */
function prints(text: string): Move<MathAction> {
  return act({ language: 'python', source: `print(${JSON.stringify(text)})\n` });
}
/** An answer move. */
function answer(text: string): Move<MathAction> {
  return act({ answer: text });
}

/** Deep-freezes a value so any mutation by the environment throws. */
function freeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) freeze(v);
  }
  return value;
}

/** Plays seat moves in order on `problem`, returning every step result. */
async function play(
  env: MathEnvironment,
  problem: MathProblem,
  moves: readonly Move<MathAction>[],
): Promise<StepResult<MathState>[]> {
  let state = freeze(env.reset(problem));
  const results: StepResult<MathState>[] = [];
  for (const move of moves) {
    const seat = env.seats[state.seatIndex]!.name;
    const before = JSON.stringify(state);
    const result = await env.step(state, seat, move);
    assert.equal(JSON.stringify(state), before, 'step mutated its input state');
    results.push(result);
    state = freeze(result.state);
    if (result.done.terminated || result.done.truncated) break;
  }
  return results;
}

describe('math-v0 environment', () => {
  /** Real python3 (no isolation; trusted test programs) where running Python matters. */
  const python = new LocalPythonSandbox();
  /** A fast print interpreter for the episode logic. */
  const fake = new PrintSandbox();

  it('has the coder then the solver seat, with the program and answer action types', () => {
    const env = new MathEnvironment({}, { sandbox: fake });
    assert.deepEqual(
      env.seats.map((s) => [s.name, s.actionType]),
      [
        ['coder', 'program'],
        ['solver', 'answer'],
      ],
    );
    assert.deepEqual(
      env.actionTypes.map((t) => t.name),
      ['program', 'answer'],
    );
    assert.equal(env.maxTurns, 3);
    assert.equal(env.id, 'math-v0');
  });

  it('oracle episode (the generated problem program, run by python3): correct, agreeing, documented rewards', async () => {
    const env = new MathEnvironment({ families: ['linear'] }, { sandbox: python });
    const state = env.reset(env.instance('train', 0, 0));
    const coder = await env.step(state, 'coder', act(env.oracle(state, 'coder')));
    assert.deepEqual(coder.signals, { coder_reward: 1, solver_correct: 0, team: 0, answer_undecided: 0 });
    assert.equal(coder.done.terminated || coder.done.truncated, false);
    const solver = await env.step(coder.state, 'solver', act(env.oracle(coder.state, 'solver')));
    assert.deepEqual(solver.signals, { solver_correct: 1, team: 1, coder_reward: 1, answer_undecided: 0 });
    assert.deepEqual(solver.done, { terminated: true, truncated: false });
    assert.equal(solver.success, true);
    assert.equal(solver.state.done, true);
    assert.equal(solver.info!.agree, true);
  });

  it('equivalent forms agree: program prints 0.75, solver answers \\frac{3}{4}', async () => {
    const env = new MathEnvironment({}, { sandbox: fake });
    const [c, s] = await play(env, FRACTION, [prints('0.75'), answer('\\frac34')]);
    assert.equal(c!.signals.coder_reward, 1);
    assert.equal(s!.signals.solver_correct, 1);
    assert.equal(s!.done.terminated, true);
  });

  it('wrong and disagreeing answers run T turns and end truncated, unsuccessful', async () => {
    const env = new MathEnvironment({ maxTurns: 2 }, { sandbox: fake });
    const results = await play(env, PROBLEM, [prints('44'), answer('46'), prints('45'), answer('40'), prints('1')]);
    assert.equal(results.length, 4);
    assert.deepEqual(
      results.map((r) => r.signals.coder_reward),
      [0, 0, 1, 1],
    );
    assert.deepEqual(
      results.map((r) => r.signals.solver_correct),
      [0, 0, 0, 0],
    );
    assert.deepEqual(
      results.map((r) => r.signals.team),
      [0, 0, 0, 0],
    );
    assert.deepEqual(results[3]!.done, { terminated: false, truncated: true });
    assert.equal(results[3]!.success, false);
  });

  it('a correct solver wins the episode even when the coder is wrong; the team signal follows the solver', async () => {
    const env = new MathEnvironment({ maxTurns: 2 }, { sandbox: fake });
    const results = await play(env, PROBLEM, [prints('44'), answer('45'), prints('45'), answer('45')]);
    assert.deepEqual(
      results.map((r) => r.signals.team),
      [0, 1, 1, 1],
    );
    assert.deepEqual(
      results.map((r) => r.signals.coder_reward),
      [0, 0, 1, 1],
    );
    assert.equal(results[1]!.success, true);
    assert.equal(results[1]!.done.terminated, false, 'answers 44 and 45 do not agree');
    assert.deepEqual(results[3]!.done, { terminated: true, truncated: false });
  });

  it('agreeing on a wrong answer ends the episode unsuccessfully', async () => {
    const env = new MathEnvironment({}, { sandbox: fake });
    const [, s] = await play(env, PROBLEM, [prints('50'), answer('50.0')]);
    assert.deepEqual(s!.done, { terminated: true, truncated: false });
    assert.equal(s!.success, false);
    assert.deepEqual(s!.signals, { solver_correct: 0, team: 0, coder_reward: 0, answer_undecided: 0 });
  });

  it('coder crash, timeout and unparseable program cost −1; stderr warnings with exit 0 do not', async () => {
    const env = new MathEnvironment({}, { sandbox: python });
    const crash = await play(env, PROBLEM, [act({ language: 'python', source: 'print(45)\nraise SystemExit(3)\n' })]);
    assert.equal(crash[0]!.signals.coder_reward, -1, 'non-zero exit is a crash even after printing the right answer');
    const warn = await play(env, PROBLEM, [
      act({
        language: 'python',
        source: 'import sys, warnings\nwarnings.warn("deprecated")\nprint("note", file=sys.stderr)\nprint(45)\n',
      }),
    ]);
    assert.equal(warn[0]!.signals.coder_reward, 1);
    const invalid = await play(env, PROBLEM, [{ kind: 'invalid', error: 'no ```python block', text: 'I think 45' }]);
    assert.equal(invalid[0]!.signals.coder_reward, -1);
    const badLanguage = await play(env, PROBLEM, [act({ language: 'ruby', source: 'puts 45' } as never)]);
    assert.equal(badLanguage[0]!.signals.coder_reward, -1);
    const timeout = new MathEnvironment(
      {},
      {
        sandbox: new ScriptedSandbox(() => ({ verdict: 'timeout', exitCode: null, signal: 'SIGKILL', stdout: '45\n' })),
      },
    );
    assert.equal((await play(timeout, PROBLEM, [prints('45')]))[0]!.signals.coder_reward, -1);
    const silent = await play(env, PROBLEM, [act({ language: 'python', source: 'x = 45\n' })]);
    assert.equal(silent[0]!.signals.coder_reward, 0, 'printing nothing is a wrong answer, not a crash');
  });

  it('an invalid solver move scores 0 and the episode goes on', async () => {
    const env = new MathEnvironment({}, { sandbox: fake });
    const results = await play(env, PROBLEM, [
      prints('45'),
      { kind: 'invalid', error: 'no \\boxed{} answer found', text: '45' },
      prints('45'),
      answer('45'),
    ]);
    assert.equal(results[1]!.signals.solver_correct, 0);
    assert.equal(results[1]!.done.terminated, false);
    assert.equal(results[3]!.done.terminated, true);
    assert.equal(results[3]!.success, true);
  });

  it('each seat sees both histories (the program, its output, the answers) but never the reference or a verdict', async () => {
    const env = new MathEnvironment({}, { sandbox: python });
    const s0 = env.reset({ question: 'What is 6 times 7?', answer: '42', source: 'test' });
    const coderObs0 = env.observe(s0, 'coder');
    assert.equal(coderObs0.context.length, 0);
    assert.match(coderObs0.task, /What is 6 times 7\?/);
    const c = await env.step(
      s0,
      'coder',
      act({ language: 'python', source: 'import sys\nprint("checking", file=sys.stderr)\nprint(6 * 8)\n' }),
    );
    const solverObs = env.observe(c.state, 'solver');
    assert.deepEqual(
      solverObs.context.map((x) => x.label),
      ["Coder's program (turn 1)", 'Program output (turn 1)'],
    );
    assert.match(solverObs.context[0]!.text, /print\(6 \* 8\)/);
    assert.match(solverObs.context[1]!.text, /Program's answer \(last printed line\): 48/);
    assert.doesNotMatch(solverObs.context[1]!.text, /checking/, 'stderr of a successful run is not shown');
    const s = await env.step(c.state, 'solver', answer('56'));
    const coderObs1 = env.observe(s.state, 'coder');
    assert.equal(coderObs1.turn, 1);
    assert.match(coderObs1.state, /Turn 2 of 3/);
    assert.deepEqual(
      coderObs1.context.map((x) => x.label),
      ["Coder's program (turn 1)", 'Program output (turn 1)', "Solver's answer (turn 1)"],
    );
    assert.equal(coderObs1.context[2]!.text, '\\boxed{56}');
    const everything = JSON.stringify([coderObs1, env.observe(s.state, 'solver')]);
    assert.doesNotMatch(everything, /42|correct|reward/);
  });

  it("accepts a bare-string answer and shows a tool-using solver's program and output (tool details convention)", async () => {
    const env = new MathEnvironment({}, { sandbox: fake });
    const s0 = env.reset(PROBLEM);
    const c = await env.step(s0, 'coder', prints('44'));
    const move: Move<MathAction> = {
      kind: 'action',
      action: '45' as unknown as MathAction,
      text: '```python\nprint(45)\n```',
      details: { program: 'print(45)\n', language: 'python', stdout: '45\n', stderr: '', verdict: 'ok' },
    };
    const s = await env.step(c.state, 'solver', move);
    assert.equal(s.signals.solver_correct, 1);
    const context = env.observe(s.state, 'coder').context;
    assert.deepEqual(
      context.slice(2).map((x) => x.label),
      ["Solver's program (turn 1)", "Solver's answer (turn 1)"],
    );
    assert.match(context[2]!.text, /print\(45\)/);
    assert.match(context[2]!.text, /Run verdict: ok/);
  });

  it('shows the error of a crashed program to the next seat', async () => {
    const env = new MathEnvironment({}, { sandbox: python });
    const s0 = env.reset(PROBLEM);
    const c = await env.step(s0, 'coder', act({ language: 'python', source: 'print(1 / 0)\n' }));
    const text = env.observe(c.state, 'solver').context[1]!.text;
    assert.match(text, /runtime-error, exit code 1/);
    assert.match(text, /ZeroDivisionError/);
  });

  it('single-agent baseline: seats ["solver"] ends at the first readable answer', async () => {
    const env = new MathEnvironment({ seats: ['solver'] });
    assert.deepEqual(
      env.seats.map((s) => s.name),
      ['solver'],
    );
    assert.deepEqual(
      env.actionTypes.map((t) => t.name),
      ['answer'],
    );
    const results = await play(env, PROBLEM, [{ kind: 'invalid', error: 'no box', text: '' }, answer('45')]);
    assert.deepEqual(
      results.map((r) => r.done),
      [
        { terminated: false, truncated: false },
        { terminated: true, truncated: false },
      ],
    );
    assert.deepEqual(results[1]!.signals, { solver_correct: 1, team: 1, coder_reward: 0, answer_undecided: 0 });
    const wrong = await play(env, PROBLEM, [answer('44')]);
    assert.deepEqual(wrong[0]!.done, { terminated: true, truncated: false });
    assert.equal(wrong[0]!.success, false);
    assert.throws(() => env.observe(env.reset(PROBLEM), 'coder'), /unknown seat "coder"/);
  });

  it('rejects bad configs, out-of-order seats and steps after the end, with clear errors', async () => {
    assert.throws(() => new MathEnvironment({ seats: ['solver', 'coder'] }), /config\.seats must be/);
    assert.throws(() => new MathEnvironment({ maxTurns: 0 }), /maxTurns must be a positive integer/);
    const env = new MathEnvironment({}, { sandbox: fake });
    await assert.rejects(
      async () => env.step(env.reset(PROBLEM), 'solver', answer('45')),
      /it is the coder's move, not the solver's/,
    );
    const [, end] = await play(env, PROBLEM, [prints('45'), answer('45')]);
    await assert.rejects(async () => env.step(end!.state, 'coder', prints('45')), /finished episode/);
  });

  it('a sandbox that refuses to run says what to do', async () => {
    const env = new MathEnvironment(
      {},
      {
        sandbox: new ScriptedSandbox(() => ({ verdict: 'refused', exitCode: null, reason: 'no isolation available' })),
      },
    );
    await assert.rejects(
      async () => env.step(env.reset(PROBLEM), 'coder', prints('45')),
      /sandbox refused .*no isolation available.*allowUnisolated/,
    );
  });

  it('oracle and random actions have the right shapes', () => {
    const env = new MathEnvironment({}, { sandbox: fake });
    const generated = env.instance('train', 0, 0);
    const state = env.reset(generated);
    assert.deepEqual(env.oracle(state, 'solver'), { answer: generated.answer });
    assert.equal((env.oracle(state, 'coder') as { source: string }).source, generated.program);
    assert.deepEqual(env.oracle(env.reset(FRACTION), 'coder'), {
      language: 'python',
      source: 'print("\\\\frac{3}{4}")\n',
    });
    const rng = createRng(1);
    for (let k = 0; k < 20; k++) {
      const a = env.randomAction(state, 'solver', rng) as { answer: string };
      assert.match(a.answer, /^\d+$/);
      assert.ok(Number(a.answer) <= 20);
      assert.match((env.randomAction(state, 'coder', rng) as { source: string }).source, /^print\(\d+\)\n$/);
    }
  });

  it('instance keys are content hashes; describe includes the key', () => {
    const env = new MathEnvironment({}, { sandbox: fake });
    const p = env.instance('test', 5, 2);
    assert.match(env.instanceKey(p), /^[0-9a-f]{64}$/);
    assert.equal(env.instanceKey({ ...p }), env.instanceKey(p));
    assert.equal(env.describe(p).key, env.instanceKey(p));
  });

  describe('with the real @troupe/sandbox (created by the environment on first use)', () => {
    const env = new MathEnvironment({
      families: ['counting'],
      sandbox: { allowUnisolated: true, limits: { wallMs: 5000 } },
    });
    after(() => env.dispose());

    it('runs the oracle program (coder_reward 1) and a crashing one (−1); stderr warnings do not fail a run', async () => {
      const state = env.reset(env.instance('test', 0, 1));
      const oracle = await env.step(state, 'coder', act(env.oracle(state, 'coder')));
      assert.equal(oracle.signals.coder_reward, 1, JSON.stringify(oracle.info));
      assert.ok(['bwrap', 'unshare', 'none'].includes(String(oracle.info!.isolation)));
      const crash = await env.step(
        state,
        'coder',
        act({ language: 'python', source: 'import sys\nprint("x", file=sys.stderr)\nprint(1)\nsys.exit(2)\n' }),
      );
      assert.equal(crash.signals.coder_reward, -1);
      const warned = await env.step(
        state,
        'coder',
        act({
          language: 'python',
          source: `import sys\nprint("warning: slow", file=sys.stderr)\nprint(${JSON.stringify(state.problem.answer)})\n`,
        }),
      );
      assert.equal(warned.signals.coder_reward, 1);
    });
  });
});
