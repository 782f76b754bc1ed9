import assert from 'node:assert/strict';
import { initBackend, probeBackends, currentBackend, tf } from '@troupe/lm';

describe('backend selection', () => {
  it('probeBackends lists every backend in order and names one it would use', () => {
    const p = probeBackends({});
    assert.deepEqual(
      p.probes.map((x) => x.backend),
      ['tensorflow-gpu', 'tensorflow', 'webgpu', 'wasm', 'cpu'],
    );
    // without an adapter probe, webgpu is never counted for auto (a software adapter must not win over wasm)
    assert.equal(p.probes.find((x) => x.backend === 'webgpu')!.available, false);
    assert.ok(p.wouldUse, 'cpu is always available');
    assert.equal(p.probes.find((x) => x.backend === 'cpu')!.available, true);
    assert.equal(probeBackends({ TROUPE_BACKEND: 'cpu' }).wouldUse, 'cpu');
  });

  it('rejects an unknown backend name, naming its source', async () => {
    await assert.rejects(initBackend({ env: { TROUPE_BACKEND: 'tpu' } }), (err: Error) => {
      assert.equal(err.name, 'BackendError'); // the CLI prints it as the user's to fix, without a stack trace
      assert.match(err.message, /TROUPE_BACKEND: unknown backend 'tpu'/);
      return true;
    });
  });

  it('honours TROUPE_BACKEND=cpu and reports the choice', async () => {
    const r = await initBackend({ env: { TROUPE_BACKEND: 'cpu' } });
    assert.equal(r.backend, 'cpu');
    assert.equal(r.source, 'env');
    assert.equal(tf.getBackend(), 'cpu');
  });

  it('auto picks the first backend that starts and records why earlier ones were skipped', async () => {
    const r = await initBackend({ backend: 'auto', env: {}, fresh: true });
    assert.equal(currentBackend(), r);
    assert.equal(tf.getBackend(), r.tfBackend);
    const order = ['tensorflow-gpu', 'tensorflow', 'webgpu', 'wasm', 'cpu'];
    assert.deepEqual(
      r.skipped.map((s) => s.backend),
      order.slice(0, order.indexOf(r.backend)),
    );
    for (const s of r.skipped) assert.ok(s.reason.length > 0);
    const x = tf.tidy(() =>
      tf
        .tensor2d([
          [1, 2],
          [3, 4],
        ])
        .matMul(
          tf.tensor2d([
            [1, 0],
            [0, 1],
          ]),
        )
        .arraySync(),
    );
    assert.deepEqual(x, [
      [1, 2],
      [3, 4],
    ]);
  });
});
