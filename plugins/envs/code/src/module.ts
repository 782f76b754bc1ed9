import { ContainerModule, EnvironmentContribution } from '@troupe/kernel';
import { CodeEnvironmentContribution } from './environment.js';

/** Binds `code-v0` to the environment contribution point (one instance, injected with the sandbox pool). */
export default new ContainerModule((bind) => {
  bind(EnvironmentContribution).to(CodeEnvironmentContribution).inSingletonScope();
});
