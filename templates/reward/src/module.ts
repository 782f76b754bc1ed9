/**
 * The plugin's DI module: the kernel imports this file (the manifest's `module`/`sourceModule`) and loads its default
 * export into its container. Bind your contribution to the contribution point; nothing else runs at import time.
 */
import { ContainerModule, RewardContribution } from '@troupe/kernel';
import { SignalTermsContribution } from './reward.js';

export default new ContainerModule((bind) => {
  bind(RewardContribution).toConstantValue(new SignalTermsContribution());
});
