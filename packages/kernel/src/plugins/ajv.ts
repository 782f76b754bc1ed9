import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { JsonSchema } from '../contracts/common.js';
import { closest, didYouMean } from './suggest.js';

type AddFormats = (ajv: Ajv | Ajv2020) => unknown;
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

/** One schema violation, with the key path as segments and a readable message. */
export interface SchemaIssue {
  /** Path of the offending value, e.g. `['seats', 'coder', 'policy']`. */
  readonly path: readonly (string | number)[];
  /** What is wrong, e.g. `must be string`. */
  readonly message: string;
  /** What to do, e.g. `did you mean "shared"?`. */
  readonly hint?: string;
  /** True when the path names an unknown key (so a locator can point at the key rather than the value). */
  readonly unknownKey?: boolean;
}

// strictNumbers: NaN and ±Infinity (YAML's .nan, .inf, 1e400) are not numbers, so no range check can be bypassed.
const OPTIONS: Options = { allErrors: true, useDefaults: true, strict: false, verbose: true, strictNumbers: true };

/**
 * Creates an ajv instance for the given dialect with formats, `allErrors`, `useDefaults` and `verbose` (the
 * latter so that messages can suggest property names). Plugin schemas are not strict-checked.
 */
export function createAjv(dialect: 'draft-07' | '2020-12' = 'draft-07', options: Options = {}): Ajv | Ajv2020 {
  const ajv = dialect === '2020-12' ? new Ajv2020({ ...OPTIONS, ...options }) : new Ajv({ ...OPTIONS, ...options });
  addFormats(ajv);
  return ajv;
}

/** Which dialect a schema declares through `$schema` (draft-07 when it says nothing). */
export function schemaDialect(schema: JsonSchema): 'draft-07' | '2020-12' {
  const id = typeof schema.$schema === 'string' ? schema.$schema : '';
  return id.includes('2020-12') ? '2020-12' : 'draft-07';
}

const sharedInstances = new Map<string, Ajv | Ajv2020>();

/**
 * Compiles a (plugin config) schema with a shared ajv instance of the right dialect, `useDefaults` on. Throws the
 * ajv error when the schema itself is invalid.
 */
export function compileSchema(schema: JsonSchema): ValidateFunction {
  const dialect = schemaDialect(schema);
  let ajv = sharedInstances.get(dialect);
  if (!ajv) {
    ajv = createAjv(dialect);
    sharedInstances.set(dialect, ajv);
  }
  // A schema with an $id can be compiled only once per instance: reuse it.
  const id = typeof schema.$id === 'string' ? schema.$id : undefined;
  if (id !== undefined) {
    const existing = ajv.getSchema(id);
    if (existing) return existing;
  }
  return ajv.compile(schema);
}

/** Splits an ajv `instancePath` (JSON pointer) into segments; array indices become numbers. */
export function pointerToPath(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^(0|[1-9]\d*)$/.test(s) ? Number(s) : s));
}

/** Formats a path as `a.b[0].c` (the root is `(root)`). */
export function formatPath(path: readonly (string | number)[]): string {
  if (path.length === 0) return '(root)';
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

const RANGE_KEYWORDS = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']);

/** The numeric range a schema allows: `from 2 to 10`, `above 0, at most 1`, `at least 1` (empty when unbounded). */
function rangeOf(schema: Record<string, unknown> | undefined): string {
  const n = (k: string): number | undefined => (typeof schema?.[k] === 'number' ? (schema[k] as number) : undefined);
  const [min, max, xmin, xmax] = [n('minimum'), n('maximum'), n('exclusiveMinimum'), n('exclusiveMaximum')];
  if (min !== undefined && max !== undefined) return `from ${min} to ${max}`;
  const parts = [
    min !== undefined ? `at least ${min}` : xmin !== undefined ? `above ${xmin}` : '',
    max !== undefined ? `at most ${max}` : xmax !== undefined ? `below ${xmax}` : '',
  ];
  return parts.filter(Boolean).join(', ');
}

/**
 * Turns ajv errors into readable issues: unknown keys (with a did-you-mean among the schema's properties),
 * missing keys, enum violations (with a did-you-mean among the allowed values), and the rest with ajv's message.
 * Errors of failed `anyOf`/`oneOf` branches that merely repeat a more specific error are dropped.
 */
export function schemaIssues(errors: readonly ErrorObject[] | null | undefined): SchemaIssue[] {
  const out: SchemaIssue[] = [];
  const seen = new Set<string>();
  // Keys an unknown key was probably meant to be (`temprature` → `temperature`): their "is required" is a follow-on.
  const meant = new Set<string>();
  for (const e of errors ?? []) {
    const base = pointerToPath(e.instancePath);
    let issue: SchemaIssue;
    if (e.keyword === 'additionalProperties') {
      const key = String((e.params as { additionalProperty: string }).additionalProperty);
      const props = Object.keys(((e.parentSchema as Record<string, unknown> | undefined)?.properties as object) ?? {});
      const target = closest(key, props);
      if (target !== undefined) meant.add(formatPath([...base, target]));
      const suggestion = target === undefined ? undefined : didYouMean(key, [target]);
      issue = {
        path: [...base, key],
        message: 'unknown key',
        hint: suggestion ?? (props.length ? `allowed keys: ${props.join(', ')}` : 'remove it'),
        unknownKey: true,
      };
    } else if (e.keyword === 'required') {
      const key = String((e.params as { missingProperty: string }).missingProperty);
      issue = { path: [...base, key], message: 'is required' };
    } else if (e.keyword === 'enum') {
      const allowed = ((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map((v) => String(v));
      const suggestion = typeof e.data === 'string' ? didYouMean(e.data, allowed) : undefined;
      issue = {
        path: base,
        message: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`,
        ...(suggestion ? { hint: suggestion } : {}),
      };
    } else if (e.keyword === 'const') {
      issue = {
        path: base,
        message: `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`,
      };
    } else if (
      RANGE_KEYWORDS.has(e.keyword) ||
      (e.keyword === 'type' &&
        typeof e.data === 'number' &&
        /number|integer/.test(String((e.params as { type: unknown }).type)))
    ) {
      // Out of range, or not a finite number (NaN, ±Infinity): ajv's message, then the whole allowed range and the value.
      const range = rangeOf(e.parentSchema as Record<string, unknown> | undefined);
      const finite = e.keyword === 'type' && !Number.isFinite(e.data) ? 'a finite number' : '';
      const allowed = [finite, range].filter(Boolean).join(', ');
      issue = {
        path: base,
        message: `${e.message ?? 'is out of range'} (${allowed ? `allowed: ${allowed}; ` : ''}got ${String(e.data)})`,
      };
    } else if (e.keyword === 'if' || e.keyword === 'anyOf' || e.keyword === 'oneOf') {
      issue = { path: base, message: e.message ?? 'is invalid' };
    } else {
      issue = { path: base, message: e.message ?? 'is invalid' };
    }
    const key = `${formatPath(issue.path)}|${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(issue);
  }
  // A failed anyOf/oneOf is reported only when nothing more specific was reported at or under the same path.
  return out.filter(
    (issue, _i, all) =>
      !(issue.message === 'is required' && meant.has(formatPath(issue.path))) &&
      !(
        issue.message.startsWith('must match') &&
        all.some(
          (o) => o !== issue && o.path.length >= issue.path.length && issue.path.every((s, j) => o.path[j] === s),
        )
      ),
  );
}
