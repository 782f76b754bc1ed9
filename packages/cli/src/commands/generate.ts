import type { Command } from 'commander';
import { CliError, UsageError, finiteNumber, integer, positiveInt, printJson } from '../errors.js';
import { loadModelFolder, loadTokenizerFor, startBackend } from '../model-folder.js';
import { importOptional } from '../optional.js';

interface GenerateOptions {
  model?: string;
  preset?: string;
  tokenizer?: string;
  prompt: string;
  chat?: boolean;
  maxNewTokens: number;
  temperature: number;
  topP: number;
  topK: number;
  seed: number;
  backend?: string;
  json?: boolean;
}

/**
 * `troupe generate --model DIR --prompt TEXT`: sample one completion from a Hugging Face-layout checkpoint with the
 * tfjs model (greedy at `--temperature 0`). With `--json` prints `{ prompt_ids, tokens, logprobs, text, ... }`.
 */
export function register(program: Command): void {
  program
    .command('generate')
    .description('sample a completion from a checkpoint with the tfjs causal LM (greedy with --temperature 0)')
    .option('--model <dir>', 'Hugging Face-layout checkpoint folder (config.json, model.safetensors, tokenizer.json)')
    .option('--preset <name>', 'a randomly initialised preset instead of --model (tiny, small)')
    .option('--tokenizer <dir>', 'tokenizer folder, or tiny / qwen3 (default: the model folder; tiny for presets)')
    .requiredOption('--prompt <text>', 'the prompt text (encoded as is; add --chat to apply the chat template)')
    .option('--chat', "wrap the prompt as one user message through the tokenizer's chat template")
    .option('--max-new-tokens <n>', 'maximum new tokens', positiveInt('--max-new-tokens'), 32)
    .option('--temperature <t>', 'softmax temperature; 0 is greedy', finiteNumber('--temperature'), 0)
    .option('--top-p <p>', 'nucleus mass in (0, 1]', finiteNumber('--top-p'), 1)
    .option('--top-k <k>', 'keep the k most likely tokens (0: off)', integer('--top-k'), 0)
    .option('--seed <s>', 'sampling seed', integer('--seed'), 0)
    .option('--backend <name>', 'tfjs backend: auto, tensorflow-gpu, tensorflow, webgpu, wasm, cpu')
    .option('--json', 'print one JSON document')
    .action(async (opts: GenerateOptions) => {
      if (!opts.model === !opts.preset) throw new UsageError('give exactly one of --model DIR or --preset NAME');
      if (opts.temperature < 0) throw new UsageError(`--temperature must be ≥ 0, got ${opts.temperature}`);
      if (!(opts.topP > 0 && opts.topP <= 1)) throw new UsageError(`--top-p must be in (0, 1], got ${opts.topP}`);
      if (opts.topK < 0) throw new UsageError(`--top-k must be ≥ 0, got ${opts.topK}`);
      if (opts.preset && !['tiny', 'small'].includes(opts.preset))
        throw new UsageError(`--preset must be tiny or small, got "${opts.preset}"`);
      const lm = await importOptional('@troupe/lm', 'troupe generate', () => import('@troupe/lm'));
      const backend = await startBackend(lm, opts.backend);
      let model;
      let tokDir: string;
      if (opts.model) {
        const loaded = await loadModelFolder(lm, opts.model);
        model = loaded.model;
        tokDir = opts.tokenizer ?? loaded.dir;
      } else {
        model = lm.CausalLM.random(lm.presetHfConfig(opts.preset as 'tiny'), opts.seed);
        tokDir = opts.tokenizer ?? 'tiny';
      }
      try {
        const tok = await loadTokenizerFor(lm, tokDir);
        const text = opts.chat ? tok.applyChatTemplate([{ role: 'user', content: opts.prompt }]) : opts.prompt;
        const promptIds = tok.encode(text);
        if (promptIds.length === 0) throw new UsageError('--prompt encodes to no tokens');
        const ac = new AbortController();
        const onSig = (): void => ac.abort();
        process.once('SIGINT', onSig);
        let sample;
        try {
          [sample] = await lm.generateIds(model, promptIds, {
            maxNewTokens: opts.maxNewTokens,
            temperature: opts.temperature,
            topP: opts.topP,
            topK: opts.topK,
            seed: opts.seed,
            tokenizer: tok,
            signal: ac.signal,
          });
        } catch (err) {
          if ((err as Error).name === 'AbortError') throw new CliError('interrupted');
          throw new CliError((err as Error).message);
        } finally {
          process.off('SIGINT', onSig);
        }
        const s = sample!;
        if (opts.json) {
          printJson({
            prompt_ids: promptIds,
            tokens: s.tokenIds,
            logprobs: s.logprobs,
            text: s.text,
            finish_reason: s.finishReason,
            backend: backend.backend,
          });
        } else {
          process.stdout.write(`${s.text}\n`);
        }
      } finally {
        model.dispose();
      }
    });
}
