/**
 * Batched, KV-cached, seeded sampling: `n` samples of one prompt decode together (the prompt is prefilled once and
 * its cache tiled), finished rows are dropped from the batch, and each row draws from its own seeded stream so
 * samples are reproducible on the same backend. Returns token ids and per-token natural-log probabilities.
 */
import * as tf from '@tensorflow/tfjs';
import { createRng, deriveSeed, type OutputGrammar, type Rng } from '@troupe/kernel';
import { AdapterStack, type CausalLM, type KvCache } from './model.js';
import type { Tokenizer } from '../tokenizer/index.js';
import { cachedGrammar, GrammarCursor, type Nfa } from './grammar.js';

/** Options of `generateIds`. */
export interface GenerateOptions {
  /** Maximum number of new tokens. */
  readonly maxNewTokens: number;
  /** Softmax temperature; 0 is greedy (argmax). Default 1. */
  readonly temperature?: number;
  /** Temperature of the distribution the returned log-probs are of (> 0). Default: `temperature` (1 when greedy). */
  readonly logprobTemperature?: number;
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
   * Natural-log probability of each token under the sampling distribution: the model's softmax at the sampling
   * temperature (temperature 1 when greedy; `logprobTemperature` when given), over the whole vocabulary, before
   * top-k/top-p or grammar masking. The trainer's recomputed old log-probs score the same distribution
   * (`PromptGroup.temperature`), so PPO ratios start at 1.
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
  opts: { temperature: number; topP: number; topK: number; allowed?: readonly number[]; logprobTemperature?: number },
  rng: Rng,
): { token: number; logprob: number } {
  const V = logits.length;
  // log-softmax normaliser of the scored distribution (logits / T; T = 1 when greedy, or `logprobTemperature`) over
  // the full vocabulary
  const scale = 1 / (opts.logprobTemperature ?? (opts.temperature > 0 ? opts.temperature : 1));
  const cand = opts.allowed ? Array.from(opts.allowed) : null;
  let token: number;
  if (opts.temperature <= 0) {
    token = -1;
    let best = -Infinity;
    if (cand) {
      for (const i of cand)
        if (logits[i]! > best) {
          best = logits[i]!;
          token = i;
        }
    } else
      for (let i = 0; i < V; i++)
        if (logits[i]! > best) {
          best = logits[i]!;
          token = i;
        }
  } else if (!cand && !(opts.topK > 0) && !(opts.topP < 1)) {
    const full = sampleFull(logits, opts.temperature, rng);
    // the sampled distribution is the scored one (no logprobTemperature): its normaliser is already summed
    if (opts.logprobTemperature === undefined)
      return { token: full.token, logprob: logits[full.token]! * scale - full.lse };
    token = full.token;
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
    for (let j = 0; j < keep; j++) {
      w[j] = Math.exp(logits[ids[j]!]! / T - m);
      z += w[j]!;
    }
    if (opts.topP < 1) {
      let acc = 0;
      let k = 0;
      while (k < keep) {
        acc += w[k]! / z;
        k++;
        if (acc >= opts.topP) break;
      }
      keep = Math.max(1, k);
      z = 0;
      for (let j = 0; j < keep; j++) z += w[j]!;
    }
    let u = rng.next() * z;
    token = ids[keep - 1]!;
    for (let j = 0; j < keep; j++) {
      u -= w[j]!;
      if (u < 0) {
        token = ids[j]!;
        break;
      }
    }
  }
  return { token, logprob: logits[token]! * scale - logSumExp(logits, scale) };
}

/** log Σ exp(logits · scale), computed stably. */
function logSumExp(logits: Float32Array, scale: number): number {
  const V = logits.length;
  let max = -Infinity;
  for (let i = 0; i < V; i++) if (logits[i]! > max) max = logits[i]!;
  let sum = 0;
  for (let i = 0; i < V; i++) sum += Math.exp((logits[i]! - max) * scale);
  return max * scale + Math.log(sum);
}

/** Scratch weights of {@link sampleFull}, grown to the largest vocabulary seen. */
let fullWeights = new Float64Array(0);

/**
 * Samples from softmax(logits / T) over the whole vocabulary with no allocation per call: the same walk, sums and
 * draw as the general path of {@link sampleToken} (the argmax first, then the other ids in order with id 0 in the
 * argmax's place), so a seed picks the same token either way, only without building a 150k-entry id list. Returns
 * the token and the log of the normaliser, log Σ exp(logits / T).
 */
function sampleFull(logits: Float32Array, T: number, rng: Rng): { token: number; lse: number } {
  const V = logits.length;
  let best = 0;
  for (let i = 1; i < V; i++) if (logits[i]! > logits[best]!) best = i;
  if (fullWeights.length < V) fullWeights = new Float64Array(V);
  const w = fullWeights;
  const id = (j: number): number => (j === 0 ? best : j === best ? 0 : j);
  const m = logits[best]! / T;
  let z = 0;
  for (let j = 0; j < V; j++) {
    w[j] = Math.exp(logits[id(j)]! / T - m);
    z += w[j]!;
  }
  const lse = m + Math.log(z);
  let u = rng.next() * z;
  for (let j = 0; j < V; j++) {
    u -= w[j]!;
    if (u < 0) return { token: id(j), lse };
  }
  return { token: id(V - 1), lse };
}

function disposeCache(cache: KvCache | undefined): void {
  if (!cache) return;
  for (const l of cache) {
    l.k.dispose();
    l.v.dispose();
  }
}

/** One prompt of a batched generation, with its own sampling options. */
export interface GenerationItem {
  /** Prompt token ids (non-empty). */
  readonly promptIds: readonly number[];
  /** Sampling options of this prompt (`tokenizer` and `signal` come from the batch). */
  readonly options: Omit<GenerateOptions, 'tokenizer' | 'signal'>;
  /**
   * The model whose LoRA adapters this prompt decodes with: one sharing the batch model's base (`CausalLM.shareBase`),
   * so prompts of several adapters decode in one batch over one base. Default: the batch model itself.
   */
  readonly adapter?: CausalLM;
}

interface RowState {
  item: number;
  sample: number;
  rng: Rng;
  cursor: GrammarCursor | undefined;
  tokenIds: number[];
  logprobs: number[];
  text: string;
  finishReason: 'stop' | 'length';
  done: boolean;
}

/** What a batched generation shares across its prompts. */
export interface GenerationShared {
  readonly tokenizer?: Tokenizer;
  readonly signal?: AbortSignal;
  /** Called with each token as it is sampled (sample j of item i), for streaming. */
  readonly onToken?: (item: number, sample: number, token: number, logprob: number) => void;
}

/**
 * The model side of a batched generation: a KV-cached decoder over a batch of rows whose rows can leave between
 * steps. {@link decodeBatch} drives it; this module's {@link generateBatch} gives the tfjs `CausalLM` one, and other
 * runtimes (ONNX Runtime) give theirs.
 */
export interface StepDecoder {
  /**
   * Prefills the left-padded prompts `ids` (one row per prompt, each padded with `pads[i]` leading zeros), keeps the
   * cache of prompt `rowItems[r]` for row r, and returns the logits of each row's last position (`rows × V`).
   */
  prefill(
    ids: readonly (readonly number[])[],
    pads: readonly number[],
    rowItems: readonly number[],
  ): Promise<Float32Array>;
  /**
   * Feeds one token per row at column `pos`, after dropping the rows not in `keep` (slots of the previous rows, in
   * order; undefined: all stay), and returns their logits (`rows × V`). `pads` are the rows' left paddings.
   */
  step(
    tokens: readonly number[],
    keep: readonly number[] | undefined,
    pos: number,
    pads: readonly number[],
  ): Promise<Float32Array>;
  /** Frees the cache; called on every exit path (finish, abort, error). */
  dispose(): void;
}

/**
 * A tfjs `CausalLM` as a {@link StepDecoder}: every op in `tf.tidy`, the cache kept between steps. With
 * `itemAdapters` (one model sharing `model`'s base per prompt), each row runs through its prompt's adapters.
 */
function tfjsDecoder(model: CausalLM, itemAdapters?: readonly CausalLM[]): StepDecoder {
  const V = model.config.vocabSize;
  let cache: KvCache | undefined;
  /** Each current row's adapter model (with `itemAdapters`). */
  let rowAdapters: CausalLM[] | undefined;
  /** The prompts' adapters stacked once for every step of this decode. */
  const stack = itemAdapters ? new AdapterStack([...new Set(itemAdapters)]) : undefined;
  const read = async (logits: tf.Tensor): Promise<Float32Array> => {
    try {
      return (await logits.data()) as Float32Array;
    } finally {
      logits.dispose();
    }
  };
  return {
    async prefill(ids, pads, rowItems) {
      const pre = tf.tidy(() => {
        const out = model.forward(
          tf.tensor2d(
            ids.map((r) => [...r]),
            [ids.length, ids[0]!.length],
            'int32',
          ),
          {
            cache: [],
            lastOnly: true,
            differentiableEmbedding: false,
            padLeft: [...pads],
            ...(itemAdapters ? { rowAdapters: itemAdapters, adapterStack: stack } : {}),
          },
        );
        const idx = tf.tensor1d([...rowItems], 'int32');
        const trivial = ids.length === 1 && rowItems.length === 1;
        const g = (t: tf.Tensor): tf.Tensor => tf.keep(trivial ? t : tf.gather(t, idx));
        return {
          logits: g(out.logits.reshape([ids.length, V])),
          cache: out.cache!.map((l) => ({ k: g(l.k), v: g(l.v) })),
        };
      });
      cache = pre.cache;
      if (itemAdapters) rowAdapters = rowItems.map((i) => itemAdapters[i]!);
      return read(pre.logits);
    },
    async step(tokens, keep, pos, pads) {
      const prev = cache!;
      if (rowAdapters && keep) rowAdapters = keep.map((s) => rowAdapters![s]!);
      const next = tf.tidy(() => {
        let c: KvCache = prev;
        if (keep) {
          const idx = tf.tensor1d([...keep], 'int32');
          c = prev.map((l) => ({ k: tf.gather(l.k, idx), v: tf.gather(l.v, idx) }));
        }
        const out = model.forward(tf.tensor2d([...tokens], [tokens.length, 1], 'int32'), {
          cache: c,
          start: pos,
          differentiableEmbedding: false,
          padLeft: [...pads],
          ...(rowAdapters ? { rowAdapters, adapterStack: stack } : {}),
        });
        return {
          logits: tf.keep(out.logits.reshape([tokens.length, V])),
          cache: out.cache!.map((l) => ({ k: tf.keep(l.k), v: tf.keep(l.v) })),
        };
      });
      disposeCache(prev);
      cache = next.cache;
      return read(next.logits);
    },
    dispose() {
      disposeCache(cache);
      cache = undefined;
      stack?.dispose();
    },
  };
}

/**
 * Samples completions for several prompts at once: prompts are left-padded into one batch (padding is masked and
 * positions count from each prompt's first token), each prompt is prefilled once and its cache tiled to its `n`
 * rows, and finished rows leave the batch. Row j of item i samples from `createRng(deriveSeed(seed_i, 'row', j))`,
 * so an item's samples do not depend on which other items share the batch (up to float rounding of the padded
 * matmuls). Prompts with an `adapter` decode through that model's LoRA adapters on the shared base, in the same
 * batch as the others. Every tensor op runs in `tf.tidy`; the KV cache is disposed on every exit path (finish, abort, error).
 * Yields to the event loop between tokens so an abort signal can fire; rejects with an `AbortError` then.
 */
export async function generateBatch(
  model: CausalLM,
  items: readonly GenerationItem[],
  shared: GenerationShared = {},
): Promise<GeneratedSample[][]> {
  const own = items.every((it) => !it.adapter || it.adapter === model);
  return decodeBatch(
    tfjsDecoder(model, own ? undefined : items.map((it) => it.adapter ?? model)),
    model.config,
    items,
    shared,
  );
}

/**
 * {@link generateBatch} on any {@link StepDecoder}: `config` gives the vocabulary size and the default end-of-sequence
 * ids. The decoder is disposed when it returns or throws.
 */
export async function decodeBatch(
  decoder: StepDecoder,
  config: { readonly vocabSize: number; readonly eosTokenIds: readonly number[] },
  items: readonly GenerationItem[],
  shared: GenerationShared = {},
): Promise<GeneratedSample[][]> {
  const tok = shared.tokenizer;
  const V = config.vocabSize;
  const check = (): void => {
    if (shared.signal?.aborted) throw abortError();
  };
  if (items.length === 0) return [];
  const rows: RowState[] = [];
  const eosSets: Set<number>[] = [];
  items.forEach((it, i) => {
    const o = it.options;
    const n = o.n ?? 1;
    if (it.promptIds.length === 0) throw new Error(`generate: prompt ${i} is empty (give at least one token)`);
    if (!Number.isInteger(n) || n < 1) throw new Error(`generate: n must be a positive integer, got ${n}`);
    if (o.logprobTemperature !== undefined && !(o.logprobTemperature > 0))
      throw new Error(`generate: logprobTemperature must be positive, got ${o.logprobTemperature}`);
    if ((o.stop?.length || o.grammar) && !tok) throw new Error('generate: stop strings and grammars need a tokenizer');
    for (const id of it.promptIds)
      if (!Number.isInteger(id) || id < 0 || id >= V)
        throw new Error(`generate: prompt token id ${id} is outside the vocabulary [0, ${V})`);
    eosSets.push(
      new Set(o.eosTokenIds ?? [...config.eosTokenIds, ...(tok?.eosTokenId !== undefined ? [tok.eosTokenId] : [])]),
    );
    const nfa: Nfa | undefined = o.grammar && tok ? cachedGrammar(o.grammar) : undefined;
    for (let j = 0; j < n; j++) {
      rows.push({
        item: i,
        sample: j,
        rng: createRng(deriveSeed(o.seed ?? 0, 'row', j)),
        cursor: nfa ? new GrammarCursor(nfa, tok!.tokenTexts(), V) : undefined,
        tokenIds: [],
        logprobs: [],
        text: '',
        finishReason: 'length',
        done: false,
      });
    }
  });
  check();
  const Pmax = Math.max(...items.map((it) => it.promptIds.length));
  const itemPads = items.map((it) => Pmax - it.promptIds.length);
  let active = rows.map((_, r) => r).filter((r) => (items[rows[r]!.item]!.options.maxNewTokens ?? 0) > 0);
  for (const r of rows) if ((items[r.item]!.options.maxNewTokens ?? 0) <= 0) r.done = true;
  let data: Float32Array | undefined;
  try {
    if (active.length > 0) {
      // Prefill each prompt once (left-padded), then gather its cache and logits to its rows.
      const ids = items.map((it, i) => [...new Array<number>(itemPads[i]!).fill(0), ...it.promptIds]);
      data = await decoder.prefill(
        ids,
        itemPads,
        active.map((r) => rows[r]!.item),
      );
    }
    let pos = Pmax;
    while (active.length > 0) {
      check();
      const chosen: number[] = [];
      const still: number[] = [];
      const keepSlots: number[] = [];
      for (let slot = 0; slot < active.length; slot++) {
        const r = active[slot]!;
        const row = rows[r]!;
        const o = items[row.item]!.options;
        const eos = eosSets[row.item]!;
        const lg = data!.subarray(slot * V, (slot + 1) * V);
        let allowed: readonly number[] | undefined;
        const cur = row.cursor;
        if (cur) {
          // the budget rule: only tokens after which the grammar can still complete in the tokens left (grammar.ts)
          allowed = cur.allowed(o.maxNewTokens - row.tokenIds.length);
          if (cur.complete) allowed = [...allowed, ...[...eos].filter((e) => e < V)];
          if (allowed.length === 0) {
            row.done = true;
            row.finishReason = 'stop';
            continue;
          }
        }
        const { token, logprob } = sampleToken(
          lg,
          {
            temperature: o.temperature ?? 1,
            topP: o.topP ?? 1,
            topK: o.topK ?? 0,
            ...(allowed ? { allowed } : {}),
            ...(o.logprobTemperature !== undefined ? { logprobTemperature: o.logprobTemperature } : {}),
          },
          row.rng,
        );
        row.tokenIds.push(token);
        row.logprobs.push(logprob);
        shared.onToken?.(row.item, row.sample, token, logprob);
        if (eos.has(token)) {
          row.done = true;
          row.finishReason = 'stop';
        } else {
          if (cur) cur.advance(token);
          if (tok && o.stop?.length) {
            const text = tok.decode(row.tokenIds);
            let cut = -1;
            for (const s of o.stop) {
              const k = s ? text.indexOf(s) : -1;
              if (k >= 0 && (cut < 0 || k + s.length < cut)) cut = k + s.length;
            }
            if (cut >= 0) {
              row.done = true;
              row.finishReason = 'stop';
              row.text = text.slice(0, cut);
            }
          }
          if (!row.done && row.tokenIds.length >= o.maxNewTokens) {
            row.done = true;
            // a grammar that admits nothing more ended the sample, not the budget
            row.finishReason = cur?.complete && cur.allowed().length === 0 ? 'stop' : 'length';
          }
        }
        if (!row.done) {
          chosen.push(token);
          still.push(r);
          keepSlots.push(slot);
        }
      }
      if (still.length === 0) break;
      const pads = still.map((r) => itemPads[rows[r]!.item]!);
      data = await decoder.step(chosen, still.length !== active.length ? keepSlots : undefined, pos, pads);
      active = still;
      pos++;
      await new Promise<void>((res) => setImmediate(res));
      check();
    }
  } finally {
    decoder.dispose();
  }
  const out: GeneratedSample[][] = items.map(() => []);
  for (const r of rows) {
    let text = r.text;
    if (!text && tok) text = tok.decode(r.tokenIds);
    out[r.item]!.push({ tokenIds: r.tokenIds, logprobs: r.logprobs, text, finishReason: r.finishReason });
  }
  return out;
}

/**
 * Samples `n` completions of `promptIds` (one item of `generateBatch`). Rejects with an `AbortError` when the
 * signal fires.
 */
export async function generateIds(
  model: CausalLM,
  promptIds: readonly number[],
  opts: GenerateOptions,
): Promise<GeneratedSample[]> {
  const { tokenizer, signal, ...options } = opts;
  const shared = { ...(tokenizer ? { tokenizer } : {}), ...(signal ? { signal } : {}) };
  return (await generateBatch(model, [{ promptIds, options }], shared))[0]!;
}
