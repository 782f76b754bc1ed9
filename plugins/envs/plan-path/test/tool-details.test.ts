import assert from 'node:assert/strict';
import type { Move } from '@troupe/kernel';
import { PlanPathEnvironment, type Direction } from '../src/index.js';

describe('plan-path: a tool-using proposer (the coder)', () => {
  it("shows the executor the proposer's program and its output next to the proposal", async () => {
    const env = new PlanPathEnvironment({});
    const instance = env.instance('test', 0, 1);
    const s0 = env.reset(instance);
    const moves = env.oracle!(s0, 'proposer');
    const move: Move<Direction[]> = {
      kind: 'action', action: moves, text: '```python\nprint("[U]")\n```',
      details: { program: `print(${JSON.stringify(`[${moves.join(',')}]`)})`, language: 'python', stdout: `[${moves.join(',')}]\n`, stderr: '', verdict: 'ok' },
    };
    const { state } = await env.step(s0, 'proposer', move);
    const obs = env.observe(state, 'executor');
    const program = obs.context.find((c) => c.label === 'proposer program');
    assert.ok(program, 'the executor sees the program');
    assert.match(program.text, /print\(/);
    assert.match(program.text, /Run verdict: ok/);
    assert.ok(program.text.includes(`[${moves.join(',')}]`), 'and its output');
    assert.ok(obs.context.some((c) => c.label === 'proposal'), 'the simulated proposal is still shown');
    assert.equal(env.observe(state, 'proposer').context.some((c) => c.label === 'proposer program'), false);
  });

  it('leaves the program out of the compact observation (the proposal line carries its output)', async () => {
    const env = new PlanPathEnvironment({ observation: 'compact' });
    const s0 = env.reset(env.instance('test', 0, 1));
    const moves = env.oracle!(s0, 'proposer');
    const { state } = await env.step(s0, 'proposer', {
      kind: 'action', action: moves, text: '',
      details: { program: 'print("x")', language: 'python', stdout: `[${moves.join(',')}]\n`, stderr: '', verdict: 'ok' },
    });
    const obs = env.observe(state, 'executor');
    assert.equal(obs.context.some((c) => c.label === 'proposer program'), false);
    assert.ok(obs.context.some((c) => c.label === 'proposal'), 'the proposal is shown');
  });

  it('shows no program block for a planner proposal (no tool details)', async () => {
    const env = new PlanPathEnvironment({});
    const s0 = env.reset(env.instance('test', 1, 1));
    const { state } = await env.step(s0, 'proposer', { kind: 'action', action: env.oracle!(s0, 'proposer'), text: '' });
    assert.equal(env.observe(state, 'executor').context.some((c) => c.label === 'proposer program'), false);
  });
});
