import { Command, CommanderError } from 'commander';
import { CliError } from '../../src/errors.js';

/** What one in-process command run printed and returned. */
export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * A runner for one command module, in-process: `runner(register, 'sandbox')('run', 'x.py')` runs
 * `troupe sandbox run x.py`, capturing stdout/stderr, with exit codes as the CLI gives them (2 for usage errors).
 */
export function commandRunner(
  register: (program: Command) => void,
  command: string,
): (...args: string[]) => Promise<CommandResult> {
  return async (...args: string[]): Promise<CommandResult> => {
    const program = new Command('troupe').exitOverride();
    register(program);
    program.commands.forEach(function override(cmd: Command): void {
      cmd.exitOverride();
      cmd.configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
      cmd.commands.forEach(override);
    });
    let stdout = '';
    let stderr = '';
    const out = process.stdout.write.bind(process.stdout);
    const err = process.stderr.write.bind(process.stderr);
    process.stdout.write = ((chunk: string) => ((stdout += chunk), true)) as typeof process.stdout.write;
    process.stderr.write = ((chunk: string) => ((stderr += chunk), true)) as typeof process.stderr.write;
    const saved = process.exitCode;
    process.exitCode = undefined;
    let code: number;
    try {
      await program.parseAsync(['node', 'troupe', command, ...args]);
      code = typeof process.exitCode === 'number' ? process.exitCode : 0;
    } catch (e) {
      if (e instanceof CommanderError) code = 2;
      else if (e instanceof CliError) {
        code = e.exitCode;
        stderr += e.message;
      } else throw e;
    } finally {
      process.stdout.write = out;
      process.stderr.write = err;
      process.exitCode = saved;
    }
    return { code, stdout, stderr };
  };
}
