import type { Command } from 'commander';
import { register as doctor } from './doctor.js';
import { register as env } from './env.js';
import { register as plugins } from './plugins.js';
import { register as run } from './run.js';
import { register as validate } from './validate.js';

/** Every command module of the CLI, in the order `troupe --help` lists them. */
export const COMMANDS: readonly ((program: Command) => void)[] = [validate, run, env, plugins, doctor];
