/** The `math-v0` environment contribution (the factory the kernel calls with the team spec's config). */
import { readFileSync } from 'node:fs';
import type { EnvironmentContribution, JsonSchema } from '@troupe/kernel';
import { MATH_ENV_ID, MathEnvironment, type MathConfig, type MathEnvironmentDeps } from './environment.js';

/** The config schema (schemas/math.config.json). */
export const MATH_CONFIG_SCHEMA: JsonSchema = JSON.parse(
  readFileSync(new URL('../schemas/math.config.json', import.meta.url), 'utf8'),
) as JsonSchema;

/** The `math-v0` contribution. A host or a test can inject a sandbox shared by every environment it creates. */
export class MathEnvironmentContribution implements EnvironmentContribution {
  /** {@inheritDoc EnvironmentContribution.id} */
  readonly id = MATH_ENV_ID;
  /** {@inheritDoc EnvironmentContribution.description} */
  readonly description = 'Math: a coder (program in the sandbox) and a solver (\\boxed{} answer) solve problems with verified answers';
  /** {@inheritDoc EnvironmentContribution.configSchema} */
  readonly configSchema = MATH_CONFIG_SCHEMA;

  /** @param deps dependencies passed to every environment (e.g. a shared sandbox). */
  constructor(private readonly deps: MathEnvironmentDeps = {}) {}

  /** {@inheritDoc EnvironmentContribution.create} */
  create(config: Record<string, unknown>): MathEnvironment {
    return new MathEnvironment(config as Partial<MathConfig>, this.deps);
  }
}
