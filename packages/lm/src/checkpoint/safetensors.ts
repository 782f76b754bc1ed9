/**
 * The safetensors format, parsed by hand: an 8-byte little-endian header length N, N bytes of JSON
 * (`{ name: { dtype, shape, data_offsets: [begin, end] }, __metadata__?: {...} }`), then the raw little-endian data.
 * Reads F32, F16 and BF16 (converted to float32, one tensor at a time); writes F32, F16 or BF16 per tensor.
 *
 * Files are read by ranges, never whole: the header, then each tensor's bytes straight into its own Float32Array
 * (16-bit data goes through a bounded scratch buffer). So a file over Node's 2 GiB buffer limit loads, and loading
 * holds little more than the float32 weights themselves. Writes stream tensor by tensor the same way.
 */
import type { FileHandle } from 'node:fs/promises';
import { writeFileAtomicWith, BoundedReadError, openRegularFile } from '@troupe/kernel';
import { CheckpointError } from './errors.js';

/** A stored dtype this module reads and writes. */
export type StoredDtype = 'F32' | 'F16' | 'BF16';

/** A float32 tensor on the host. */
export interface SafeTensor {
  /** Shape. */
  readonly shape: readonly number[];
  /** Row-major values. */
  readonly data: Float32Array;
  /** The dtype it is (or is to be) stored as on disk; F32 when absent. */
  readonly dtype?: StoredDtype;
}

/** A parsed safetensors file. */
export interface SafetensorsFile {
  /** Tensors by name, converted to float32 (each carries its stored `dtype`). */
  readonly tensors: Map<string, SafeTensor>;
  /** The `__metadata__` strings, if any. */
  readonly metadata: Record<string, string>;
  /** Original dtype of each tensor. */
  readonly dtypes: Map<string, string>;
}

const BYTES: Record<StoredDtype, number> = { F32: 4, F16: 2, BF16: 2 };

/** Bytes per value of a stored dtype. */
export function dtypeBytes(dtype: StoredDtype): number {
  return BYTES[dtype];
}

/** Largest header accepted (the reference implementation's limit): a longer one is corrupt or hostile. */
export const MAX_SAFETENSORS_HEADER_BYTES = 100_000_000;

/** Default size of one read (and of the scratch buffer 16-bit data is converted through). */
export const DEFAULT_READ_CHUNK_BYTES = 64 << 20;

/** One tensor's entry in a safetensors header. */
interface HeaderEntry {
  readonly name: string;
  readonly dtype: StoredDtype;
  readonly shape: number[];
  readonly count: number;
  /** Byte range within the data section. */
  readonly begin: number;
  readonly end: number;
}

/** A checked safetensors header: its entries in file order, metadata, and where the data section starts. */
interface Header {
  readonly entries: HeaderEntry[];
  readonly metadata: Record<string, string>;
  readonly dataStart: number;
}

/**
 * Checks a header (the JSON bytes) against a file of `fileSize` bytes: a corrupt header, offsets outside the data or
 * overlapping, a shape whose size does not match its bytes, an unsupported dtype, truncated data.
 */
function checkHeader(json: Uint8Array, n: number, fileSize: number, fail: (what: string) => never): Header {
  let header: Record<string, unknown> = {};
  try {
    header = JSON.parse(new TextDecoder().decode(json)) as Record<string, unknown>;
  } catch (err) {
    fail(`header is not valid JSON (${(err as Error).message}): corrupt or not a safetensors file`);
  }
  if (!header || typeof header !== 'object' || Array.isArray(header)) fail('header is not a JSON object');
  const dataStart = 8 + n;
  const dataLen = fileSize - dataStart;
  const entries: HeaderEntry[] = [];
  let metadata: Record<string, string> = {};
  const isCount = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
  for (const [name, meta] of Object.entries(header)) {
    if (name === '__metadata__') {
      if (
        meta !== null &&
        (typeof meta !== 'object' || Array.isArray(meta) || Object.values(meta).some((v) => typeof v !== 'string'))
      ) {
        fail('__metadata__ must map names to strings');
      }
      metadata = Object.fromEntries(Object.entries(meta ?? {})) as Record<string, string>;
      continue;
    }
    const m = meta as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (
      !m ||
      typeof m !== 'object' ||
      !Array.isArray(m.shape) ||
      !Array.isArray(m.data_offsets) ||
      m.data_offsets.length !== 2
    ) {
      fail(`tensor '${name}': header entry must have dtype, shape and data_offsets`);
    }
    const dtype = String(m.dtype);
    const width = Object.hasOwn(BYTES, dtype) ? BYTES[dtype as StoredDtype] : 0;
    if (!width) fail(`tensor '${name}' has dtype ${dtype}; only F32, F16 and BF16 are supported`);
    const shape = m.shape as unknown[];
    if (!shape.every(isCount))
      fail(
        `tensor '${name}' has shape ${JSON.stringify(shape).slice(0, 80)}: dimensions must be non-negative integers`,
      );
    const count = (shape as number[]).reduce((a, b) => a * b, 1);
    const [b, e] = m.data_offsets as unknown[];
    if (!isCount(b) || !isCount(e) || e < b)
      fail(`tensor '${name}' has invalid data_offsets ${JSON.stringify(m.data_offsets).slice(0, 80)}`);
    if ((e as number) > dataLen)
      fail(`tensor '${name}' ends at byte ${e} of the data but the file has only ${dataLen}: truncated`);
    // The byte span bounds the size: a shape whose product overflows cannot match it.
    if (!Number.isSafeInteger(count * width) || (e as number) - (b as number) !== count * width) {
      fail(
        `tensor '${name}' spans ${(e as number) - (b as number)} bytes but shape [${shape.join(', ')}] × ${dtype} needs ${count * width}`,
      );
    }
    entries.push({
      name,
      dtype: dtype as StoredDtype,
      shape: shape as number[],
      count,
      begin: b as number,
      end: e as number,
    });
  }
  const spans = [...entries].sort((x, y) => x.begin - y.begin || x.end - y.end);
  for (let i = 1; i < spans.length; i++) {
    const [prev, cur] = [spans[i - 1]!, spans[i]!];
    if (cur.begin < prev.end)
      fail(
        `tensors '${prev.name}' and '${cur.name}' overlap in the data (bytes ${cur.begin} to ${prev.end}): corrupt file`,
      );
  }
  return { entries, metadata, dataStart };
}

/** Checks the 8-byte header length of a file of `fileSize` bytes. */
function headerLength(first8: Uint8Array, fileSize: number, fail: (what: string) => never): number {
  if (fileSize < 8) fail(`file is truncated (${fileSize} bytes, no header length)`);
  const n = Number(new DataView(first8.buffer, first8.byteOffset, 8).getBigUint64(0, true));
  if (n > MAX_SAFETENSORS_HEADER_BYTES)
    fail(
      `header length ${n} is over the limit of ${MAX_SAFETENSORS_HEADER_BYTES} bytes: corrupt or not a safetensors file`,
    );
  if (n > fileSize - 8)
    fail(`header length ${n} exceeds the file size (${fileSize} bytes): truncated or not a safetensors file`);
  return n;
}

function f16ToF32(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

const cvt = new Float32Array(1);
const cvtBits = new Uint32Array(cvt.buffer);

/** float32 → IEEE half, rounded to nearest even (overflow to ±Infinity, NaN kept). */
function f32ToF16(x: number): number {
  cvt[0] = x;
  const u = cvtBits[0]!;
  const sign = (u >>> 16) & 0x8000;
  const exp = (u >>> 23) & 0xff;
  const man = u & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (man ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    const m = man | 0x800000;
    const shift = 14 - e;
    let h = m >>> shift;
    const rem = m & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && h & 1)) h++;
    return sign | h;
  }
  let h = (e << 10) | (man >>> 13);
  const rem = man & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && h & 1)) h++; // a carry into the exponent is the right rounding
  return sign | h;
}

/** float32 → bfloat16 bits, rounded to nearest even (NaN kept a NaN). */
function f32ToBf16(x: number): number {
  cvt[0] = x;
  const u = cvtBits[0]!;
  if ((u & 0x7f800000) === 0x7f800000 && u & 0x7fffff) return ((u >>> 16) | 0x40) & 0xffff;
  return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}

/** Decodes `n` 16-bit values of `src` (little-endian) into `out` from index `at`. */
function decode16(src: Uint8Array, n: number, dtype: 'F16' | 'BF16', out: Float32Array, at: number): void {
  const dv = new DataView(src.buffer, src.byteOffset, n * 2);
  if (dtype === 'F16') {
    for (let i = 0; i < n; i++) out[at + i] = f16ToF32(dv.getUint16(i * 2, true));
  } else {
    for (let i = 0; i < n; i++) {
      cvtBits[0] = dv.getUint16(i * 2, true) << 16;
      out[at + i] = cvt[0]!;
    }
  }
}

/** Encodes values `from` to `to` of `data` as 16-bit into `dst` (little-endian). */
function encode16(data: Float32Array, from: number, to: number, dtype: 'F16' | 'BF16', dst: Uint8Array): void {
  const dv = new DataView(dst.buffer, dst.byteOffset, (to - from) * 2);
  const enc = dtype === 'F16' ? f32ToF16 : f32ToBf16;
  for (let i = from; i < to; i++) dv.setUint16((i - from) * 2, enc(data[i]!), true);
}

/** The bytes of a float32 array, in place. */
function bytesOf(data: Float32Array): Uint8Array {
  // Float32Array is little-endian on every platform Node supports.
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * Parses safetensors bytes held in memory. `where` names the file in errors: a corrupt or oversized header, offsets
 * outside the data or overlapping, a shape whose size does not match its bytes, an unsupported dtype, truncated data.
 */
export function parseSafetensors(buf: Uint8Array, where = 'model.safetensors'): SafetensorsFile {
  const fail = (what: string): never => {
    throw new CheckpointError(`${where}: ${what}`);
  };
  const n = headerLength(buf, buf.byteLength, fail);
  const { entries, metadata, dataStart } = checkHeader(buf.subarray(8, 8 + n), n, buf.byteLength, fail);
  const tensors = new Map<string, SafeTensor>();
  const dtypes = new Map<string, string>();
  for (const t of entries) {
    const src = buf.subarray(dataStart + t.begin, dataStart + t.end);
    const data = new Float32Array(t.count);
    if (t.dtype === 'F32') bytesOf(data).set(src);
    else decode16(src, t.count, t.dtype, data, 0);
    tensors.set(t.name, { shape: t.shape, data, dtype: t.dtype });
    dtypes.set(t.name, t.dtype);
  }
  return { tensors, metadata, dtypes };
}

/** Options of {@link readSafetensors}. */
export interface ReadSafetensorsOptions {
  /** Largest single read, and the size of the scratch buffer 16-bit data goes through (default 64 MiB). */
  readonly chunkBytes?: number;
}

/** Reads exactly `into.byteLength` bytes at `position`, in reads of at most `chunk` bytes. */
async function readRange(
  handle: FileHandle,
  into: Uint8Array,
  position: number,
  chunk: number,
  fail: (what: string) => never,
): Promise<void> {
  let done = 0;
  while (done < into.byteLength) {
    const len = Math.min(chunk, into.byteLength - done);
    const { bytesRead } = await handle.read(into, done, len, position + done);
    if (bytesRead === 0) fail(`file ended at byte ${position + done} while reading: it shrank or is truncated`);
    done += bytesRead;
  }
}

/** One tensor of an open safetensors file: where its bytes lie. */
export interface SafetensorsEntry {
  /** Tensor name. */
  readonly name: string;
  /** Stored dtype. */
  readonly dtype: StoredDtype;
  /** Shape. */
  readonly shape: readonly number[];
  /** Number of values. */
  readonly count: number;
  /** Byte offset of its data from the start of the file. */
  readonly offset: number;
  /** Length of its data in bytes. */
  readonly bytes: number;
}

/**
 * A safetensors file opened for reading tensor by tensor (a regular file, never a device or a FIFO; any size): the
 * header is read and checked when it opens, then {@link SafetensorsReader.read} reads one tensor as float32 by
 * ranges. Errors name the file. Close it when done.
 */
export class SafetensorsReader {
  /** Tensors in file order. */
  readonly entries: readonly SafetensorsEntry[];
  private scratch: Uint8Array | undefined;

  private constructor(
    /** The file's path. */
    readonly path: string,
    private readonly handle: FileHandle,
    /** The file's size in bytes. */
    readonly size: number,
    entries: readonly SafetensorsEntry[],
    /** The `__metadata__` strings. */
    readonly metadata: Record<string, string>,
    private readonly chunk: number,
  ) {
    this.entries = entries;
  }

  /** Opens `path` and checks its header. */
  static async open(path: string, options: ReadSafetensorsOptions = {}): Promise<SafetensorsReader> {
    const chunk = Math.max(8, Math.floor(options.chunkBytes ?? DEFAULT_READ_CHUNK_BYTES));
    const fail = (what: string): never => {
      throw new CheckpointError(`${path}: ${what}`);
    };
    let opened;
    try {
      opened = await openRegularFile(path);
    } catch (err) {
      if (err instanceof BoundedReadError) throw new CheckpointError(`${path}: ${err.message}`);
      throw err;
    }
    const { handle, size } = opened;
    try {
      const first8 = new Uint8Array(8);
      if (size >= 8) await readRange(handle, first8, 0, chunk, fail);
      const n = headerLength(first8, size, fail);
      const json = new Uint8Array(n);
      await readRange(handle, json, 8, chunk, fail);
      const { entries, metadata, dataStart } = checkHeader(json, n, size, fail);
      const list = entries.map((t) => ({
        name: t.name,
        dtype: t.dtype,
        shape: t.shape,
        count: t.count,
        offset: dataStart + t.begin,
        bytes: t.end - t.begin,
      }));
      return new SafetensorsReader(path, handle, size, list, metadata, chunk);
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /** Reads one tensor as float32 (16-bit data converted through a bounded scratch buffer). */
  async read(t: SafetensorsEntry): Promise<Float32Array> {
    const fail = (what: string): never => {
      throw new CheckpointError(`${this.path}: ${what}`);
    };
    const data = new Float32Array(t.count);
    if (t.dtype === 'F32') {
      await readRange(this.handle, bytesOf(data), t.offset, this.chunk, fail);
      return data;
    }
    const per = Math.max(1, Math.floor(this.chunk / 2));
    this.scratch ??= new Uint8Array(Math.min(per, Math.max(1, maxCount16(this.entries))) * 2);
    for (let i = 0; i < t.count; i += per) {
      const k = Math.min(per, t.count - i);
      const part = this.scratch.subarray(0, k * 2);
      await readRange(this.handle, part, t.offset + i * 2, this.chunk, fail);
      decode16(part, k, t.dtype, data, i);
    }
    return data;
  }

  /** Closes the file. */
  async close(): Promise<void> {
    await this.handle.close();
  }
}

/**
 * Reads a safetensors file by ranges (a regular file, never a device or a FIFO; any size): the header, then each
 * tensor straight into its own Float32Array. Errors name the file.
 */
export async function readSafetensors(path: string, options: ReadSafetensorsOptions = {}): Promise<SafetensorsFile> {
  const reader = await SafetensorsReader.open(path, options);
  try {
    const tensors = new Map<string, SafeTensor>();
    const dtypes = new Map<string, string>();
    for (const t of reader.entries) {
      tensors.set(t.name, { shape: t.shape, data: await reader.read(t), dtype: t.dtype });
      dtypes.set(t.name, t.dtype);
    }
    return { tensors, metadata: reader.metadata, dtypes };
  } finally {
    await reader.close();
  }
}

/** The most values of any 16-bit tensor (so a file of small tensors gets a small scratch buffer). */
function maxCount16(entries: readonly { readonly dtype: StoredDtype; readonly count: number }[]): number {
  let m = 0;
  for (const t of entries) if (t.dtype !== 'F32' && t.count > m) m = t.count;
  return m;
}

/** The stored dtype of a tensor: its own, else `fallback`. */
function storedAs(t: SafeTensor, fallback: StoredDtype | undefined): StoredDtype {
  return fallback ?? t.dtype ?? 'F32';
}

/** Bytes a tensor takes on disk in dtype `dtype`. */
export function storedBytes(t: SafeTensor, dtype?: StoredDtype): number {
  return t.data.length * BYTES[storedAs(t, dtype)];
}

/** Options of {@link serializeSafetensors} and {@link writeSafetensors}. */
export interface WriteSafetensorsOptions {
  /** Store every tensor in this dtype; by default each tensor's own `dtype` (F32 when it has none). */
  readonly dtype?: StoredDtype;
}

/** The header bytes (padded to 8 like the reference implementation) and the data length of a set of tensors. */
function buildHeader(
  tensors: ReadonlyMap<string, SafeTensor>,
  metadata: Record<string, string> | undefined,
  dtype: StoredDtype | undefined,
): { head: Uint8Array; dataBytes: number } {
  const header: Record<string, unknown> = {};
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  for (const [name, t] of tensors) {
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.data.length)
      throw new Error(`tensor '${name}': shape [${t.shape.join(', ')}] does not match ${t.data.length} values`);
    const dt = storedAs(t, dtype);
    header[name] = { dtype: dt, shape: [...t.shape], data_offsets: [offset, offset + count * BYTES[dt]] };
    offset += count * BYTES[dt];
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const pad = (8 - (json.length % 8)) % 8;
  const head = new Uint8Array(8 + json.length + pad).fill(0x20, 8 + json.length);
  new DataView(head.buffer).setBigUint64(0, BigInt(json.length + pad), true);
  head.set(json, 8);
  return { head, dataBytes: offset };
}

/** Gives the stored bytes of a tensor, in pieces of at most `chunk` bytes (16-bit data encoded into a scratch buffer). */
function* tensorBytes(t: SafeTensor, dtype: StoredDtype, chunk: number): Generator<Uint8Array> {
  if (dtype === 'F32') {
    const all = bytesOf(t.data);
    for (let i = 0; i < all.byteLength; i += chunk) yield all.subarray(i, Math.min(all.byteLength, i + chunk));
    return;
  }
  const per = Math.max(1, Math.floor(chunk / 2));
  const scratch = new Uint8Array(Math.min(per, t.data.length) * 2);
  for (let i = 0; i < t.data.length; i += per) {
    const to = Math.min(t.data.length, i + per);
    encode16(t.data, i, to, dtype, scratch);
    yield scratch.subarray(0, (to - i) * 2);
  }
}

/** Serialises tensors to safetensors bytes in memory (for small files; {@link writeSafetensors} streams to disk). */
export function serializeSafetensors(
  tensors: ReadonlyMap<string, SafeTensor>,
  metadata?: Record<string, string>,
  options: WriteSafetensorsOptions = {},
): Uint8Array {
  const { head, dataBytes } = buildHeader(tensors, metadata, options.dtype);
  const out = new Uint8Array(head.length + dataBytes);
  out.set(head);
  let pos = head.length;
  for (const t of tensors.values()) {
    for (const piece of tensorBytes(t, storedAs(t, options.dtype), DEFAULT_READ_CHUNK_BYTES)) {
      out.set(piece, pos);
      pos += piece.byteLength;
    }
  }
  return out;
}

/** Writes a safetensors file atomically, tensor by tensor (never the whole file in one buffer). */
export async function writeSafetensors(
  path: string,
  tensors: ReadonlyMap<string, SafeTensor>,
  metadata?: Record<string, string>,
  options: WriteSafetensorsOptions = {},
): Promise<void> {
  const { head } = buildHeader(tensors, metadata, options.dtype);
  await writeFileAtomicWith(path, async (handle) => {
    await handle.write(head);
    for (const t of tensors.values()) {
      for (const piece of tensorBytes(t, storedAs(t, options.dtype), DEFAULT_READ_CHUNK_BYTES)) {
        let done = 0;
        while (done < piece.byteLength) done += (await handle.write(piece, done, piece.byteLength - done)).bytesWritten;
      }
    }
  });
}
