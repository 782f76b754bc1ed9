/**
 * JSON-schema compilation for the suites (ajv; draft-07 by default, draft 2020-12 when the schema says so).
 */
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { JsonSchema } from '@troupe/kernel';

/** A compiled validator: `null` when the value is valid, else a readable error. */
export type Validator = (value: unknown) => string | null;

const draft07 = new Ajv({ strict: false, allErrors: true });
const draft2020 = new Ajv2020({ strict: false, allErrors: true });

/** Compiles a schema (throws with ajv's message when the schema itself is invalid). */
export function compileValidator(schema: JsonSchema): Validator {
  const is2020 = typeof schema.$schema === 'string' && schema.$schema.includes('2020-12');
  const ajv = is2020 ? draft2020 : draft07;
  // Compile without $id so the same schema can be compiled twice.
  const { $id: _id, ...rest } = schema;
  const validate = ajv.compile(rest);
  return (value) => (validate(value) ? null : ajv.errorsText(validate.errors, { dataVar: 'value' }));
}
