/**
 * The files of a checkpoint folder, read as untrusted input: every name a folder gives (its fixed files, the shards of
 * its index, its tokenizer files) must stay inside the folder, also once links are followed, and be a regular file
 * of bounded size. So a downloaded checkpoint cannot make the loader read `/etc/passwd` or `/dev/zero`.
 */
import { realpath } from 'node:fs/promises';
import { basename, isAbsolute, join, relative, resolve } from 'node:path';
import { BoundedReadError, readRegularFile } from '@troupe/kernel';
import { CheckpointError } from './errors.js';

/** Largest JSON file read from a checkpoint (config.json, the shard index, adapter_config.json). */
export const MAX_JSON_BYTES = 16 << 20;

/** Whether `path` lies inside folder `dir` (or is it). */
function isInside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * The real path of a file of checkpoint folder `dir`, named `name` by `listedBy` (a file of the folder, or the folder
 * itself for its fixed files): a relative name that stays inside the folder, and whose real path (symlinks followed)
 * does too. The one exception is the Hugging Face hub cache, whose `snapshots/<revision>` folders link their files to
 * the repository's `blobs/`. Whether it is a regular file is checked when it is read.
 */
export async function checkpointFile(dir: string, name: string, listedBy: string): Promise<string> {
  const refuse = (why: string): never => {
    const what =
      listedBy === dir
        ? `${resolve(dir, String(name))}: ${why}`
        : `${listedBy}: names the file ${JSON.stringify(name)}, which ${why}`;
    throw new CheckpointError(`${what}; a checkpoint's files must be regular files inside its folder ${dir}`);
  };
  if (typeof name !== 'string' || name === '' || name.includes('\0')) refuse('is not a file name');
  if (isAbsolute(name)) refuse('is an absolute path');
  const file = resolve(dir, name);
  if (!isInside(dir, file)) refuse('lies outside the folder');
  let real: string;
  let realDir: string;
  try {
    [real, realDir] = await Promise.all([realpath(file), realpath(dir)]);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw new CheckpointError(
        `${file}: no such file${name === basename(file) && listedBy !== dir ? ` (listed in ${listedBy})` : ''}`,
      );
    throw new CheckpointError(`${file}: cannot read (${code ?? (err as Error).message})`);
  }
  const hubBlobs = /[\\/]snapshots[\\/][^\\/]+$/.test(realDir) ? join(realDir, '..', '..', 'blobs') : undefined;
  if (!isInside(realDir, real) && !(hubBlobs && isInside(hubBlobs, real)))
    refuse(`is a link to ${real}, outside the folder`);
  return real;
}

/**
 * Reads file `name` of checkpoint folder `dir` ({@link checkpointFile}): a regular file of at most `maxBytes`.
 * Errors are {@link CheckpointError}s naming the file.
 */
export async function readCheckpointFile(dir: string, name: string, maxBytes: number): Promise<Buffer> {
  const file = await checkpointFile(dir, name, dir);
  try {
    return await readRegularFile(file, maxBytes);
  } catch (err) {
    if (err instanceof BoundedReadError) throw new CheckpointError(`${join(dir, name)}: ${err.message}`);
    throw err;
  }
}
