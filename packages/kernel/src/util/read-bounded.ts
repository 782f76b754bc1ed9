/**
 * Reading files named by untrusted input (a spec's `extends`, a checkpoint's shard index) without being led into
 * reading forever: only regular files are read (never `/dev/zero`, a FIFO, a socket or a folder), and never more than
 * a stated number of bytes. The file is opened non-blocking (so a FIFO cannot hang the open) and checked through the
 * open descriptor, so it cannot be swapped between the check and the read.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

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

function kindOf(st: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isSocket(): boolean;
}): string {
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

function checkStat(
  path: string,
  st: { size: number; isFile(): boolean } & Parameters<typeof kindOf>[0],
  maxBytes: number,
): void {
  if (!st.isFile()) throw new BoundedReadError(path, 'not-regular', `is ${kindOf(st)}, not a regular file`);
  if (st.size > maxBytes) {
    throw new BoundedReadError(path, 'too-large', `is ${st.size} bytes, over the limit of ${formatBytes(maxBytes)}`);
  }
}

/**
 * The buffer a bounded read fills: the size fstat gave plus one byte, so that a file that grew since is still caught
 * past `maxBytes`. `add` counts each read; `done` once the file ended or the buffer is full.
 */
class Filling {
  readonly buf: Buffer;
  n = 0;
  done = false;

  constructor(
    private readonly path: string,
    size: number,
    private readonly maxBytes: number,
  ) {
    this.buf = Buffer.allocUnsafe(Math.min(size, maxBytes) + 1);
  }

  /** Room left in the buffer. */
  get room(): number {
    return this.buf.length - this.n;
  }

  add(got: number): void {
    this.n += got;
    if (this.n > this.maxBytes)
      throw new BoundedReadError(this.path, 'too-large', `is over the limit of ${formatBytes(this.maxBytes)}`);
    this.done = got === 0 || this.n === this.buf.length;
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.n);
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
    const into = new Filling(path, st.size, maxBytes);
    try {
      while (!into.done) into.add(readSync(fd, into.buf, into.n, into.room, null));
    } catch (err) {
      throw err instanceof BoundedReadError ? err : openError(path, err);
    }
    return into.bytes();
  } finally {
    closeSync(fd);
  }
}

/** Reads a regular file of at most `maxBytes` bytes. Throws {@link BoundedReadError}. */
export async function readRegularFile(path: string, maxBytes: number): Promise<Buffer> {
  const { handle, size } = await openRegularFile(path, maxBytes);
  try {
    const into = new Filling(path, size, maxBytes);
    try {
      while (!into.done) into.add((await handle.read(into.buf, into.n, into.room, null)).bytesRead);
    } catch (err) {
      throw err instanceof BoundedReadError ? err : openError(path, err);
    }
    return into.bytes();
  } finally {
    await handle.close();
  }
}

/**
 * Opens a regular file of at most `maxBytes` bytes for reading by ranges (a file too large for one buffer); the caller
 * closes the handle. Throws {@link BoundedReadError}.
 */
export async function openRegularFile(
  path: string,
  maxBytes = Number.MAX_SAFE_INTEGER,
): Promise<{ handle: FileHandle; size: number }> {
  let handle;
  try {
    handle = await open(path, FLAGS);
  } catch (err) {
    throw openError(path, err);
  }
  try {
    const st = await handle.stat();
    checkStat(path, st, maxBytes);
    return { handle, size: st.size };
  } catch (err) {
    await handle.close();
    throw err;
  }
}
