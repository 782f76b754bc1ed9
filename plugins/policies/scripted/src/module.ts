import { ContainerModule } from '../../di.js';
import { PolicyContribution } from '../../contracts/policy.js';
import { oraclePolicyContribution, randomPolicyContribution } from './scripted.js';

/** Binds the scripted policy kinds `oracle` and `random` to the {@link PolicyContribution} point. */
export const scriptedPoliciesModule = new ContainerModule((bind) => {
  bind<PolicyContribution>(PolicyContribution).toConstantValue(oraclePolicyContribution);
  bind<PolicyContribution>(PolicyContribution).toConstantValue(randomPolicyContribution);
});
