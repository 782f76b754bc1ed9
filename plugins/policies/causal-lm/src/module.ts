import { ContainerModule, PolicyContribution } from '@troupe/kernel';
import { CausalLmPolicyContribution } from '@troupe/lm';

/**
 * Binds the trainable `tfjs-causal-lm` policy kind (the causal LM of @troupe/lm) to the policy contribution point; the
 * contribution is injected with the process's tokenizer cache.
 */
export const causalLmPolicyModule = new ContainerModule((bind) => {
  bind(PolicyContribution).to(CausalLmPolicyContribution).inSingletonScope();
});

export default causalLmPolicyModule;
