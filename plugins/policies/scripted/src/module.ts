import { ContainerModule, PolicyContribution } from '@troupe/kernel';
import { oraclePolicyContribution, randomPolicyContribution } from './scripted.js';

/** Binds the scripted policy kinds `oracle` and `random` to the {@link PolicyContribution} point. */
export const scriptedPoliciesModule = new ContainerModule((bind) => {
  bind<PolicyContribution>(PolicyContribution).toConstantValue(oraclePolicyContribution);
  bind<PolicyContribution>(PolicyContribution).toConstantValue(randomPolicyContribution);
});

export default scriptedPoliciesModule;
