import { ContainerModule, EnvironmentContribution } from '@troupe/kernel';
import { MathEnvironmentContribution } from './contribution.js';

/** Binds `math-v0` to the environment contribution point (one instance, injected with the sandbox pool). */
export default new ContainerModule((bind) => {
  bind(EnvironmentContribution).to(MathEnvironmentContribution).inSingletonScope();
});
