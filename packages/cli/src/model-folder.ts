import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CausalLM, Tokenizer } from '@troupe/lm';
import { CliError, UsageError } from './errors.js';
import { importOptional } from './optional.js';

type ModelModule = typeof import('@troupe/lm');

/** Starts the tfjs backend a command asked for (`--backend`); an unusable one is a usage error. */
export async function startBackend(
  lm: ModelModule,
  backend: string | undefined,
): Promise<Awaited<ReturnType<ModelModule['initBackend']>>> {
  try {
    return await lm.initBackend(backend ? { backend: backend as 'auto' } : {});
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/**
 * The error for a `--model` folder without config.json; a run's checkpoint (one folder per policy) names the
 * policy folders to pick from.
 */
function noCheckpointHere(dir: string): CliError {
  const policies = existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory() && existsSync(join(dir, e.name, 'config.json')))
        .map((e) => e.name)
    : [];
  const pick =
    policies.length > 0 ? `; it holds one per policy: use ${policies.map((p) => join(dir, p)).join(' or ')}` : '';
  return new CliError(`--model ${dir}: no config.json there (expected a Hugging Face-layout checkpoint folder)${pick}`);
}

/**
 * Loads the checkpoint folder a command was given (`--model DIR`, with an optional `--adapter DIR`): a folder without
 * config.json, or one that does not load, is a {@link CliError} naming it.
 */
export async function loadModelFolder(
  lm: ModelModule,
  model: string,
  adapter?: string,
): Promise<{ dir: string; model: CausalLM }> {
  const dir = resolve(model);
  if (!existsSync(join(dir, 'config.json'))) throw noCheckpointHere(dir);
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

/** The runtimes `--runtime` names: the tfjs causal LM, or ONNX Runtime on the CPU (`@troupe/onnx`). */
export const RUNTIMES = ['tfjs', 'onnx'] as const;

/** Parses `--runtime`. */
export function runtimeOption(raw: string): (typeof RUNTIMES)[number] {
  if (!(RUNTIMES as readonly string[]).includes(raw))
    throw new UsageError(`--runtime must be one of ${RUNTIMES.join(', ')}, got '${raw}'`);
  return raw as (typeof RUNTIMES)[number];
}

/**
 * Opens a checkpoint folder in ONNX Runtime (`--runtime onnx`): exported once to the ONNX cache, then reused. LoRA
 * adapters are not applied by this runtime; a folder that does not load is a {@link CliError} naming the file.
 */
export async function loadOnnxModelFolder(
  model: string,
  adapter?: string,
): Promise<{ dir: string; model: import('@troupe/onnx').OnnxCausalLM }> {
  const dir = resolve(model);
  if (adapter)
    throw new UsageError(
      '--adapter is not supported with --runtime onnx; merge the adapter into the checkpoint, or use --runtime tfjs',
    );
  if (!existsSync(join(dir, 'config.json'))) throw noCheckpointHere(dir);
  const { OnnxCausalLM } = await importOptional(
    '@troupe/onnx',
    'troupe serve --runtime onnx',
    () => import('@troupe/onnx'),
  );
  try {
    return { dir, model: await OnnxCausalLM.load(dir) };
  } catch (err) {
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
