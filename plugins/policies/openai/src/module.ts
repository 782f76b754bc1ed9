import { ContainerModule, PolicyContribution } from '@troupe/kernel';
import { OpenAiPolicyContribution } from './contribution.js';

/** Binds the `openai` policy kind to the policy contribution point. */
export default new ContainerModule((bind) => {
  bind(PolicyContribution).to(OpenAiPolicyContribution).inSingletonScope();
});
