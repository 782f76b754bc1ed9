import { ContainerModule, EnvironmentContribution } from '@troupe/kernel';
import { MathEnvironmentContribution } from './contribution.js';

/** Binds the `math-v0` environment to the environment contribution point. */
export default new ContainerModule((bind) => {
  bind(MathEnvironmentContribution).toConstantValue(new MathEnvironmentContribution());
  bind(EnvironmentContribution).toService(MathEnvironmentContribution);
});
