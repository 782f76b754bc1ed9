/**
 * The process's shared services reach the plugins that need them: one sandbox pool for the code environment and the
 * coder role (two packages), bound once on the host, never a sandbox of their own.
 */
import assert from 'node:assert/strict';
import {
  createHostFor,
  SandboxPool,
  type ProgramRun,
  type ProgramRunner,
  type ProgramRunResult,
  type SandboxSettings,
} from '@troupe/kernel';

/** A pool whose runners answer every program with `print`'s argument as stdout, recording who asked with what. */
class RecordingPool implements SandboxPool {
  readonly concurrency = 1;
  readonly asked: SandboxSettings[] = [];
  readonly runs: ProgramRun[] = [];
  runner(settings: SandboxSettings = {}): ProgramRunner {
    this.asked.push(settings);
    const run = async (r: ProgramRun): Promise<ProgramRunResult> => {
      this.runs.push(r);
      const printed = /print\("(.*)"\)/.exec(r.source)?.[1] ?? '';
      return {
        verdict: 'ok',
        exitCode: 0,
        signal: null,
        stdout: `${printed}\n`,
        stderr: '',
        wallMs: 1,
        truncated: false,
        isolation: 'bwrap',
      };
    };
    return { run, runMany: (rs) => Promise.all(rs.map(run)) };
  }
  async close(): Promise<void> {}
}

describe('shared services across plugins', () => {
  it('the code environment and the coder role run their programs through the one pool the host binds', async () => {
    const host = createHostFor(undefined);
    const pool = new RecordingPool();
    host.container.bind(SandboxPool).toConstantValue(pool);
    const env = (await host.ensure('environments', 'code')).contribution as { options: { pool: unknown } };
    const coder = (await host.ensure('roles', 'coder-proposer')).contribution as { pool: unknown };
    assert.equal(env.options.pool, pool, 'the environment holds the bound pool');
    assert.equal(coder.pool, pool, 'the role holds the same instance');

    const environment = host.createEnvironment('code', { sandbox: { concurrency: 1 } });
    const state = environment.reset(environment.instance('test', 0, 7));
    await environment.step(state, 'coder', {
      kind: 'action',
      action: { language: 'python', source: 'print("no")\n' },
      text: '',
    });
    const role = host.createRole('coder-proposer', { sandbox: { allowUnisolated: true } });
    const move = await role.parse('```python\nprint("[U, R]")\n```', { seat: 'proposer', actionType: 'moves' });
    assert.deepEqual(move.kind === 'action' ? move.action : move, ['U', 'R']);

    assert.deepEqual(
      pool.asked,
      [{ concurrency: 1 }, { allowUnisolated: true }],
      'each asked the pool for a runner with its own settings',
    );
    assert.ok(pool.runs.length >= 2, 'and both ran their programs there');
    assert.ok(pool.runs.some((r) => r.source.includes('[U, R]')) && pool.runs.some((r) => r.source.includes('"no"')));
  });
});
