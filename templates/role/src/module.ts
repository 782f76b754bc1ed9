/**
 * The plugin's DI module: the kernel imports this file (the manifest's `module`/`sourceModule`) and loads its default
 * export into its container. Bind your contribution to the contribution point; nothing else runs at import time.
 */
import { ContainerModule, RoleContribution } from '@troupe/kernel';
import { MovesLineContribution } from './role.js';

export default new ContainerModule((bind) => {
  bind(RoleContribution).toConstantValue(new MovesLineContribution());
});
