/**
 * The plugin's DI module: the kernel imports this file (the manifest's `module`/`sourceModule`) and loads its default
 * export into a container of its own. Bind your contribution class to the contribution point: the kernel creates it,
 * injecting the shared services its constructor names with `injectParameters`. Nothing else runs at import time.
 */
import { ContainerModule, EnvironmentContribution } from '@troupe/kernel';
import { CorridorContribution } from './environment.js';

export default new ContainerModule((bind) => {
  bind(EnvironmentContribution).to(CorridorContribution).inSingletonScope();
});
