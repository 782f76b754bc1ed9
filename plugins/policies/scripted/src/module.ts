import { ContainerModule, PolicyContribution } from '@troupe/kernel';
import { OraclePolicyContribution, RandomPolicyContribution } from './scripted.js';

/** Binds the scripted policy kinds `oracle` and `random` to the {@link PolicyContribution} point. */
export const scriptedPoliciesModule = new ContainerModule((bind) => {
  bind(PolicyContribution).to(OraclePolicyContribution).inSingletonScope();
  bind(PolicyContribution).to(RandomPolicyContribution).inSingletonScope();
});

export default scriptedPoliciesModule;
