import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname, join, basename } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * Writes a file atomically: the bytes go to a temporary file in the same directory, are flushed to disk, then the
 * temporary file is renamed over the target. A crash leaves either the old file or the new one, never a torn one.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  await writeFileAtomicWith(path, (handle) => handle.writeFile(data));
}

/** {@link writeFileAtomic} for a file written piece by piece: `write` fills the open temporary file. */
export async function writeFileAtomicWith(path: string, write: (handle: FileHandle) => Promise<void>): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(tmp, 'w');
  try {
    await write(handle);
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
  await handle.close();
  await rename(tmp, path);
}
