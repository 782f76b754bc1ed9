import { ContainerModule, RewardContribution } from '@troupe/kernel';
import { SignalsRewardContribution } from './signals.js';

/** Binds the `signals-v0` reward to the reward contribution point. */
export default new ContainerModule((bind) => {
  bind(RewardContribution).to(SignalsRewardContribution).inSingletonScope();
});
