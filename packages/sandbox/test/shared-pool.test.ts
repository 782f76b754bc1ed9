import assert from 'node:assert/strict';
import { probeIsolation, SharedSandboxPool, sharedSandboxPool } from '@troupe/sandbox';

describe('sandbox: one shared pool of slots', function () {
  this.timeout(60_000);

  it('gives the same sandbox for equal settings and another for other settings', () => {
    const pool = new SharedSandboxPool({ concurrency: 2 });
    const a = pool.runner({ allowUnisolated: true, defaults: { wallMs: 3000, cpuMs: undefined } });
    assert.equal(
      pool.runner({ defaults: { wallMs: 3000 }, allowUnisolated: true }),
      a,
      'key order and undefined values do not matter',
    );
    assert.notEqual(pool.runner({ allowUnisolated: false }), a);
    assert.notEqual(pool.runner({ allowUnisolated: true, defaults: { wallMs: 3000 }, concurrency: 1 }), a);
    assert.equal(sharedSandboxPool(), sharedSandboxPool(), 'one pool per process');
  });

  it('rejects unknown and invalid settings, naming them', () => {
    const pool = new SharedSandboxPool({ concurrency: 1 });
    assert.throws(
      () => pool.runner({ isolaton: 'bwrap' } as never),
      /unknown setting isolaton \(known: isolation, allowUnisolated, concurrency, defaults\)/,
    );
    assert.throws(
      () => pool.runner({ defaults: { memoryMb: 0 } }),
      /options\.defaults\.memoryMb must be a positive integer/,
    );
    assert.throws(() => pool.runner({ concurrency: 0 }), /concurrency must be a positive integer/);
    assert.throws(() => new SharedSandboxPool({ concurrency: 1.5 }), /concurrency must be a positive integer/);
  });

  it('runs the programs of sandboxes with different settings through the same slots', async () => {
    const machine = await probeIsolation();
    const pool = new SharedSandboxPool({ concurrency: 1 });
    const strict = pool.runner({ allowUnisolated: true, defaults: { wallMs: 10_000 } });
    const loose = pool.runner({ allowUnisolated: true, defaults: { wallMs: 20_000 } });
    assert.notEqual(strict, loose);
    // Slots are taken synchronously when a run starts: with one slot, the second run waits for the first.
    const first = strict.run({ language: 'python', source: 'print("first")' });
    const second = loose.run({ language: 'python', source: 'print("second")' });
    assert.equal(pool.running, 1, 'two sandboxes, one slot: one program runs');
    const [a, b] = await Promise.all([first, second]);
    assert.equal(a.stdout, 'first\n', a.reason);
    assert.equal(b.stdout, 'second\n', b.reason);
    assert.equal(a.isolation, machine.kind === 'unavailable' ? 'none' : machine.kind);
    assert.equal(pool.running, 0);
    const wide = new SharedSandboxPool({ concurrency: 2 });
    const runs = [
      wide.runner({ allowUnisolated: true }).run({ language: 'python', source: 'print(1)' }),
      wide.runner({ allowUnisolated: true, concurrency: 1 }).run({ language: 'python', source: 'print(2)' }),
    ];
    assert.equal(wide.running, 2, 'two slots: both run');
    await Promise.all(runs);
    await Promise.all([pool.close(), wide.close()]);
  });

  it('closes every sandbox it made', async () => {
    const pool = new SharedSandboxPool({ concurrency: 1 });
    const sandbox = pool.runner({ allowUnisolated: true });
    await pool.close();
    const r = await sandbox.run({ language: 'python', source: 'print(1)' });
    assert.equal(r.verdict, 'refused');
    assert.match(r.reason ?? '', /closed/);
  });
});
