import { ContainerModule, RoleContribution } from '@troupe/kernel';
import { CoderProposerRoleContribution, CoderRoleContribution } from './coder.js';

/** Binds `coder-v0` and `coder-proposer-v0` to the role contribution point (both share the process's sandbox pool). */
export default new ContainerModule((bind) => {
  bind(RoleContribution).to(CoderRoleContribution).inSingletonScope();
  bind(RoleContribution).to(CoderProposerRoleContribution).inSingletonScope();
});
