import { ContainerModule, PolicyContribution } from '@troupe/kernel';
import { causalLmPolicyContribution } from '@troupe/lm';

/** Binds the trainable `tfjs-causal-lm` policy kind (the causal LM of @troupe/lm) to the policy contribution point. */
export const causalLmPolicyModule = new ContainerModule((bind) => {
  bind<PolicyContribution>(PolicyContribution).toConstantValue(causalLmPolicyContribution);
});

export default causalLmPolicyModule;
