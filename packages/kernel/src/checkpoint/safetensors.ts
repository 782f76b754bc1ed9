/**
 * The safetensors format, parsed by hand: an 8-byte little-endian header length N, N bytes of JSON
 * (`{ name: { dtype, shape, data_offsets: [begin, end] }, __metadata__?: {...} }`), then the raw little-endian data.
 * Reads F32, F16 and BF16 (converted to float32); writes F32.
 */
import { constants } from 'node:buffer';
import { writeFileAtomic } from '../util/atomic.js';
import { BoundedReadError, readRegularFile } from '../util/read-bounded.js';
import { CheckpointError } from './errors.js';

/** Largest file a Buffer can hold on this platform: the bound of one safetensors read. */
const MAX_LENGTH = constants.MAX_LENGTH;

/** A float32 tensor on the host. */
export interface SafeTensor {
  /** Shape. */
  readonly shape: readonly number[];
  /** Row-major values. */
  readonly data: Float32Array;
}

/** A parsed safetensors file. */
export interface SafetensorsFile {
  /** Tensors by name, converted to float32. */
  readonly tensors: Map<string, SafeTensor>;
  /** The `__metadata__` strings, if any. */
  readonly metadata: Record<string, string>;
  /** Original dtype of each tensor. */
  readonly dtypes: Map<string, string>;
}

const BYTES: Record<string, number> = { F32: 4, F16: 2, BF16: 2 };

function f16ToF32(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

/** Largest header accepted (the reference implementation's limit): a longer one is corrupt or hostile. */
export const MAX_SAFETENSORS_HEADER_BYTES = 100_000_000;

/**
 * Parses safetensors bytes. `where` names the file in errors: a corrupt or oversized header, offsets outside the data
 * or overlapping, a shape whose size does not match its bytes, an unsupported dtype, truncated data.
 */
export function parseSafetensors(buf: Uint8Array, where = 'model.safetensors'): SafetensorsFile {
  function fail(what: string): never {
    throw new CheckpointError(`${where}: ${what}`);
  }
  if (buf.byteLength < 8) fail(`file is truncated (${buf.byteLength} bytes, no header length)`);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const n = Number(view.getBigUint64(0, true));
  if (n > MAX_SAFETENSORS_HEADER_BYTES) fail(`header length ${n} is over the limit of ${MAX_SAFETENSORS_HEADER_BYTES} bytes: corrupt or not a safetensors file`);
  if (n > buf.byteLength - 8) fail(`header length ${n} exceeds the file size (${buf.byteLength} bytes): truncated or not a safetensors file`);
  let header: Record<string, unknown> = {};
  try {
    header = JSON.parse(new TextDecoder().decode(buf.subarray(8, 8 + n))) as Record<string, unknown>;
  } catch (err) {
    fail(`header is not valid JSON (${(err as Error).message}): corrupt or not a safetensors file`);
  }
  if (!header || typeof header !== 'object' || Array.isArray(header)) fail('header is not a JSON object');
  const dataStart = 8 + n;
  const dataLen = buf.byteLength - dataStart;
  const tensors = new Map<string, SafeTensor>();
  const dtypes = new Map<string, string>();
  const spans: [number, number, string][] = [];
  let metadata: Record<string, string> = {};
  const isCount = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
  for (const [name, meta] of Object.entries(header)) {
    if (name === '__metadata__') {
      if (meta !== null && (typeof meta !== 'object' || Array.isArray(meta) || Object.values(meta).some((v) => typeof v !== 'string'))) {
        fail('__metadata__ must map names to strings');
      }
      metadata = Object.fromEntries(Object.entries(meta ?? {})) as Record<string, string>;
      continue;
    }
    const m = meta as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (!m || typeof m !== 'object' || !Array.isArray(m.shape) || !Array.isArray(m.data_offsets) || m.data_offsets.length !== 2) {
      fail(`tensor '${name}': header entry must have dtype, shape and data_offsets`);
    }
    const dtype = String(m.dtype);
    const width = BYTES[dtype];
    if (!width) fail(`tensor '${name}' has dtype ${dtype}; only F32, F16 and BF16 are supported`);
    const shape = m.shape as unknown[];
    if (!shape.every(isCount)) fail(`tensor '${name}' has shape ${JSON.stringify(shape).slice(0, 80)}: dimensions must be non-negative integers`);
    const count = (shape as number[]).reduce((a, b) => a * b, 1);
    const [b, e] = m.data_offsets as unknown[];
    if (!isCount(b) || !isCount(e) || e < b) fail(`tensor '${name}' has invalid data_offsets ${JSON.stringify(m.data_offsets).slice(0, 80)}`);
    if ((e as number) > dataLen) fail(`tensor '${name}' ends at byte ${e} of the data but the file has only ${dataLen}: truncated`);
    // The byte span bounds the size: a shape whose product overflows cannot match it.
    if (!Number.isSafeInteger(count * width) || (e as number) - (b as number) !== count * width) {
      fail(`tensor '${name}' spans ${(e as number) - (b as number)} bytes but shape [${shape.join(', ')}] × ${dtype} needs ${count * width}`);
    }
    spans.push([b as number, e as number, name]);
    const start = buf.byteOffset + dataStart + (b as number);
    const data = new Float32Array(count);
    const dv = new DataView(buf.buffer, start, (e as number) - (b as number));
    if (dtype === 'F32') for (let i = 0; i < count; i++) data[i] = dv.getFloat32(i * 4, true);
    else if (dtype === 'F16') for (let i = 0; i < count; i++) data[i] = f16ToF32(dv.getUint16(i * 2, true));
    else {
      const u = new Uint32Array(1);
      const f = new Float32Array(u.buffer);
      for (let i = 0; i < count; i++) { u[0] = dv.getUint16(i * 2, true) << 16; data[i] = f[0]!; }
    }
    tensors.set(name, { shape: shape as number[], data });
    dtypes.set(name, dtype);
  }
  spans.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  for (let i = 1; i < spans.length; i++) {
    const [prev, cur] = [spans[i - 1]!, spans[i]!];
    if (cur[0] < prev[1]) fail(`tensors '${prev[2]}' and '${cur[2]}' overlap in the data (bytes ${cur[0]} to ${prev[1]}): corrupt file`);
  }
  return { tensors, metadata, dtypes };
}

/** Reads and parses a safetensors file (a regular file, never a device or a FIFO); errors name the file. */
export async function readSafetensors(path: string): Promise<SafetensorsFile> {
  let buf: Buffer;
  try {
    buf = await readRegularFile(path, MAX_LENGTH);
  } catch (err) {
    if (err instanceof BoundedReadError) throw new CheckpointError(`${path}: ${err.message}`);
    throw err;
  }
  return parseSafetensors(buf, path);
}

/** Serialises float32 tensors to safetensors bytes (header padded to 8 bytes, like the reference implementation). */
export function serializeSafetensors(tensors: ReadonlyMap<string, SafeTensor>, metadata?: Record<string, string>): Uint8Array {
  const header: Record<string, unknown> = {};
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  for (const [name, t] of tensors) {
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.data.length) throw new Error(`tensor '${name}': shape [${t.shape.join(', ')}] does not match ${t.data.length} values`);
    header[name] = { dtype: 'F32', shape: [...t.shape], data_offsets: [offset, offset + count * 4] };
    offset += count * 4;
  }
  let h = new TextEncoder().encode(JSON.stringify(header));
  const pad = (8 - (h.length % 8)) % 8;
  if (pad) {
    const p = new Uint8Array(h.length + pad).fill(0x20);
    p.set(h);
    h = p;
  }
  const out = new Uint8Array(8 + h.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  let pos = 8 + h.length;
  for (const t of tensors.values()) {
    // Float32Array is little-endian on every platform Node supports.
    out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), pos);
    pos += t.data.byteLength;
  }
  return out;
}

/** Writes a safetensors file atomically. */
export async function writeSafetensors(path: string, tensors: ReadonlyMap<string, SafeTensor>, metadata?: Record<string, string>): Promise<void> {
  await writeFileAtomic(path, serializeSafetensors(tensors, metadata));
}
