import { ContainerModule, EnvironmentContribution } from '@troupe/kernel';
import { SokobanContribution } from './environment.js';

/** Binds the `sokoban-v0` environment to the environment contribution point. */
export default new ContainerModule((bind) => {
  bind(EnvironmentContribution).to(SokobanContribution).inSingletonScope();
});
