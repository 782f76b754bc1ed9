/**
 * The ONNX graph of a Llama / Qwen2 / Qwen3 decoder with a KV cache, in the input and output names transformers.js
 * uses: inputs `input_ids`, `attention_mask` (past + new columns), `position_ids`, `past_key_values.{i}.key|value`
 * (`[batch, kv_heads, past, head_dim]`); outputs `logits` and `present.{i}.key|value`. Logits are of the last
 * position only (`[batch, 1, vocab]`): generation needs nothing else, and the head is the largest matmul.
 *
 * Ops are those ONNX Runtime's CPU provider runs fast: Gemm with `transB=1` straight on the Hugging Face
 * `[out, in]` weights (so a tied head reads the embedding itself, no transposed copy), SimplifiedLayerNormalization
 * for RMSNorm (also Qwen3's per-head q/k norm), rotary embedding from the position ids, and attention as MatMul +
 * Softmax under a causal and padding mask, with grouped-query heads batched per kv head (no repeated keys).
 */
import { ropeInvFreq, type LmConfig } from './lm.js';
import { GraphBuilder, type ExternalWeight } from './graph.js';
import { DataType, type ModelMessage } from './proto.js';

/** Opsets the graph uses. */
const OPSETS = [{ domain: '', version: 17 }];

/** Names of a layer's cache tensors. */
export function cacheNames(layer: number): {
  pastKey: string;
  pastValue: string;
  presentKey: string;
  presentValue: string;
} {
  return {
    pastKey: `past_key_values.${layer}.key`,
    pastValue: `past_key_values.${layer}.value`,
    presentKey: `present.${layer}.key`,
    presentValue: `present.${layer}.value`,
  };
}

/**
 * Builds the decoder graph of `c`; `weight(name)` gives where the float32 data of each Hugging Face tensor lies
 * (`parameterShapes` names and shapes).
 */
export function decoderGraph(
  c: LmConfig,
  weight: (name: string) => ExternalWeight,
  shape: (name: string) => readonly number[],
  metadata: Record<string, string>,
  producerVersion: string,
): ModelMessage {
  const g = new GraphBuilder();
  const H = c.numHeads,
    KV = c.numKvHeads,
    hd = c.headDim,
    D = c.hiddenSize,
    G = H / KV;
  const w = (name: string): string => g.external(name, shape(name), weight(name));
  const i64 = (name: string, v: readonly number[], dims?: readonly number[]): string => g.ints(name, v, dims);
  const rms = (x: string, scale: string): string =>
    g.op('SimplifiedLayerNormalization', [x, scale], { axis: { i: -1 }, epsilon: { f: c.rmsNormEps } });
  const linear = (x: string, prefix: string, bias: boolean): string =>
    g.op('Gemm', bias ? [x, w(`${prefix}.weight`), w(`${prefix}.bias`)] : [x, w(`${prefix}.weight`)], {
      transB: { i: 1 },
    });

  // sizes: B, T (new tokens), S (past + new), the 2-D row count N = B·T
  const zero = i64('c_zero', [0], []),
    one = i64('c_one', [1], []);
  const idsShape = g.op('Shape', ['input_ids']);
  const B = g.op('Gather', [idsShape, zero], { axis: { i: 0 } });
  const T = g.op('Gather', [idsShape, one], { axis: { i: 0 } });
  const S = g.op('Gather', [g.op('Shape', ['attention_mask']), one], { axis: { i: 0 } });
  const B1 = g.op('Unsqueeze', [B, i64('c_axis0', [0])]);
  const T1 = g.op('Unsqueeze', [T, 'c_axis0']);
  const headsShape = (n: number): string => g.op('Concat', [B1, T1, i64(`c_heads_${n}`, [n, hd])], { axis: { i: 0 } });
  const qShape = headsShape(H);
  const kvShape = KV === H ? qShape : headsShape(KV);
  // queries grouped by kv head: [B, KV, G·T, hd] for the matmul, [B, KV, G, T, S] for the mask
  const qGroupShape = g.op('Concat', [B1, i64('c_kv', [KV]), i64('c_minus1', [-1]), i64('c_hd', [hd])], {
    axis: { i: 0 },
  });
  const S1 = g.op('Unsqueeze', [S, 'c_axis0']);
  const scoreShape = g.op('Concat', [B1, i64('c_kv_g', [KV, G]), T1, S1], { axis: { i: 0 } });
  const probShape = g.op('Concat', [B1, 'c_kv', 'c_minus1', S1], { axis: { i: 0 } });
  const qSplitShape = g.op('Concat', [B1, T1, i64('c_kv_g_hd', [KV, G, hd])], { axis: { i: 0 } });
  const ctxShape = g.op('Concat', [B1, 'c_kv_g', T1, 'c_hd'], { axis: { i: 0 } });
  const flatShape = i64('c_flat', [-1, H * hd]);

  // embeddings, as N rows of D
  const x0 = g.op('Gather', [w('model.embed_tokens.weight'), 'input_ids'], { axis: { i: 0 } });
  let x = g.op('Reshape', [x0, i64('c_rows', [-1, D])]);

  // rotary tables from the position ids: cos/sin of pos · inv_freq, repeated over both halves, as [B, T, 1, hd]
  const inv = ropeInvFreq(hd, c.ropeTheta, c.ropeScaling);
  const pos = g.op('Unsqueeze', [
    g.op('Cast', ['position_ids'], { to: { i: DataType.FLOAT } }),
    i64('c_axis_last', [-1]),
  ]);
  const freqs = g.op('Mul', [pos, g.floats('c_inv_freq', inv, [hd / 2])]);
  const angles = g.op('Unsqueeze', [g.op('Concat', [freqs, freqs], { axis: { i: -1 } }), i64('c_axis2', [2])]);
  const cos = g.op('Cos', [angles]);
  const sin = g.op('Sin', [angles]);
  const halves = i64('c_halves', [hd / 2, hd / 2]);
  const rope = (t: string): string => {
    const [a, b] = g.opN('Split', [t, halves], 2, { axis: { i: -1 } });
    const rotated = g.op('Concat', [g.op('Neg', [b!]), a!], { axis: { i: -1 } });
    return g.op('Add', [g.op('Mul', [t, cos]), g.op('Mul', [rotated, sin])]);
  };

  // mask [B, 1, 1, T, S]: key column j is seen by new token t when j ≤ past + t and the column is not padding
  const past = g.op('Sub', [S, T]);
  const keyPos = g.op('Range', [zero, S, one]);
  const queryPos = g.op('Unsqueeze', [g.op('Range', [past, S, one]), i64('c_axis1', [1])]);
  const causal = g.op('LessOrEqual', [keyPos, queryPos]);
  const notPad = g.op('Reshape', [
    g.op('Cast', ['attention_mask'], { to: { i: DataType.BOOL } }),
    g.op('Concat', [B1, i64('c_ones3', [1, 1, 1]), i64('c_minus1b', [-1])], { axis: { i: 0 } }),
  ]);
  const mask = g.op('And', [causal, notPad]);
  const masked = g.floats('c_masked', [-3.4028234663852886e38], []);
  const scale = g.floats('c_scale', [1 / Math.sqrt(hd)], []);

  const perm = (t: string, p: readonly number[]): string => g.op('Transpose', [t], { perm: { ints: p } });
  for (let i = 0; i < c.numLayers; i++) {
    const p = `model.layers.${i}`;
    const names = cacheNames(i);
    const h = rms(x, w(`${p}.input_layernorm.weight`));
    let q = g.op('Reshape', [linear(h, `${p}.self_attn.q_proj`, c.attentionBias), qShape]);
    let k = g.op('Reshape', [linear(h, `${p}.self_attn.k_proj`, c.attentionBias), kvShape]);
    const v = g.op('Reshape', [linear(h, `${p}.self_attn.v_proj`, c.attentionBias), kvShape]);
    if (c.qkNorm) {
      q = rms(q, w(`${p}.self_attn.q_norm.weight`));
      k = rms(k, w(`${p}.self_attn.k_norm.weight`));
    }
    q = g.op('Mul', [rope(q), scale]);
    k = rope(k);
    // caches [B, KV, S, hd]
    const keys = g.opNamed('Concat', [names.pastKey, perm(k, [0, 2, 1, 3])], names.presentKey, { axis: { i: 2 } });
    const values = g.opNamed('Concat', [names.pastValue, perm(v, [0, 2, 1, 3])], names.presentValue, {
      axis: { i: 2 },
    });
    // queries [B, T, KV·G, hd] → [B, KV, G, T, hd] → [B, KV, G·T, hd]
    const qg = g.op('Reshape', [perm(g.op('Reshape', [q, qSplitShape]), [0, 2, 3, 1, 4]), qGroupShape]);
    const scores = g.op('Reshape', [g.op('MatMul', [qg, perm(keys, [0, 1, 3, 2])]), scoreShape]);
    const probs = g.op('Softmax', [g.op('Where', [mask, scores, masked])], { axis: { i: -1 } });
    const ctx = g.op('MatMul', [g.op('Reshape', [probs, probShape]), values]);
    // [B, KV, G·T, hd] → [B, KV, G, T, hd] → [B, T, KV, G, hd] → N rows of H·hd
    const ctx5 = g.op('Reshape', [ctx, ctxShape]);
    const attn = g.op('Reshape', [perm(ctx5, [0, 3, 1, 2, 4]), flatShape]);
    x = g.op('Add', [x, linear(attn, `${p}.self_attn.o_proj`, false)]);
    const h2 = rms(x, w(`${p}.post_attention_layernorm.weight`));
    const gate = linear(h2, `${p}.mlp.gate_proj`, false);
    const act = g.op('Mul', [g.op('Mul', [gate, g.op('Sigmoid', [gate])]), linear(h2, `${p}.mlp.up_proj`, false)]);
    x = g.op('Add', [x, linear(act, `${p}.mlp.down_proj`, false)]);
  }

  // last position of each row → final norm → head (the embedding itself when tied)
  const last = g.op(
    'Gather',
    [g.op('Reshape', [x, g.op('Concat', [B1, T1, i64('c_d', [D])], { axis: { i: 0 } })]), g.op('Sub', [T, one])],
    { axis: { i: 1 } },
  );
  const normed = rms(last, w('model.norm.weight'));
  const head = c.tieWordEmbeddings ? 'model.embed_tokens.weight' : w('lm_head.weight');
  g.opNamed('Unsqueeze', [g.op('Gemm', [normed, head], { transB: { i: 1 } }), 'c_axis1'], 'logits');

  const cacheDims = ['batch', KV, 'past', hd];
  const presentDims = ['batch', KV, 'total', hd];
  return {
    opsets: OPSETS,
    nodes: g.nodes,
    initializers: g.initializers,
    inputs: [
      { name: 'input_ids', elemType: DataType.INT64, dims: ['batch', 'sequence'] },
      { name: 'attention_mask', elemType: DataType.INT64, dims: ['batch', 'total'] },
      { name: 'position_ids', elemType: DataType.INT64, dims: ['batch', 'sequence'] },
      ...Array.from({ length: c.numLayers }, (_, i) => [
        { name: cacheNames(i).pastKey, elemType: DataType.FLOAT, dims: cacheDims },
        { name: cacheNames(i).pastValue, elemType: DataType.FLOAT, dims: cacheDims },
      ]).flat(),
    ],
    outputs: [
      { name: 'logits', elemType: DataType.FLOAT, dims: ['batch', 1, c.vocabSize] },
      ...Array.from({ length: c.numLayers }, (_, i) => [
        { name: cacheNames(i).presentKey, elemType: DataType.FLOAT, dims: presentDims },
        { name: cacheNames(i).presentValue, elemType: DataType.FLOAT, dims: presentDims },
      ]).flat(),
    ],
    metadata,
    producerVersion,
  };
}
