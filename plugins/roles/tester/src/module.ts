import { ContainerModule, RoleContribution } from '@troupe/kernel';
import { TesterRoleContribution } from './tester.js';

/** Binds the `tester-v0` role to the role contribution point. */
export default new ContainerModule((bind) => {
  bind(RoleContribution).to(TesterRoleContribution).inSingletonScope();
});
