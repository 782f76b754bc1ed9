export { main, buildProgram } from './main.js';
export { CliError, UsageError } from './errors.js';
