import { ContainerModule, EnvironmentContribution } from '@troupe/kernel';
import { PlanPathContribution } from './environment.js';

/** Binds the `plan-path-v0` environment to the environment contribution point. */
export default new ContainerModule((bind) => {
  bind(EnvironmentContribution).to(PlanPathContribution).inSingletonScope();
});
