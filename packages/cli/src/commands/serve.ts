import type { Command } from 'commander';
import { basename } from 'node:path';
import { CliError, integer, positiveInt } from '../errors.js';
import {
  loadModelFolder,
  loadOnnxModelFolder,
  loadTokenizerFor,
  runtimeOption,
  startBackend,
} from '../model-folder.js';
import { importOptional } from '../optional.js';

interface ServeOptions {
  model: string;
  tokenizer?: string;
  adapter?: string;
  host: string;
  port: number;
  servedModelName?: string;
  maxQueue: number;
  maxBatch: number;
  maxTokens: number;
  backend?: string;
  runtime: 'tfjs' | 'onnx';
}

/**
 * `troupe serve --model DIR`: an OpenAI-compatible HTTP server over a Troupe or Hugging Face-layout checkpoint (the
 * tfjs causal LM, or ONNX Runtime with `--runtime onnx`), optionally with a PEFT LoRA adapter (tfjs). The first stdout
 * line is `troupe serve: listening on http://HOST:PORT/v1 (model NAME)`.
 */
export function register(program: Command): void {
  program
    .command('serve')
    .description('serve a checkpoint over an OpenAI-compatible HTTP API (/v1/chat/completions, /v1/completions)')
    .requiredOption(
      '--model <dir>',
      'Hugging Face-layout checkpoint folder (config.json, *.safetensors, tokenizer.json)',
    )
    .option('--tokenizer <dir>', 'tokenizer folder, or tiny / qwen3 (default: the model folder)')
    .option('--adapter <dir>', 'a PEFT LoRA adapter folder (adapter_config.json, adapter_model.safetensors) to apply')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option(
      '--port <n>',
      'port to listen on; 0 picks a free one',
      integer('--port', { minimum: 0, maximum: 65535 }),
      8000,
    )
    .option('--served-model-name <name>', 'the model id clients send (default: the folder name)')
    .option('--max-queue <n>', 'requests waiting beyond this are refused with 503', positiveInt('--max-queue'), 256)
    .option('--max-batch <n>', 'most requests decoded together', positiveInt('--max-batch'), 32)
    .option('--max-tokens <n>', 'max_tokens when a request gives none', positiveInt('--max-tokens'), 256)
    .option('--backend <name>', 'tfjs backend: auto, tensorflow-gpu, tensorflow, webgpu, wasm, cpu')
    .option(
      '--runtime <name>',
      'tfjs, or onnx: ONNX Runtime on every CPU core (the checkpoint is exported once and cached)',
      runtimeOption,
      'tfjs',
    )
    .action(async (opts: ServeOptions) => {
      const lm = await importOptional('@troupe/lm', 'troupe serve', () => import('@troupe/lm'));
      const { createServer } = await import('../serve/server.js');
      const common = { maxQueue: opts.maxQueue, maxBatch: opts.maxBatch, defaultMaxTokens: opts.maxTokens };
      let dir: string, dispose: () => void, app: ReturnType<typeof createServer>;
      if (opts.runtime === 'onnx') {
        const loaded = await loadOnnxModelFolder(opts.model, opts.adapter);
        const model = loaded.model;
        dir = loaded.dir;
        dispose = () => void model.release();
        const tokenizer = await loadTokenizerFor(lm, opts.tokenizer ?? dir).catch((err: unknown) => {
          dispose();
          throw err;
        });
        app = createServer({
          model,
          tokenizer,
          modelName: opts.servedModelName ?? basename(dir),
          generateBatch: (m, items, shared) => m.generateBatch(items, shared),
          ...common,
        });
      } else {
        await startBackend(lm, opts.backend);
        const loaded = await loadModelFolder(lm, opts.model, opts.adapter);
        const model = loaded.model;
        dir = loaded.dir;
        dispose = () => model.dispose();
        const tokenizer = await loadTokenizerFor(lm, opts.tokenizer ?? dir).catch((err: unknown) => {
          dispose();
          throw err;
        });
        app = createServer({
          model,
          tokenizer,
          modelName: opts.servedModelName ?? basename(dir),
          generateBatch: lm.generateBatch,
          ...common,
        });
      }
      const modelName = opts.servedModelName ?? basename(dir);
      let address: string;
      try {
        address = await app.listen({ host: opts.host, port: opts.port });
      } catch (err) {
        dispose();
        throw new CliError(`cannot listen on ${opts.host}:${opts.port}: ${(err as Error).message}`);
      }
      process.stdout.write(`troupe serve: listening on ${address}/v1 (model ${modelName})\n`);
      await new Promise<void>((done) => {
        const stop = (): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          void app.close().finally(() => {
            dispose();
            done();
          });
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
