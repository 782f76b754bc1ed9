import { createHash } from 'node:crypto';
import type { Rng } from '../contracts/common.js';

/**
 * Derives a 32-bit seed from any parts (numbers, strings): `deriveSeed(seed, 'train', index)`.
 * Stable across platforms and Node versions (SHA-256 based), so instances and samples are reproducible.
 */
export function deriveSeed(...parts: readonly (string | number)[]): number {
  const digest = createHash('sha256').update(parts.map(String).join('\u241f')).digest();
  return digest.readUInt32LE(0);
}

/**
 * A small, fast, seedable generator (sfc32) whose whole state is four 32-bit words, so it can be checkpointed
 * and restored exactly: `createRng(rng.state())` continues the stream where `rng` stands (a seed is hashed and
 * warmed up; a state is taken as it is). Not cryptographic.
 */
export function createRng(seed: number | string | readonly number[]): Rng {
  let a: number, b: number, c: number, d: number;
  const restored = Array.isArray(seed);
  if (restored) {
    const words = seed as readonly number[];
    if (words.length !== 4 || !words.every((x) => Number.isInteger(x) && x >= 0 && x <= 0xffffffff)) {
      throw new RangeError(`createRng: a state is four unsigned 32-bit integers, got ${JSON.stringify(words)}`);
    }
    [a, b, c, d] = words as [number, number, number, number];
  } else {
    const digest = createHash('sha256')
      .update(`rng\u241f${String(seed)}`)
      .digest();
    a = digest.readUInt32LE(0);
    b = digest.readUInt32LE(4);
    c = digest.readUInt32LE(8);
    d = digest.readUInt32LE(12);
  }
  const nextU32 = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    const r = (t + d) | 0;
    c = (c + r) | 0;
    return r >>> 0;
  };
  // A fresh seed's first outputs are poorly mixed, so they are skipped; a restored state continues as it stood.
  if (!restored) for (let i = 0; i < 12; i++) nextU32();
  return {
    next: () => nextU32() / 4294967296,
    int: (n: number) => {
      if (!Number.isInteger(n) || n <= 0) throw new RangeError(`Rng.int: n must be a positive integer, got ${n}`);
      return Math.floor((nextU32() / 4294967296) * n);
    },
    state: () => [a >>> 0, b >>> 0, c >>> 0, d >>> 0],
  };
}

/** Fisher–Yates shuffle of a copy of `items`. */
export function shuffled<T>(items: readonly T[], rng: Rng): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
