/**
 * The safetensors format, parsed by hand: an 8-byte little-endian header length N, N bytes of JSON
 * (`{ name: { dtype, shape, data_offsets: [begin, end] }, __metadata__?: {...} }`), then the raw little-endian data.
 * Reads F32, F16 and BF16 (converted to float32); writes F32.
 */
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../util/atomic.js';

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

/** Parses safetensors bytes. `where` names the file in errors (corrupt header, truncated data, unsupported dtype). */
export function parseSafetensors(buf: Uint8Array, where = 'model.safetensors'): SafetensorsFile {
  if (buf.byteLength < 8) throw new Error(`${where}: file is truncated (${buf.byteLength} bytes, no header length)`);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const n = Number(view.getBigUint64(0, true));
  if (n > buf.byteLength - 8) throw new Error(`${where}: header length ${n} exceeds the file size (${buf.byteLength} bytes): truncated or not a safetensors file`);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(new TextDecoder().decode(buf.subarray(8, 8 + n))) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`${where}: header is not valid JSON (${(err as Error).message}): corrupt or not a safetensors file`);
  }
  if (!header || typeof header !== 'object' || Array.isArray(header)) throw new Error(`${where}: header is not a JSON object`);
  const dataStart = 8 + n;
  const dataLen = buf.byteLength - dataStart;
  const tensors = new Map<string, SafeTensor>();
  const dtypes = new Map<string, string>();
  let metadata: Record<string, string> = {};
  for (const [name, meta] of Object.entries(header)) {
    if (name === '__metadata__') { metadata = (meta ?? {}) as Record<string, string>; continue; }
    const m = meta as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (!m || typeof m !== 'object' || !Array.isArray(m.shape) || !Array.isArray(m.data_offsets) || m.data_offsets.length !== 2) {
      throw new Error(`${where}: tensor '${name}': header entry must have dtype, shape and data_offsets`);
    }
    const dtype = String(m.dtype);
    const width = BYTES[dtype];
    if (!width) throw new Error(`${where}: tensor '${name}' has dtype ${dtype}; only F32, F16 and BF16 are supported`);
    const shape = (m.shape as unknown[]).map(Number);
    const count = shape.reduce((a, b) => a * b, 1);
    const [b, e] = (m.data_offsets as unknown[]).map(Number) as [number, number];
    if (!(b >= 0 && e >= b)) throw new Error(`${where}: tensor '${name}' has invalid data_offsets [${b}, ${e}]`);
    if (e > dataLen) throw new Error(`${where}: tensor '${name}' ends at byte ${e} of the data but the file has only ${dataLen}: truncated`);
    if (e - b !== count * width) throw new Error(`${where}: tensor '${name}' spans ${e - b} bytes but shape [${shape.join(', ')}] × ${dtype} needs ${count * width}`);
    const start = buf.byteOffset + dataStart + b;
    const data = new Float32Array(count);
    const dv = new DataView(buf.buffer, start, e - b);
    if (dtype === 'F32') for (let i = 0; i < count; i++) data[i] = dv.getFloat32(i * 4, true);
    else if (dtype === 'F16') for (let i = 0; i < count; i++) data[i] = f16ToF32(dv.getUint16(i * 2, true));
    else {
      const u = new Uint32Array(1);
      const f = new Float32Array(u.buffer);
      for (let i = 0; i < count; i++) { u[0] = dv.getUint16(i * 2, true) << 16; data[i] = f[0]!; }
    }
    tensors.set(name, { shape, data });
    dtypes.set(name, dtype);
  }
  return { tensors, metadata, dtypes };
}

/** Reads and parses a safetensors file; errors name the file. */
export async function readSafetensors(path: string): Promise<SafetensorsFile> {
  let buf: Buffer;
  try {
    buf = await readFile(path);
  } catch (err) {
    throw new Error(`${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
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
