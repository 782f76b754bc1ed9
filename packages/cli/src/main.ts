import { Command, CommanderError } from 'commander';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { CliError } from './errors.js';
import { COMMANDS } from './commands/index.js';
import { bindCliServices } from './services.js';

const require = createRequire(import.meta.url);
const { version } = require('../package.json') as { version: string };

/** Builds the `troupe` program with every command registered. */
export function buildProgram(): Command {
  const program = new Command('troupe')
    .description('Troupe: train teams of LLM agents with multi-agent reinforcement learning (AT-GRPO)')
    .version(version, '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  for (const register of COMMANDS) register(program);
  program.commands.forEach(function override(cmd: Command): void {
    cmd.exitOverride();
    cmd.commands.forEach(override);
  });
  return program;
}

const USER_FACING = [
  'SpecError',
  'PluginError',
  'CliError',
  'UsageError',
  'ConfigError',
  'CheckpointError',
  'DatasetError',
  'FolderLockError',
  'QueueUnavailableError',
  'BackendError',
];

/**
 * Messages of errors thrown by kernel and plugins that are meant for users (they carry their own context), also when
 * the turn loop wrapped one with where it happened (a policy's PluginError inside "episode …, seat …: failed to
 * generate: …" is the user's server or config, not a bug of Troupe).
 */
export function isUserFacing(err: unknown): err is Error {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (USER_FACING.includes(e.name)) return true;
  }
  return false;
}

/** Runs the CLI with `argv` (as in process.argv) and resolves with the exit code: 0 ok, 1 failure, 2 usage. */
export async function main(argv: readonly string[]): Promise<number> {
  bindCliServices();
  const program = buildProgram();
  try {
    await program.parseAsync(argv as string[]);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help')
        return 0;
      return 2;
    }
    if (err instanceof CliError) {
      process.stderr.write(`troupe: ${err.message}\n`);
      return err.exitCode;
    }
    if (isUserFacing(err)) {
      process.stderr.write(`troupe: ${err.message}\n`);
      return 1;
    }
    const message =
      err instanceof Error ? (process.env.TROUPE_DEBUG ? (err.stack ?? err.message) : err.message) : String(err);
    process.stderr.write(
      `troupe: internal error: ${message}\n(set TROUPE_DEBUG=1 for the stack trace, and please report it)\n`,
    );
    return 1;
  }
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  main(process.argv).then((code) => {
    process.exitCode = code;
  });
}
