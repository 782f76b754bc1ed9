/**
 * Reading files named by untrusted input (a spec's `extends`, a checkpoint's shard index) without being led into
 * reading forever: only regular files are read (never `/dev/zero`, a FIFO, a socket or a folder), and never more than
 * a stated number of bytes. The file is opened non-blocking (so a FIFO cannot hang the open) and checked through the
 * open descriptor, so it cannot be swapped between the check and the read.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';

/** Why a file could not be read: missing, not a regular file, over the size limit, or an I/O error. */
export type ReadRefusal = 'missing' | 'not-regular' | 'too-large' | 'unreadable';

/** A file that {@link readRegularFileSync} or {@link readRegularFile} refused; `reason` says why, `message` says what to do. */
export class BoundedReadError extends Error {
  /** Why the read was refused. */
  readonly reason: ReadRefusal;
  /** The file. */
  readonly path: string;

  constructor(path: string, reason: ReadRefusal, message: string) {
    super(message);
    this.name = 'BoundedReadError';
    this.path = path;
    this.reason = reason;
  }
}

/** Formats a byte count as `1 MB`, `64 KB` or `12 bytes`. */
export function formatBytes(n: number): string {
  if (n >= 1 << 30 && n % (1 << 30) === 0) return `${n / (1 << 30)} GB`;
  if (n >= 1 << 20 && n % (1 << 20) === 0) return `${n / (1 << 20)} MB`;
  if (n >= 1 << 10 && n % (1 << 10) === 0) return `${n / (1 << 10)} KB`;
  return `${n} bytes`;
}

const FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

function openError(path: string, err: unknown): BoundedReadError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') return new BoundedReadError(path, 'missing', 'no such file');
  return new BoundedReadError(path, 'unreadable', `cannot read the file (${code ?? (err as Error).message})`);
}

function kindOf(st: { isDirectory(): boolean; isFIFO(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isSocket(): boolean }): string {
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

function checkStat(path: string, st: { size: number; isFile(): boolean } & Parameters<typeof kindOf>[0], maxBytes: number): void {
  if (!st.isFile()) throw new BoundedReadError(path, 'not-regular', `is ${kindOf(st)}, not a regular file`);
  if (st.size > maxBytes) {
    throw new BoundedReadError(path, 'too-large', `is ${st.size} bytes, over the limit of ${formatBytes(maxBytes)}`);
  }
}

/** Reads a regular file of at most `maxBytes` bytes, synchronously. Throws {@link BoundedReadError}. */
export function readRegularFileSync(path: string, maxBytes: number): Buffer {
  let fd: number;
  try {
    fd = openSync(path, FLAGS);
  } catch (err) {
    throw openError(path, err);
  }
  try {
    const st = fstatSync(fd);
    checkStat(path, st, maxBytes);
    // One byte more than allowed, so that a file that grew since fstat is still caught.
    const buf = Buffer.allocUnsafe(Math.min(st.size, maxBytes) + 1);
    let n = 0;
    for (;;) {
      let got: number;
      try {
        got = readSync(fd, buf, n, buf.length - n, null);
      } catch (err) {
        throw openError(path, err);
      }
      if (got === 0) break;
      n += got;
      if (n > maxBytes) throw new BoundedReadError(path, 'too-large', `is over the limit of ${formatBytes(maxBytes)}`);
      if (n === buf.length) break;
    }
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/** Reads a regular file of at most `maxBytes` bytes. Throws {@link BoundedReadError}. */
export async function readRegularFile(path: string, maxBytes: number): Promise<Buffer> {
  let handle;
  try {
    handle = await open(path, FLAGS);
  } catch (err) {
    throw openError(path, err);
  }
  try {
    const st = await handle.stat();
    checkStat(path, st, maxBytes);
    const buf = Buffer.allocUnsafe(Math.min(st.size, maxBytes) + 1);
    let n = 0;
    for (;;) {
      let got: number;
      try {
        ({ bytesRead: got } = await handle.read(buf, n, buf.length - n, null));
      } catch (err) {
        throw openError(path, err);
      }
      if (got === 0) break;
      n += got;
      if (n > maxBytes) throw new BoundedReadError(path, 'too-large', `is over the limit of ${formatBytes(maxBytes)}`);
      if (n === buf.length) break;
    }
    return buf.subarray(0, n);
  } finally {
    await handle.close();
  }
}
