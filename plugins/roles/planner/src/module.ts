import { ContainerModule, RoleContribution } from '@troupe/kernel';
import { PlannerContribution } from './planner.js';

/** Binds the `planner-v0` role to the role contribution point. */
export default new ContainerModule((bind) => {
  bind(RoleContribution).to(PlannerContribution).inSingletonScope();
});
