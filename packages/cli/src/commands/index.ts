import type { Command } from 'commander';
import { register as bench } from './bench.js';
import { register as doctor } from './doctor.js';
import { register as env } from './env.js';
import { register as evaluate } from './eval.js';
import { register as experiment } from './experiment.js';
import { register as generate } from './generate.js';
import { register as manifest } from './manifest.js';
import { register as newPlugin } from './new.js';
import { register as plugins } from './plugins.js';
import { register as run } from './run.js';
import { register as sandbox } from './sandbox.js';
import { register as serve } from './serve.js';
import { register as sft } from './sft.js';
import { register as test } from './test.js';
import { register as train } from './train.js';
import { register as validate } from './validate.js';
import { register as verify } from './verify.js';
import { register as view } from './view.js';
import { register as worker } from './worker.js';

/** Every command module of the CLI, in the order `troupe --help` lists them. */
export const COMMANDS: readonly ((program: Command) => void)[] = [
  validate,
  run,
  train,
  worker,
  sft,
  evaluate,
  experiment,
  view,
  env,
  generate,
  serve,
  sandbox,
  verify,
  plugins,
  newPlugin,
  test,
  manifest,
  bench,
  doctor,
];
