/** The `openai` policy kind: a model served by an OpenAI-compatible server. */
import { injectable, type Policy, type PolicyContribution } from '@troupe/kernel';
import { OPENAI_POLICY_CONFIG_SCHEMA, type OpenAiPolicyConfig } from './config.js';
import { createOpenAiPolicy } from './policy.js';

/** The `openai` policy contribution. */
@injectable()
export class OpenAiPolicyContribution implements PolicyContribution {
  /** {@inheritDoc PolicyContribution.id} */
  readonly id = 'openai';
  /** {@inheritDoc PolicyContribution.description} */
  readonly description =
    'A model served by an OpenAI-compatible server (inference only: run, eval, experiment, frozen partners)';
  /** {@inheritDoc PolicyContribution.configSchema} */
  readonly configSchema = OPENAI_POLICY_CONFIG_SCHEMA;

  /** {@inheritDoc PolicyContribution.create} */
  create(name: string, config: Record<string, unknown>): Promise<Policy> {
    return createOpenAiPolicy(name, config as unknown as OpenAiPolicyConfig);
  }
}
