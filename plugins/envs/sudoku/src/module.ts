import { ContainerModule, EnvironmentContribution, RoleContribution } from '@troupe/kernel';
import { SudokuContribution } from './environment.js';
import { SudokuFillerContribution } from './role.js';

/** Binds the `sudoku-v0` environment and the `sudoku-filler-v0` role to their contribution points. */
export default new ContainerModule((bind) => {
  bind(EnvironmentContribution).to(SudokuContribution).inSingletonScope();
  bind(RoleContribution).to(SudokuFillerContribution).inSingletonScope();
});
