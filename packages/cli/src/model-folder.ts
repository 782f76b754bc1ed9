import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CausalLM, Tokenizer } from '@troupe/lm';
import { CliError, UsageError } from './errors.js';

type ModelModule = typeof import('@troupe/lm');

/** Starts the tfjs backend a command asked for (`--backend`); an unusable one is a usage error. */
export async function startBackend(lm: ModelModule, backend: string | undefined): Promise<Awaited<ReturnType<ModelModule['initBackend']>>> {
  try {
    return await lm.initBackend(backend ? { backend: backend as 'auto' } : {});
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/**
 * Loads the checkpoint folder a command was given (`--model DIR`, with an optional `--adapter DIR`): a folder without
 * config.json, or one that does not load, is a {@link CliError} naming it.
 */
export async function loadModelFolder(lm: ModelModule, model: string, adapter?: string): Promise<{ dir: string; model: CausalLM }> {
  const dir = resolve(model);
  if (!existsSync(join(dir, 'config.json'))) throw new CliError(`--model ${dir}: no config.json there (expected a Hugging Face-layout checkpoint folder)`);
  let loaded: CausalLM | undefined;
  try {
    loaded = await lm.loadCheckpoint(dir);
    if (adapter) await lm.loadLoraAdapter(resolve(adapter), loaded);
    return { dir, model: loaded };
  } catch (err) {
    loaded?.dispose();
    throw new CliError((err as Error).message);
  }
}

/** Loads a tokenizer (a folder or a bundled name); one that does not load is a {@link CliError} saying to pass --tokenizer. */
export async function loadTokenizerFor(lm: ModelModule, where: string): Promise<Tokenizer> {
  try {
    return await lm.loadTokenizer(where);
  } catch (err) {
    throw new CliError(`${(err as Error).message}; pass --tokenizer DIR`);
  }
}
