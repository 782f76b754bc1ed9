import { ContainerModule, RoleContribution } from '@troupe/kernel';
import { SolverContribution } from './solver.js';

/** Binds the `solver-v0` role to the role contribution point. */
export default new ContainerModule((bind) => {
  bind(RoleContribution).to(SolverContribution).inSingletonScope();
});
