import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/** tsx's loader, by absolute URL so that the CLI can run from any working directory. */
const TSX = import.meta.resolve('tsx');

/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** The result of one CLI run. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the `troupe` CLI from source (the same code `npx troupe` runs once built). */
export function troupe(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; onSpawn?: (child: ChildProcess) => void } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--conditions=troupe:source', '--import', TSX, join(ROOT, 'packages/cli/src/main.ts'), ...args],
      {
        cwd: options.cwd ?? ROOT,
        env: { ...process.env, ...options.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    options.onSpawn?.(child);
  });
}

/** Parses the CLI's --json output as a `T` (say which), failing with the CLI's output when it is not JSON. */
export function json<T>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(
      `not JSON (exit ${result.code}):\nstdout: ${result.stdout.slice(0, 2000)}\nstderr: ${result.stderr.slice(0, 2000)}`,
    );
  }
}
