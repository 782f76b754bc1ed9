/**
 * Parity with the PyTorch reference (assets/torch_ref.py): checkpoints it writes give the same greedy tokens and
 * log-probs (within 1e-3) here, and checkpoints saved here load in PyTorch with the same greedy output.
 * Runs when a Python with torch is found (TROUPE_TORCH_PYTHON, /usr/bin/python3, python3); otherwise it prints why.
 * All PyTorch work happens in two Python processes (torch imports once per process).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GQA_SMALL } from './helpers/tiny-config.js';
import {
  initBackend,
  loadCheckpoint,
  saveCheckpoint,
  loadTokenizer,
  generateIds,
  findTorchPython,
  runTorchRefBatch,
  CausalLM,
} from '@troupe/lm';

interface RefOut {
  prompt_ids: number[];
  tokens: number[];
  logprobs: number[];
  top2_gaps: number[];
}
interface Ours {
  promptIds: number[];
  tokenIds: number[];
  logprobs: number[];
}

const PROMPT = 'the player is to the left of the goal . plan : go up then right';
const NEW = 12;
const GQA = GQA_SMALL;
const CASES = [
  { name: 'qwen3 GQA untied', type: 'qwen3', tie: false, preset: false },
  { name: 'qwen3 GQA tied', type: 'qwen3', tie: true, preset: false },
  { name: 'qwen2 GQA (attention biases)', type: 'qwen2', tie: false, preset: false },
  { name: 'llama GQA tied', type: 'llama', tie: true, preset: false },
  { name: 'llama tiny preset (MHA, untied)', type: 'llama', tie: false, preset: true },
] as const;

/** Compares greedy outputs up to the first near-tie in torch's top-2 (where float noise may pick either). */
function assertSameGreedy(ours: Ours, ref: RefOut, what: string): void {
  let n = ref.tokens.length;
  const tie = ref.top2_gaps.findIndex((g) => g < 1e-3);
  if (tie >= 0) n = tie + 1;
  assert.ok(n >= 3, `${what}: too few comparable tokens (${n})`);
  assert.deepEqual(ours.tokenIds.slice(0, n), ref.tokens.slice(0, n), `${what}: greedy tokens`);
  for (let i = 0; i < n; i++) {
    assert.ok(
      Math.abs(ours.logprobs[i]! - ref.logprobs[i]!) < 1e-3,
      `${what}: logprob ${i}: ${ours.logprobs[i]} vs ${ref.logprobs[i]}`,
    );
  }
}

describe('parity with torch_ref.py', function () {
  this.timeout(300_000);
  let dir: string | undefined;
  const refs = new Map<string, RefOut>(); // torch on torch's checkpoints
  const ours = new Map<string, Ours>(); // tfjs on torch's checkpoints (and on the tfjs-initialised model)
  const back = new Map<string, RefOut>(); // torch on checkpoints saved by tfjs

  before(async function () {
    const found = await findTorchPython();
    if (!found.python) {
      console.log(`      parity with PyTorch NOT RUN: ${found.reason}`);
      this.skip();
    }
    const python = found.python!;
    await initBackend();
    dir = await mkdtemp(join(tmpdir(), 'troupe-parity-'));
    await writeFile(join(dir, 'gqa.json'), JSON.stringify(GQA));
    const gen = (m: string): string[] => [
      'generate',
      '--model',
      m,
      '--prompt',
      PROMPT,
      '--max-new-tokens',
      String(NEW),
    ];
    const src = (name: string): string => join(dir!, name.replace(/\W+/g, '-'));
    // 1) torch writes checkpoints and decodes them
    const first: string[][] = [];
    for (const c of CASES) {
      const args = ['make-checkpoint', '--out', src(c.name), '--model-type', c.type, '--seed', '3'];
      if (!c.preset) args.push('--config', join(dir, 'gqa.json'));
      if (c.tie) args.push('--tie');
      first.push(args, gen(src(c.name)));
    }
    const r1 = await runTorchRefBatch(python, first);
    CASES.forEach((c, i) => refs.set(c.name, r1[2 * i + 1] as unknown as RefOut));
    // 2) tfjs loads, decodes and re-saves them; and saves a model it initialised itself
    const decode = async (model: CausalLM, tokDir: string): Promise<Ours> => {
      const tok = await loadTokenizer(tokDir);
      const promptIds = tok.encode(PROMPT);
      const [s] = await generateIds(model, promptIds, { maxNewTokens: NEW, temperature: 0, tokenizer: tok });
      return { promptIds, tokenIds: s!.tokenIds, logprobs: s!.logprobs };
    };
    for (const c of CASES) {
      const model = await loadCheckpoint(src(c.name));
      try {
        ours.set(c.name, await decode(model, src(c.name)));
        await saveCheckpoint(`${src(c.name)}-saved`, model, { tokenizerDir: src(c.name) });
      } finally {
        model.dispose();
      }
    }
    const mine = CausalLM.random(
      {
        ...GQA,
        model_type: 'qwen2',
        attention_bias: true,
        rms_norm_eps: 1e-6,
        rope_theta: 1e6,
        bos_token_id: 1,
        eos_token_id: 2,
      },
      21,
    );
    try {
      await saveCheckpoint(join(dir, 'tfjs-init'), mine, { tokenizerDir: src(CASES[0].name) });
      ours.set('tfjs-init', await decode(mine, join(dir, 'tfjs-init')));
    } finally {
      mine.dispose();
    }
    // 3) torch decodes what tfjs saved
    const second = [...CASES.map((c) => gen(`${src(c.name)}-saved`)), gen(join(dir, 'tfjs-init'))];
    const r2 = await runTorchRefBatch(python, second);
    CASES.forEach((c, i) => back.set(c.name, r2[i] as unknown as RefOut));
    back.set('tfjs-init', r2[CASES.length] as unknown as RefOut);
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  for (const c of CASES) {
    it(`${c.name}: torch's checkpoint gives the same greedy tokens and log-probs here`, () => {
      const o = ours.get(c.name)!,
        r = refs.get(c.name)!;
      assert.deepEqual(o.promptIds, r.prompt_ids, 'tokenizer ids');
      assertSameGreedy(o, r, c.name);
    });
    it(`${c.name}: the checkpoint saved here decodes identically in torch`, () => {
      const r = refs.get(c.name)!,
        b = back.get(c.name)!;
      assert.deepEqual(b.tokens, r.tokens);
      r.logprobs.forEach((lp, i) => assert.ok(Math.abs(b.logprobs[i]! - lp) < 1e-5));
    });
  }

  it('a model initialised here (qwen2 GQA) saves to a checkpoint that torch decodes like us', () => {
    assertSameGreedy(ours.get('tfjs-init')!, back.get('tfjs-init')!, 'tfjs-initialised qwen2');
  });
});
