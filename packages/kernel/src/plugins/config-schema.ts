/**
 * A contribution's config schema, read from the JSON file that ships with its package. The file is the one source of
 * the schema: the contribution states it with {@link readConfigSchema}, `troupe manifest` names the same file in the
 * package.json manifest (found with {@link configSchemaFile}), and the kernel validates configs with it before any
 * plugin code runs.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { JsonSchema } from '../contracts/common.js';

/**
 * Where a schema object records its file: a non-enumerable symbol property (invisible to JSON, ajv and key listings),
 * registered globally so that a schema read by one copy of the kernel is recognised by another.
 */
const SOURCE = Symbol.for('troupe.configSchemaFile');

/**
 * Reads a JSON schema file, e.g. `readConfigSchema(new URL('../schemas/grid.config.json', import.meta.url))`, and
 * remembers which file the schema came from. Throws an Error naming the file when it is missing or not JSON.
 */
export function readConfigSchema(file: URL | string): JsonSchema {
  const path = file instanceof URL ? fileURLToPath(file) : file;
  let schema: unknown;
  try {
    schema = JSON.parse(readFileSync(path, 'utf8'));
  } catch (cause) {
    const missing = (cause as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Error(
      `${missing ? 'config schema file does not exist' : `config schema is not valid JSON (${(cause as Error).message})`}: ${path}`,
      { cause },
    );
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    throw new Error(`config schema must be a JSON object: ${path}`);
  Object.defineProperty(schema, SOURCE, { value: path, enumerable: false });
  return schema as JsonSchema;
}

/** The absolute path of the file a schema was read from with {@link readConfigSchema}; undefined for a schema built in code. */
export function configSchemaFile(schema: unknown): string | undefined {
  const file = typeof schema === 'object' && schema !== null ? (schema as Record<symbol, unknown>)[SOURCE] : undefined;
  return typeof file === 'string' ? file : undefined;
}
