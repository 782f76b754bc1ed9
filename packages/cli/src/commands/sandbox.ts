import type { Command } from 'commander';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { badLimitValue, Language, Sandbox, SandboxLimits, SandboxOptions } from '@troupe/sandbox';
import { printJson, UsageError } from '../errors.js';

/** Languages accepted by --lang, and the file extensions that imply them. */
const LANG_NAMES: Record<string, Language> = {
  python: 'python',
  py: 'python',
  javascript: 'javascript',
  js: 'javascript',
};
const EXTENSIONS: Record<string, Language> = { '.py': 'python', '.js': 'javascript', '.cjs': 'javascript' };

interface RunOptions {
  lang?: string;
  stdin?: string;
  timeoutMs?: number;
  memoryMb?: number;
  allowUnisolated?: boolean;
  isolation?: SandboxOptions['isolation'];
  json?: boolean;
}

/** The largest program or --stdin file read (the sandbox holds both in memory). */
export const MAX_INPUT_BYTES = 64 << 20;

/**
 * Reads a file named on the command line, or throws a usage error naming the flag and the file. Only a regular file
 * of at most {@link MAX_INPUT_BYTES} is read: a FIFO, a device or /dev/zero would hang or never end. It is opened
 * non-blocking, so even opening a FIFO without a writer does not wait.
 */
async function readInput(what: string, file: string): Promise<string> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
    const st = await handle.stat();
    if (!st.isFile())
      throw new UsageError(
        `${what} ${file}: not a regular file (a FIFO, device or directory is refused; save the input to a file first)`,
      );
    if (st.size > MAX_INPUT_BYTES)
      throw new UsageError(`${what} ${file}: ${st.size} bytes, more than the ${MAX_INPUT_BYTES} bytes read`);
    const data = await handle.readFile();
    if (data.length > MAX_INPUT_BYTES)
      throw new UsageError(`${what} ${file}: more than the ${MAX_INPUT_BYTES} bytes read`);
    return data.toString('utf8');
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(`${what} ${file}: ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  } finally {
    await handle?.close();
  }
}

/** Parses a limit flag: an integer from 1 to 2^31 - 1, or a usage error naming the flag. */
function limitFlag(flag: string) {
  return (raw: string): number => {
    const n = /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
    const bad = badLimitValue(n);
    if (bad) throw new UsageError(`${flag} ${bad.replace(/got .*$/, `got "${raw}"`)}`);
    return n;
  };
}

const ISOLATIONS = ['auto', 'bwrap', 'unshare', 'none'] as const;

/** The language of `file`: --lang when given, else its extension. */
function languageOf(file: string, lang: string | undefined): Language {
  if (lang !== undefined) {
    const l = LANG_NAMES[lang.toLowerCase()];
    if (!l) throw new UsageError(`--lang must be python or js, got "${lang}"`);
    return l;
  }
  const l = EXTENSIONS[path.extname(file).toLowerCase()];
  if (!l)
    throw new UsageError(
      `cannot tell the language of ${file} from its extension (.py, .js, .cjs): pass --lang python|js`,
    );
  return l;
}

/**
 * `troupe sandbox run FILE`: runs a Python or JavaScript file in the sandbox and prints the result.
 * Exit code 0 when the verdict is 'ok', 1 otherwise, 2 on usage errors.
 */
export function register(program: Command): void {
  const sandbox = program.command('sandbox').description('run untrusted programs in the isolated sandbox');
  sandbox
    .command('run')
    .description('run a Python or JavaScript file in the sandbox and report its verdict, output and exit code')
    .argument('<file>', 'the program (.py or .js; or say --lang)')
    .option('--lang <language>', 'python or js (default: from the file extension)')
    .option('--stdin <file>', 'a file fed to the program on stdin')
    .option(
      '--timeout-ms <n>',
      'wall-time and CPU-time limit in milliseconds (1 to 2147483647)',
      limitFlag('--timeout-ms'),
    )
    .option('--memory-mb <n>', 'memory limit in MiB (1 to 2147483647)', limitFlag('--memory-mb'))
    .option(
      '--isolation <kind>',
      'auto (default: bwrap, else unshare), bwrap, unshare, or none (needs --allow-unisolated)',
      (raw: string) => {
        if (!(ISOLATIONS as readonly string[]).includes(raw))
          throw new UsageError(`--isolation must be one of ${ISOLATIONS.join(', ')}, got "${raw}"`);
        return raw as SandboxOptions['isolation'];
      },
    )
    .option(
      '--allow-unisolated',
      'run WITHOUT isolation when none is available or --isolation none is given (default: refuse)',
    )
    .option('--json', 'print the RunResult as one JSON document')
    .action(async (file: string, opts: RunOptions) => {
      const language = languageOf(file, opts.lang);
      const source = await readInput('FILE', file);
      const stdin = opts.stdin === undefined ? undefined : await readInput('--stdin', opts.stdin);
      const limits: Partial<SandboxLimits> = {};
      if (opts.timeoutMs !== undefined) {
        limits.wallMs = opts.timeoutMs;
        limits.cpuMs = opts.timeoutMs;
      }
      if (opts.memoryMb !== undefined) limits.memoryMb = opts.memoryMb;
      const box = new Sandbox({
        allowUnisolated: Boolean(opts.allowUnisolated),
        isolation: opts.isolation ?? 'auto',
        concurrency: 1,
      });
      try {
        const result = await box.run({ language, source, stdin, limits });
        if (opts.json) {
          printJson(result);
        } else {
          process.stdout.write(result.stdout);
          process.stderr.write(result.stderr);
          const how =
            result.exitCode !== null
              ? `exit ${result.exitCode}`
              : result.signal
                ? `killed by ${result.signal}`
                : 'not run';
          process.stderr.write(
            `troupe sandbox: ${result.verdict} (${how}, ${result.wallMs} ms, isolation ${result.isolation})${result.reason ? `: ${result.reason}` : ''}${result.truncated ? ' [output truncated]' : ''}\n`,
          );
        }
        process.exitCode = result.verdict === 'ok' ? 0 : 1;
      } finally {
        await box.close();
      }
    });
}
