import { ContainerModule, PolicyContribution, type Policy } from '@troupe/kernel';
import { OPENAI_POLICY_CONFIG_SCHEMA, type OpenAiPolicyConfig } from './config.js';
import { createOpenAiPolicy } from './policy.js';

/** The `openai` policy kind. */
export const openAiPolicyContribution: PolicyContribution = {
  id: 'openai',
  description: 'A model served by an OpenAI-compatible server (inference only: run, eval, experiment, frozen partners)',
  configSchema: OPENAI_POLICY_CONFIG_SCHEMA,
  create(name: string, config: Record<string, unknown>): Promise<Policy> {
    return createOpenAiPolicy(name, config as unknown as OpenAiPolicyConfig);
  },
};

/** Binds the `openai` policy kind to the policy contribution point. */
export default new ContainerModule((bind) => {
  bind<PolicyContribution>(PolicyContribution).toConstantValue(openAiPolicyContribution);
});
