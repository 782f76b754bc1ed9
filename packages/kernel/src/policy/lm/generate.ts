/**
 * Batched, KV-cached, seeded sampling: `n` samples of one prompt decode together (the prompt is prefilled once and
 * its cache tiled), finished rows are dropped from the batch, and each row draws from its own seeded stream so
 * samples are reproducible on the same backend. Returns token ids and per-token natural-log probabilities.
 */
import * as tf from '@tensorflow/tfjs';
import { createRng, deriveSeed } from '../../util/rng.js';
import type { OutputGrammar } from '../../contracts/role.js';
import type { Rng } from '../../contracts/common.js';
import type { CausalLM, KvCache } from './model.js';
import type { Tokenizer } from '../tokenizer/index.js';
import { compileGrammar, GrammarCursor, type Nfa } from './grammar.js';

/** Options of `generateIds`. */
export interface GenerateOptions {
  /** Maximum number of new tokens. */
  readonly maxNewTokens: number;
  /** Softmax temperature; 0 is greedy (argmax). Default 1. */
  readonly temperature?: number;
  /** Nucleus mass in (0, 1]; 1 disables it. Default 1. */
  readonly topP?: number;
  /** Keep the k most likely tokens; 0 disables it. Default 0. */
  readonly topK?: number;
  /** Stop after any of these strings (kept in the text). Needs a tokenizer. */
  readonly stop?: readonly string[];
  /** Number of samples (rows). Default 1. */
  readonly n?: number;
  /** Seed; row i samples from `createRng(deriveSeed(seed, 'row', i))`. Default 0. */
  readonly seed?: number;
  /** Output grammar to enforce (needs a tokenizer). */
  readonly grammar?: OutputGrammar;
  /** Aborts between tokens; the promise then rejects with an `AbortError`. */
  readonly signal?: AbortSignal;
  /** End-of-sequence ids (default: the model config's plus the tokenizer's). */
  readonly eosTokenIds?: readonly number[];
  /** Tokenizer, for stop strings, grammars and the returned text. */
  readonly tokenizer?: Tokenizer;
}

/** One generated sample. */
export interface GeneratedSample {
  /** Completion token ids (including a final EOS token when generation ended on one). */
  readonly tokenIds: number[];
  /**
   * Natural-log probability of each token under the model's own distribution (temperature 1, before top-k/top-p or
   * grammar masking): the quantity `recomputeLogprobs` reproduces, so PPO ratios start at 1.
   */
  readonly logprobs: number[];
  /** The decoded text without special tokens (cut after a stop string); empty without a tokenizer. */
  readonly text: string;
  /** Why it stopped: EOS, stop string or completed grammar → `stop`; token budget → `length`. */
  readonly finishReason: 'stop' | 'length';
}

/** The error generation rejects with when its signal fires. */
export function abortError(): Error {
  const e = new Error('generation aborted');
  e.name = 'AbortError';
  return e;
}

/** Picks a token from one row of logits. Exported for tests. */
export function sampleToken(
  logits: Float32Array,
  opts: { temperature: number; topP: number; topK: number; allowed?: readonly number[] },
  rng: Rng,
): { token: number; logprob: number } {
  const V = logits.length;
  // model log-softmax normaliser over the full vocabulary
  let max = -Infinity;
  for (let i = 0; i < V; i++) if (logits[i]! > max) max = logits[i]!;
  let sum = 0;
  for (let i = 0; i < V; i++) sum += Math.exp(logits[i]! - max);
  const lse = max + Math.log(sum);
  const cand = opts.allowed ? Array.from(opts.allowed) : null;
  let token: number;
  if (opts.temperature <= 0) {
    token = -1;
    let best = -Infinity;
    if (cand) { for (const i of cand) if (logits[i]! > best) { best = logits[i]!; token = i; } }
    else for (let i = 0; i < V; i++) if (logits[i]! > best) { best = logits[i]!; token = i; }
  } else {
    const ids = cand ?? Array.from({ length: V }, (_, i) => i);
    const T = opts.temperature;
    // sort only when a truncation needs the order (sorting a 150k vocabulary per token is costly)
    if (opts.topK > 0 || opts.topP < 1) ids.sort((a, b) => logits[b]! - logits[a]! || a - b);
    else {
      let best = 0;
      for (let j = 1; j < ids.length; j++) if (logits[ids[j]!]! > logits[ids[best]!]!) best = j;
      [ids[0], ids[best]] = [ids[best]!, ids[0]!];
    }
    let keep = ids.length;
    if (opts.topK > 0) keep = Math.min(keep, opts.topK);
    const m = logits[ids[0]!]! / T;
    const w = new Float64Array(keep);
    let z = 0;
    for (let j = 0; j < keep; j++) { w[j] = Math.exp(logits[ids[j]!]! / T - m); z += w[j]!; }
    if (opts.topP < 1) {
      let acc = 0;
      let k = 0;
      while (k < keep) { acc += w[k]! / z; k++; if (acc >= opts.topP) break; }
      keep = Math.max(1, k);
      z = 0;
      for (let j = 0; j < keep; j++) z += w[j]!;
    }
    let u = rng.next() * z;
    token = ids[keep - 1]!;
    for (let j = 0; j < keep; j++) { u -= w[j]!; if (u < 0) { token = ids[j]!; break; } }
  }
  return { token, logprob: logits[token]! - lse };
}

function disposeCache(cache: KvCache | undefined): void {
  if (!cache) return;
  for (const l of cache) { l.k.dispose(); l.v.dispose(); }
}

/**
 * Samples `n` completions of `promptIds`. Every tensor op runs in `tf.tidy`; the KV cache is disposed on every exit
 * path (finish, abort, error). Yields to the event loop between tokens so an abort signal can fire.
 */
export async function generateIds(model: CausalLM, promptIds: readonly number[], opts: GenerateOptions): Promise<GeneratedSample[]> {
  const n = opts.n ?? 1;
  const temperature = opts.temperature ?? 1, topP = opts.topP ?? 1, topK = opts.topK ?? 0;
  const tok = opts.tokenizer;
  if (promptIds.length === 0) throw new Error('generate: the prompt is empty (give at least one token)');
  if (!Number.isInteger(n) || n < 1) throw new Error(`generate: n must be a positive integer, got ${n}`);
  if ((opts.stop?.length || opts.grammar) && !tok) throw new Error('generate: stop strings and grammars need a tokenizer');
  const V = model.config.vocabSize;
  for (const id of promptIds) if (!Number.isInteger(id) || id < 0 || id >= V) throw new Error(`generate: prompt token id ${id} is outside the vocabulary [0, ${V})`);
  const eos = new Set(opts.eosTokenIds ?? [...model.config.eosTokenIds, ...(tok?.eosTokenId !== undefined ? [tok.eosTokenId] : [])]);
  const seed = opts.seed ?? 0;
  const rngs = Array.from({ length: n }, (_, i) => createRng(deriveSeed(seed, 'row', i)));
  let nfa: Nfa | undefined;
  const cursors: GrammarCursor[] = [];
  if (opts.grammar && tok) {
    nfa = compileGrammar(opts.grammar);
    const texts = tok.tokenTexts();
    for (let i = 0; i < n; i++) cursors.push(new GrammarCursor(nfa, texts));
  }
  const rows = Array.from({ length: n }, () => ({ tokenIds: [] as number[], logprobs: [] as number[], text: '', finishReason: 'length' as 'stop' | 'length', done: false }));
  const check = (): void => { if (opts.signal?.aborted) throw abortError(); };
  check();
  let cache: KvCache | undefined;
  let logits: tf.Tensor | undefined;
  let active = Array.from({ length: n }, (_, i) => i); // row index of each batch slot
  try {
    // Prefill once, then tile the cache to n rows.
    const pre = tf.tidy(() => {
      const out = model.forward(tf.tensor2d([Array.from(promptIds)], [1, promptIds.length], 'int32'), { cache: [], lastOnly: true, differentiableEmbedding: false });
      const c = out.cache!.map((l) => ({ k: tf.keep(n > 1 ? tf.tile(l.k, [n, 1, 1, 1]) : l.k), v: tf.keep(n > 1 ? tf.tile(l.v, [n, 1, 1, 1]) : l.v) }));
      return { logits: tf.keep(tf.tile(out.logits.reshape([1, V]), [n, 1])), cache: c };
    });
    cache = pre.cache;
    logits = pre.logits;
    let pos = promptIds.length;
    for (let step = 0; step < opts.maxNewTokens && active.length > 0; step++) {
      const data = (await logits.data()) as Float32Array;
      check();
      const chosen: number[] = [];
      const still: number[] = [];
      const keepSlots: number[] = [];
      for (let slot = 0; slot < active.length; slot++) {
        const r = active[slot]!;
        const row = rows[r]!;
        const lg = data.subarray(slot * V, (slot + 1) * V);
        let allowed: number[] | undefined;
        const cur = cursors[r];
        if (cur) {
          allowed = cur.allowed().filter((id) => id < V);
          if (cur.complete) for (const e of eos) if (e < V) allowed.push(e);
          if (allowed.length === 0) { row.done = true; row.finishReason = 'stop'; continue; }
        }
        const { token, logprob } = sampleToken(lg, { temperature, topP, topK, ...(allowed ? { allowed } : {}) }, rngs[r]!);
        row.tokenIds.push(token);
        row.logprobs.push(logprob);
        if (eos.has(token)) { row.done = true; row.finishReason = 'stop'; }
        else {
          if (cur) cur.advance(token);
          if (tok && opts.stop?.length) {
            const text = tok.decode(row.tokenIds);
            let cut = -1;
            for (const s of opts.stop) {
              const k = s ? text.indexOf(s) : -1;
              if (k >= 0 && (cut < 0 || k + s.length < cut)) cut = k + s.length;
            }
            if (cut >= 0) { row.done = true; row.finishReason = 'stop'; row.text = text.slice(0, cut); }
          }
        }
        if (!row.done) { chosen.push(token); still.push(r); keepSlots.push(slot); }
      }
      if (still.length === 0 || step + 1 >= opts.maxNewTokens) break;
      const prevCache: KvCache = cache;
      const prevLogits: tf.Tensor = logits;
      const compact = still.length !== active.length;
      const next = tf.tidy(() => {
        let c: KvCache = prevCache;
        if (compact) {
          const idx = tf.tensor1d(keepSlots, 'int32');
          c = prevCache.map((l) => ({ k: tf.gather(l.k, idx), v: tf.gather(l.v, idx) }));
        }
        const out = model.forward(tf.tensor2d(chosen, [chosen.length, 1], 'int32'), { cache: c, start: pos, differentiableEmbedding: false });
        return { logits: tf.keep(out.logits.reshape([chosen.length, V])), cache: out.cache!.map((l) => ({ k: tf.keep(l.k), v: tf.keep(l.v) })) };
      });
      disposeCache(prevCache);
      prevLogits.dispose();
      cache = next.cache;
      logits = next.logits;
      active = still;
      pos++;
      await new Promise<void>((res) => setImmediate(res));
      check();
    }
  } finally {
    disposeCache(cache);
    logits?.dispose();
  }
  return rows.map((r) => {
    let text = r.text;
    if (!text && tok) text = tok.decode(r.tokenIds);
    return { tokenIds: r.tokenIds, logprobs: r.logprobs, text, finishReason: r.finishReason };
  });
}
