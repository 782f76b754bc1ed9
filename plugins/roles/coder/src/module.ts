import { ContainerModule, RoleContribution } from '@troupe/kernel';
import { CoderProposerRoleContribution, CoderRoleContribution } from './coder.js';

/** Binds `coder-v0` and `coder-proposer-v0` to the role contribution point (sandboxes are created on first use). */
export default new ContainerModule((bind) => {
  bind(CoderRoleContribution).toConstantValue(new CoderRoleContribution());
  bind(RoleContribution).toService(CoderRoleContribution);
  bind(CoderProposerRoleContribution).toConstantValue(new CoderProposerRoleContribution());
  bind(RoleContribution).toService(CoderProposerRoleContribution);
});
