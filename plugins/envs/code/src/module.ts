import { ContainerModule, EnvironmentContribution } from '@troupe/kernel';
import { CodeEnvironmentContribution } from './environment.js';

/** Binds the `code-v0` environment to the environment contribution point (its sandbox is created on first use). */
export default new ContainerModule((bind) => {
  bind(CodeEnvironmentContribution).toConstantValue(new CodeEnvironmentContribution());
  bind(EnvironmentContribution).toService(CodeEnvironmentContribution);
});
