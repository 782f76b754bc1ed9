/**
 * Exports a Hugging Face-layout checkpoint (config.json + safetensors, single or sharded, any size) to an ONNX
 * decoder graph with its weights as external data, in a cache folder keyed by the checkpoint's content:
 *
 *   <cache>/<key>/model.onnx     the graph (a few hundred kB; no weights inside)
 *   <cache>/<key>/weights.bin    float32 weights converted from F16/BF16 (or copied, with `weights: 'copy'`)
 *   <cache>/<key>/source-<i>.safetensors → the checkpoint's own file, whose F32 tensors the graph reads in place
 *   <cache>/<key>/export.json    what was exported, from where, by which exporter version
 *
 * The key hashes config.json, each weight file's size and modification time, the weight mode and the exporter
 * version, so an edited checkpoint exports again and an unchanged one loads at once. The folder is written under a
 * temporary name and renamed into place: a crash never leaves a half-written export under the key.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, open, rename, rm, stat, symlink, writeFile, type FileHandle } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { decoderGraph } from './decoder-graph.js';
import type { ExternalWeight } from './graph.js';
import {
  checkConfigAgainstTensors,
  checkpointFiles,
  CheckpointError,
  parameterShapes,
  parseHfConfig,
  SafetensorsReader,
  type LmConfig,
  type SafetensorsEntry,
} from './lm.js';
import { encodeModel } from './proto.js';

/** Bumped whenever the graph or the file layout changes: old exports are then not reused. */
export const EXPORTER_VERSION = '1';

/**
 * Where float32 weights come from: `reference` reads F32 tensors in place from the checkpoint's safetensors files
 * (no copy on disk); `copy` writes every tensor into the cache's `weights.bin`. F16/BF16 tensors are always
 * converted into `weights.bin` (the CPU runs float32).
 */
export type WeightMode = 'reference' | 'copy';

/** Options of {@link exportCheckpoint}. */
export interface ExportOptions {
  /** Cache root (default: `$TROUPE_ONNX_CACHE`, else `$XDG_CACHE_HOME/troupe/onnx`, else `~/.cache/troupe/onnx`). */
  readonly cacheDir?: string;
  /** Default `reference`. */
  readonly weights?: WeightMode;
}

/** An exported checkpoint. */
export interface ExportedModel {
  /** The checkpoint folder. */
  readonly source: string;
  /** The cache folder. */
  readonly dir: string;
  /** The graph file. */
  readonly modelPath: string;
  /** The checkpoint's parsed config. */
  readonly config: LmConfig;
  /** Whether an earlier export was reused. */
  readonly cached: boolean;
  /** Seconds the export took (0 when cached). */
  readonly seconds: number;
}

/** Alignment of tensors in weights.bin (a page, so ONNX Runtime may map them). */
const ALIGN = 4096;

/** The default cache root. */
export function defaultCacheDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  if (env.TROUPE_ONNX_CACHE) return env.TROUPE_ONNX_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'troupe', 'onnx');
}

/** A tensor of the checkpoint: the file it is in and its entry there. */
interface Located {
  readonly file: number;
  readonly entry: SafetensorsEntry;
}

/**
 * Exports `checkpointDir` (or reuses its cached export). Errors are `CheckpointError`s naming the file: a missing or
 * corrupt config or weight file, a missing tensor, a shape that does not match config.json, an unsupported model.
 */
export async function exportCheckpoint(checkpointDir: string, options: ExportOptions = {}): Promise<ExportedModel> {
  const mode = options.weights ?? 'reference';
  const files = await checkpointFiles(checkpointDir);
  const configPath = join(files.dir, 'config.json');
  let config: LmConfig;
  try {
    config = parseHfConfig(files.config, configPath);
  } catch (err) {
    throw new CheckpointError((err as Error).message);
  }
  const readers: SafetensorsReader[] = [];
  try {
    const tensors = new Map<string, Located>();
    for (const [i, f] of files.files.entries()) {
      const r = await SafetensorsReader.open(f.path);
      readers.push(r);
      const byName = new Map(r.entries.map((e) => [e.name, e]));
      for (const name of f.tensors ?? byName.keys()) {
        const entry = byName.get(name);
        if (!entry)
          throw new CheckpointError(
            `${join(files.dir, f.name)}: tensor '${name}' is listed in ${basename(files.listedBy)} but not in the shard`,
          );
        tensors.set(name, { file: i, entry });
      }
    }
    try {
      checkConfigAgainstTensors(config, new Map([...tensors].map(([k, v]) => [k, v.entry])), configPath);
    } catch (err) {
      throw new CheckpointError((err as Error).message);
    }
    const shapes = parameterShapes(config);
    for (const [name, shape] of shapes) {
      const t = tensors.get(name);
      if (!t)
        throw new CheckpointError(
          `${files.dir}: tensor '${name}' is missing${name === 'lm_head.weight' ? ' (config.json has tie_word_embeddings=false)' : ''}`,
        );
      if (t.entry.shape.length !== shape.length || t.entry.shape.some((d, k) => d !== shape[k])) {
        throw new CheckpointError(
          `${join(files.dir, files.files[t.file]!.name)}: tensor '${name}' has shape [${t.entry.shape.join(', ')}], expected [${shape.join(', ')}] from config.json`,
        );
      }
    }

    const stats = await Promise.all(files.files.map((f) => stat(f.path)));
    const key = createHash('sha256')
      .update(
        JSON.stringify({
          version: EXPORTER_VERSION,
          mode,
          config: files.config,
          files: files.files.map((f, i) => ({ name: f.name, size: stats[i]!.size, mtime: stats[i]!.mtimeMs })),
        }),
      )
      .digest('hex')
      .slice(0, 24);
    const root = options.cacheDir ?? defaultCacheDir();
    const dir = join(root, key);
    const modelPath = join(dir, 'model.onnx');
    if (existsSync(modelPath)) return { source: files.dir, dir, modelPath, config, cached: true, seconds: 0 };

    const started = performance.now();
    await mkdir(root, { recursive: true });
    const tmp = join(root, `.${key}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    await mkdir(tmp);
    try {
      const where = new Map<string, ExternalWeight>();
      const linked = new Set<number>();
      let bin: FileHandle | undefined;
      try {
        let offset = 0;
        for (const [name] of shapes) {
          const t = tensors.get(name)!;
          if (mode === 'reference' && t.entry.dtype === 'F32') {
            const location = `source-${t.file}.safetensors`;
            if (!linked.has(t.file)) {
              await symlink(files.files[t.file]!.path, join(tmp, location));
              linked.add(t.file);
            }
            where.set(name, { location, offset: t.entry.offset, length: t.entry.bytes });
            continue;
          }
          const data = await readers[t.file]!.read(t.entry);
          bin ??= await open(join(tmp, 'weights.bin'), 'w');
          offset = Math.ceil(offset / ALIGN) * ALIGN;
          await bin.write(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), 0, data.byteLength, offset);
          where.set(name, { location: 'weights.bin', offset, length: data.byteLength });
          offset += data.byteLength;
        }
        await bin?.sync();
      } finally {
        await bin?.close();
      }
      const shapeOf = new Map(shapes);
      const graph = decoderGraph(
        config,
        (n) => where.get(n)!,
        (n) => shapeOf.get(n)!,
        { 'troupe.source': files.dir, 'troupe.key': key },
        EXPORTER_VERSION,
      );
      await writeFile(join(tmp, 'model.onnx'), encodeModel(graph));
      await writeFile(
        join(tmp, 'export.json'),
        JSON.stringify(
          {
            exporter: EXPORTER_VERSION,
            source: files.dir,
            weights: mode,
            files: files.files.map((f) => f.name),
            created: new Date().toISOString(),
          },
          null,
          2,
        ) + '\n',
      );
      try {
        await rename(tmp, dir);
      } catch (err) {
        // another process finished the same export first: use it
        if (!existsSync(modelPath)) throw err;
        await rm(tmp, { recursive: true, force: true });
        return { source: files.dir, dir, modelPath, config, cached: true, seconds: 0 };
      }
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      throw err;
    }
    return { source: files.dir, dir, modelPath, config, cached: false, seconds: (performance.now() - started) / 1000 };
  } finally {
    await Promise.all(readers.map((r) => r.close()));
  }
}
