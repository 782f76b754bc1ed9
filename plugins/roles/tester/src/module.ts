import { ContainerModule, RoleContribution } from '@troupe/kernel';
import { TesterRoleContribution } from './tester.js';

/** Binds `tester-v0` to the role contribution point. */
export default new ContainerModule((bind) => {
  bind(TesterRoleContribution).toConstantValue(new TesterRoleContribution());
  bind(RoleContribution).toService(TesterRoleContribution);
});
