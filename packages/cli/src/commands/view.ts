import type { Command } from 'commander';
import { resolve } from 'node:path';
import { CliError, integer, printJson } from '../errors.js';

interface ViewOptions {
  port: number;
  host: string;
  export?: string;
  json?: boolean;
}

/** Errors of the viewer that are meant for users (a path that is not a run, a file that is not a trace, no bundle). */
const VIEWER_ERRORS = new Set(['RunFolderError', 'TraceFileError', 'AppNotBuiltError']);

/** Turns the viewer's user-facing errors and a busy port into CliErrors. */
function userError(err: unknown, opts: ViewOptions): unknown {
  if (err instanceof Error && VIEWER_ERRORS.has(err.name)) return new CliError(err.message);
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE')
    return new CliError(`--port ${opts.port}: the port is in use; pick another, or --port 0 for a free one`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
    return new CliError(`--host ${opts.host}: cannot listen on this address (${code})`);
  return err;
}

/**
 * `troupe view RUN`: serves the run viewer (overview, steps → groups, the tree of one instance, compare, credit) over a
 * run folder or one trace file, following the files while the run writes them; `--export FILE.html` writes one
 * self-contained page instead.
 */
export function register(program: Command): void {
  program
    .command('view')
    .description(
      'look at a run in the browser: metrics, steps → groups, the rollout tree of each instance, paired evaluations and credit diagnostics (live while the run writes); --export writes one self-contained HTML file',
    )
    .argument('<run>', 'run folder (troupe train --out) or a trace file (troupe eval --trace)')
    .option('--port <n>', 'port to listen on (0: a free one)', integer('--port'), 0)
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--export <file>', 'write a self-contained HTML snapshot of the run (opens from file://) and exit')
    .option('--json', 'print one JSON document (the URL, or what --export wrote)')
    .action(async (run: string, opts: ViewOptions) => {
      if (opts.port < 0 || opts.port > 65535)
        throw new CliError(`--port must be between 0 and 65535, got ${opts.port}`, 2);
      const viewer = await import('@troupe/viewer');
      if (opts.export !== undefined) {
        const out = await viewer.exportRun(run, resolve(opts.export)).catch((err: unknown) => {
          throw userError(err, opts);
        });
        if (opts.json)
          printJson({
            file: out.file,
            bytes: out.bytes,
            episodes: out.episodes,
            omitted_episodes: out.omittedEpisodes,
          });
        else
          process.stdout.write(
            `${out.file} (${(out.bytes / (1 << 20)).toFixed(1)} MB, ${out.episodes} episodes${out.omittedEpisodes ? `; ${out.omittedEpisodes} episodes past the size budget left out` : ''})\n`,
          );
        return;
      }
      const served = await viewer.startViewer(run, { port: opts.port, host: opts.host }).catch((err: unknown) => {
        throw userError(err, opts);
      });
      // the first line of stdout is the URL (scripts and tests read it)
      if (opts.json) process.stdout.write(`${JSON.stringify({ url: served.url, run: served.run.dir })}\n`);
      else process.stdout.write(`${served.url}\n  viewing ${served.run.dir} (Ctrl-C to stop)\n`);
      await new Promise<void>((done) => {
        const stop = () => {
          void served.close().finally(done);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
