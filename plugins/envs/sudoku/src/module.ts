import { ContainerModule, EnvironmentContribution, RoleContribution } from '@troupe/kernel';
import { SudokuContribution } from './environment.js';
import { SudokuFillerContribution } from './role.js';

/** Binds the `sudoku-v0` environment and the `sudoku-filler-v0` role to their contribution points. */
export default new ContainerModule((bind) => {
  bind(SudokuContribution).toConstantValue(new SudokuContribution());
  bind(EnvironmentContribution).toService(SudokuContribution);
  bind(SudokuFillerContribution).toConstantValue(new SudokuFillerContribution());
  bind(RoleContribution).toService(SudokuFillerContribution);
});
