// Reads a Parquet file with hyparquet and writes its rows as JSON lines to a file. Run as a child process by the
// code environment's SYNCHRONOUS dataset loader (hyparquet's API is async; environment creation is not).
// Usage: node parquet-rows.mjs <input.parquet> <output.jsonl> [limit]
import { createWriteStream } from 'node:fs';
import * as zlib from 'node:zlib';
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';

const [input, output, limitArg] = process.argv.slice(2);
const limit = limitArg ? Number(limitArg) : undefined;

/** Decompressors beyond hyparquet's built-in SNAPPY, from Node's zlib (ZSTD only where this Node has it). */
const compressors = {
  GZIP: (bytes) => new Uint8Array(zlib.gunzipSync(bytes)),
  BROTLI: (bytes) => new Uint8Array(zlib.brotliDecompressSync(bytes)),
  ...(typeof zlib.zstdDecompressSync === 'function'
    ? { ZSTD: (bytes) => new Uint8Array(zlib.zstdDecompressSync(bytes)) }
    : {}),
};

const replacer = (_key, value) => {
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  return value;
};

try {
  const file = await asyncBufferFromFile(input);
  const rows = await parquetReadObjects({
    file,
    compressors,
    ...(limit !== undefined ? { rowStart: 0, rowEnd: limit } : {}),
  });
  const out = createWriteStream(output);
  for (const row of rows) out.write(`${JSON.stringify(row, replacer)}\n`);
  await new Promise((resolve, reject) => out.end((err) => (err ? reject(err) : resolve(undefined))));
} catch (err) {
  process.stderr.write(String(err && err.message ? err.message : err));
  process.exit(1);
}
