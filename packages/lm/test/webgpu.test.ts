/**
 * The webgpu backend (tfjs-backend-webgpu on Dawn) against wasm, on the model configs of the parity test: greedy
 * tokens and log-probs (KV-cached generation and a full forward pass), LoRA and full-parameter training steps, and a
 * flat tensor count. Runs where Dawn finds an adapter: here Mesa's lavapipe (`TROUPE_WITH_WEBGPU=1 npm run setup`);
 * without a Vulkan driver it prints why it did not run. Tiny models only: lavapipe is slow.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GQA_SMALL } from './helpers/tiny-config.js';
import {
  AdamW,
  CausalLM,
  currentBackend,
  generateIds,
  initBackend,
  loadCheckpoint,
  packBatch,
  presetHfConfig,
  probeBackends,
  probeWebGpu,
  recomputeLogprobs,
  saveCheckpoint,
  tf,
  tokenLogprobs,
  trainStepAsync,
  type BackendReport,
  type SequencePair,
  type WebGpuProbe,
} from '@troupe/lm';

/** The GQA config of the parity test (4 query heads on 2 kv heads). */
const GQA = {
  ...GQA_SMALL,
  rms_norm_eps: 1e-6,
  bos_token_id: 1,
  eos_token_id: 2,
};
const CASES: readonly { name: string; config: Record<string, unknown> }[] = [
  { name: 'qwen3 GQA untied', config: { ...GQA, model_type: 'qwen3', tie_word_embeddings: false } },
  { name: 'qwen3 GQA tied', config: { ...GQA, model_type: 'qwen3', tie_word_embeddings: true } },
  { name: 'qwen2 GQA (attention biases)', config: { ...GQA, model_type: 'qwen2', attention_bias: true } },
  { name: 'llama GQA tied', config: { ...GQA, model_type: 'llama', tie_word_embeddings: true } },
  { name: 'llama tiny preset (MHA, untied)', config: presetHfConfig('tiny', { model_type: 'llama' }) },
];
const PROMPT = [1, 40, 71, 300, 12, 9, 511, 77, 5, 260, 33, 18];
const NEW = 12;
const LORA = { r: 4, alpha: 8, targetModules: ['q_proj', 'v_proj', 'down_proj'] };

/** What one backend computes on one checkpoint. */
interface Run {
  tokens: number[];
  genLogprobs: number[];
  fwdLogprobs: number[];
  loraLosses: number[];
  fullLosses: number[];
  /** tf.memory().numTensors after each training step (LoRA steps, then full steps). */
  tensors: number[];
}

async function nllStep(m: CausalLM, opt: AdamW, pairs: readonly SequencePair[]): Promise<number> {
  const packed = packBatch(pairs);
  const shape: [number, number] = [packed.B, packed.L - 1];
  const r = await trainStepAsync(opt, () => {
    const mask = tf.tensor2d(packed.mask, shape);
    return tokenLogprobs(m, packed).mul(mask).sum().div(mask.sum()).neg() as tf.Scalar;
  });
  return r.loss;
}

/** Greedy decoding (KV cache), the same tokens scored in one forward pass, 2 LoRA steps, then 2 full steps. */
async function runOn(dir: string): Promise<Run> {
  const model = await loadCheckpoint(dir);
  try {
    const [s] = await generateIds(model, PROMPT, { maxNewTokens: NEW, temperature: 0, eosTokenIds: [] });
    const [fwd] = await recomputeLogprobs(model, [{ promptIds: PROMPT, completionIds: s!.tokenIds }]);
    const batch: SequencePair[] = [
      { promptIds: PROMPT, completionIds: s!.tokenIds },
      { promptIds: PROMPT.slice(0, 5), completionIds: [7, 8, 9, 10, 300, 2] },
    ];
    const tensors: number[] = [];
    const loraLosses: number[] = [];
    model.addLora(LORA, 3);
    const loraOpt = new AdamW(model.trainableVariables(), { lr: 1e-2, maxGradNorm: 0.5 });
    for (let i = 0; i < 2; i++) {
      loraLosses.push(await nllStep(model, loraOpt, batch));
      tensors.push(tf.memory().numTensors);
    }
    loraOpt.dispose();
    model.removeLora();
    const fullLosses: number[] = [];
    const fullOpt = new AdamW(model.trainableVariables(), { lr: 1e-3 });
    for (let i = 0; i < 2; i++) {
      fullLosses.push(await nllStep(model, fullOpt, batch));
      tensors.push(tf.memory().numTensors);
    }
    fullOpt.dispose();
    return { tokens: s!.tokenIds, genLogprobs: s!.logprobs, fwdLogprobs: fwd!, loraLosses, fullLosses, tensors };
  } finally {
    model.dispose();
  }
}

function maxDiff(a: readonly number[], b: readonly number[]): number {
  return a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0);
}

function assertClose(a: readonly number[], b: readonly number[], tol: number, what: string): void {
  assert.equal(a.length, b.length, `${what}: lengths`);
  a.forEach((x, i) => assert.ok(Math.abs(x - b[i]!) < tol, `${what} ${i}: ${x} vs ${b[i]} (tolerance ${tol})`));
}

describe('webgpu backend (Dawn) against wasm', function () {
  this.timeout(600_000);
  let probe: WebGpuProbe;
  let before_: BackendReport | undefined;
  let dir: string | undefined;
  const wasm = new Map<string, Run>();
  const webgpu = new Map<string, Run>();
  let again: Run; // the first case once more on webgpu

  before(async function () {
    probe = await probeWebGpu();
    if (!probe.available) {
      console.log(`      webgpu NOT RUN: ${probe.detail}`);
      this.skip();
    }
    before_ = currentBackend();
    dir = await mkdtemp(join(tmpdir(), 'troupe-webgpu-'));
    await initBackend({ backend: 'wasm', fresh: true });
    for (const [i, c] of CASES.entries()) {
      const m = CausalLM.random(c.config, 40 + i);
      await saveCheckpoint(join(dir, String(i)), m);
      m.dispose();
      wasm.set(c.name, await runOn(join(dir, String(i))));
    }
    await initBackend({ backend: 'webgpu', fresh: true });
    for (const [i, c] of CASES.entries()) webgpu.set(c.name, await runOn(join(dir, String(i))));
    again = await runOn(join(dir, '0'));
    console.log(`      adapter: ${probe.detail}`);
    for (const c of CASES) {
      const w = wasm.get(c.name)!,
        g = webgpu.get(c.name)!;
      const lp = Math.max(maxDiff(g.genLogprobs, w.genLogprobs), maxDiff(g.fwdLogprobs, w.fwdLogprobs));
      const loss = Math.max(maxDiff(g.loraLosses, w.loraLosses), maxDiff(g.fullLosses, w.fullLosses));
      console.log(`      ${c.name}: max |Δ log-prob| ${lp.toExponential(1)}, max |Δ loss| ${loss.toExponential(1)}`);
    }
  });
  after(async () => {
    // later suites in this process get the backend they had
    if (before_) await initBackend({ backend: before_.backend, fresh: true });
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('forced webgpu reports its adapter; auto picks it only for a real (not fallback) adapter', async () => {
    const r = await initBackend({ backend: 'webgpu', fresh: true });
    assert.equal(r.tfBackend, 'webgpu');
    assert.equal(tf.getBackend(), 'webgpu');
    assert.ok(r.adapter, 'the report names the adapter');
    assert.equal(r.adapter.isFallbackAdapter, probe.adapter!.isFallbackAdapter);
    const auto = await initBackend({ backend: 'auto', env: {}, fresh: true });
    const viaProbe = probeBackends({}, probe);
    assert.equal(viaProbe.probes.find((p) => p.backend === 'webgpu')!.available, probe.autoPick);
    if (probe.autoPick) {
      assert.equal(auto.backend, 'webgpu');
    } else {
      assert.notEqual(auto.backend, 'webgpu');
      const skipped = auto.skipped.find((s) => s.backend === 'webgpu');
      assert.match(skipped!.reason, /fallback adapter.*auto does not pick it|no GPU device/);
    }
  });

  it('is deterministic: the same checkpoint gives the same tokens, log-probs and losses again', () => {
    const { tensors: _t1, ...first } = webgpu.get(CASES[0]!.name)!;
    const { tensors: _t2, ...second } = again;
    assert.deepEqual(second, first);
  });

  for (const c of CASES) {
    it(`${c.name}: same greedy tokens, log-probs within 1e-3 (KV-cached and full forward)`, () => {
      const w = wasm.get(c.name)!,
        g = webgpu.get(c.name)!;
      assert.deepEqual(g.tokens, w.tokens, 'greedy tokens');
      assertClose(g.genLogprobs, w.genLogprobs, 1e-3, 'generation log-prob');
      assertClose(g.fwdLogprobs, w.fwdLogprobs, 1e-3, 'forward log-prob');
      // on webgpu itself, the KV-cached path agrees with the full forward pass
      assertClose(g.genLogprobs, g.fwdLogprobs, 1e-3, 'webgpu cached vs full');
    });
    it(`${c.name}: LoRA and full training losses within 1e-3, tensor count flat`, () => {
      const w = wasm.get(c.name)!,
        g = webgpu.get(c.name)!;
      assertClose(g.loraLosses, w.loraLosses, 1e-3, 'LoRA loss');
      assertClose(g.fullLosses, w.fullLosses, 1e-3, 'full loss');
      assert.notEqual(g.loraLosses[1], g.loraLosses[0], 'the LoRA step changed the model');
      assert.equal(g.tensors[1], g.tensors[0], `tensors after LoRA steps: ${g.tensors.join(', ')}`);
      assert.equal(g.tensors[3], g.tensors[2], `tensors after full steps: ${g.tensors.join(', ')}`);
    });
  }
});
