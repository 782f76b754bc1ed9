/** The `math-v0` environment contribution (the factory the kernel calls with the team spec's config). */
import {
  DerivedRandomStreams,
  injectable,
  injectParameters,
  Logger,
  optionalService,
  RandomStreams,
  readConfigSchema,
  SandboxPool,
  type EnvironmentContribution,
  type JsonSchema,
} from '@troupe/kernel';
import { sharedSandboxPool } from '@troupe/sandbox';
import { MATH_ENV_ID, MathEnvironment, type MathConfig, type MathEnvironmentDeps } from './environment.js';

/** The config schema (schemas/math.config.json). */
export const MATH_CONFIG_SCHEMA: JsonSchema = readConfigSchema(new URL('../schemas/math.config.json', import.meta.url));

/** The `math-v0` contribution, injected with the process's sandbox pool, random streams and logger. */
@injectable()
export class MathEnvironmentContribution implements EnvironmentContribution {
  /** {@inheritDoc EnvironmentContribution.id} */
  readonly id = MATH_ENV_ID;
  /** {@inheritDoc EnvironmentContribution.description} */
  readonly description =
    'Math: a coder (program in the sandbox) and a solver (\\boxed{} answer) solve problems with verified answers';
  /** {@inheritDoc EnvironmentContribution.configSchema} */
  readonly configSchema = MATH_CONFIG_SCHEMA;
  /** What every environment it creates runs programs with. */
  readonly deps: MathEnvironmentDeps;

  /**
   * @param pool the process's sandbox pool (without a host: `sharedSandboxPool()`, the same one)
   * @param random the process's random streams
   * @param logger the process's logger
   */
  constructor(
    pool: SandboxPool = sharedSandboxPool(),
    random: RandomStreams = new DerivedRandomStreams(),
    logger?: Logger,
  ) {
    this.deps = { pool, random, ...(logger ? { logger: logger.child(MATH_ENV_ID) } : {}) };
  }

  /** {@inheritDoc EnvironmentContribution.create} */
  create(config: Record<string, unknown>): MathEnvironment {
    return new MathEnvironment(config as Partial<MathConfig>, this.deps);
  }
}
injectParameters(MathEnvironmentContribution, [optionalService(SandboxPool), RandomStreams, Logger]);
