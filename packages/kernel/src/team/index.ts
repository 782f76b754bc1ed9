/**
 * Team specs: the YAML file that says which environment, seats, roles, policies, rewards and algorithm a run uses.
 */
export * from './types.js';
export { SpecError, displayFile, formatIssue, type SpecIssue } from './errors.js';
export {
  EMBEDDED,
  PRESETS_DIR,
  TEAM_SCHEMA,
  isPresetName,
  listPresets,
  loadTeamSpec,
  MAX_EXTENDS_FILES,
  parseTeamSpec,
  specIssue,
  specLocation,
  teamNumberRange,
  withSpecChanges,
} from './load.js';
export { checkTeamAgainstPlugins, rewardConfigOf, validateTeamFile } from './check.js';
export { YAML_LIMITS, type Loc } from './located.js';
export * from './algorithm.js';
export * from './execution.js';
