/**
 * Training on the webgpu backend (tfjs-backend-webgpu on Dawn): the smoke team of the CLI's train test
 * (test/fixtures/train-smoke.yaml: warm start, then 2 AT-GRPO steps) gives the losses of wasm within 1e-3, and the
 * tensor count stays flat from step to step. Runs where Dawn finds an adapter (here Mesa's lavapipe, installed by
 * `TROUPE_WITH_WEBGPU=1 npm run setup`); without a Vulkan driver it prints why it did not run.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTeamSpec } from '@troupe/kernel';
import { currentBackend, initBackend, probeWebGpu, tf, type BackendReport } from '@troupe/lm';
import { Trainer, type MetricsRecord, type WarmStartResult } from '@troupe/trainer';

const SPEC = fileURLToPath(new URL('../../../test/fixtures/train-smoke.yaml', import.meta.url));

interface Trained {
  readonly warmStart: WarmStartResult | undefined;
  readonly steps: MetricsRecord[];
  /** tf.memory().numTensors after each step. */
  readonly tensors: number[];
}

async function train(backend: 'wasm' | 'webgpu'): Promise<Trained> {
  await initBackend({ backend, fresh: true });
  const out = mkdtempSync(join(tmpdir(), `troupe-${backend}-`));
  const steps: MetricsRecord[] = [];
  const tensors: number[] = [];
  try {
    const trainer = await Trainer.create(loadTeamSpec(SPEC), {
      outDir: out,
      skipFinalEval: true,
      onEvent: (e) => {
        if (e.type !== 'step') return;
        steps.push(e.metrics);
        tensors.push(tf.memory().numTensors);
      },
    });
    try {
      const r = await trainer.run();
      return { warmStart: r.warmStart, steps, tensors };
    } finally {
      await trainer.dispose();
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

describe('training the smoke team on webgpu (Dawn) against wasm', function () {
  this.timeout(600_000);
  let before_: BackendReport | undefined;
  let wasm: Trained;
  let webgpu: Trained;

  before(async function () {
    const probe = await probeWebGpu();
    if (!probe.available) {
      console.log(`      webgpu NOT RUN: ${probe.detail}`);
      this.skip();
    }
    before_ = currentBackend();
    wasm = await train('wasm');
    webgpu = await train('webgpu');
  });
  after(async () => {
    if (before_) await initBackend({ backend: before_.backend, fresh: true });
  });

  it('2 steps: every loss and gradient norm within 1e-3 of wasm', () => {
    assert.equal(webgpu.steps.length, 2);
    assert.equal(wasm.steps.length, 2);
    let compared = 0;
    webgpu.steps.forEach((m, i) => {
      for (const [k, w] of Object.entries(wasm.steps[i]!)) {
        if (!/^loss\/.*\/(loss|policy_loss|grad_norm)$/.test(k) || typeof w !== 'number') continue;
        const g = m[k];
        assert.equal(typeof g, 'number', `step ${i + 1}: ${k} missing on webgpu`);
        assert.ok(Math.abs((g as number) - w) < 1e-3, `step ${i + 1}: ${k}: webgpu ${g} vs wasm ${w}`);
        compared++;
      }
    });
    assert.ok(compared >= 12, `compared ${compared} numbers`);
  });

  it('the same warm-start losses and rollouts (rewards, completion tokens)', () => {
    const w = wasm.warmStart!.firstEpochLoss,
      g = webgpu.warmStart!.firstEpochLoss;
    assert.deepEqual(Object.keys(g).sort(), Object.keys(w).sort());
    for (const p of Object.keys(w)) assert.ok(Math.abs(g[p]! - w[p]!) < 1e-3, `warm start ${p}: ${g[p]} vs ${w[p]}`);
    webgpu.steps.forEach((m, i) => {
      for (const k of ['rollout/completion_tokens', 'rollout/reward/proposer', 'rollout/reward/executor'])
        assert.equal(m[k], wasm.steps[i]![k], `step ${i + 1}: ${k}`);
    });
  });

  it('tensor count flat from step to step', () => {
    assert.equal(webgpu.tensors[1], webgpu.tensors[0], `tensors after each step: ${webgpu.tensors.join(', ')}`);
  });
});
