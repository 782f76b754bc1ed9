/**
 * Shared helpers of the scaffolding and registry integration tests: the CLI run as a child process from source,
 * npm run with explicit flags, and temp folders outside the repository.
 */
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The CLI entry the tests run: the source entry, or the file named by TROUPE_TEST_CLI (e.g. a built dist/main.js). */
export const CLI_MAIN = process.env.TROUPE_TEST_CLI ?? join(REPO, 'packages', 'cli', 'src', 'main.ts');

/** tsx's loader, by absolute URL (so `--import` works from a cwd outside the repository). */
export const TSX = import.meta.resolve('tsx');

/** The result of a finished child process. */
export interface Run {
  /** Exit code (1 when killed by a signal). */
  readonly status: number;
  /** Everything written on stdout. */
  readonly stdout: string;
  /** Everything written on stderr. */
  readonly stderr: string;
}

/**
 * Environment of every child: the parent's, minus the `npm_*` variables an outer `npm test` sets (they would
 * override the flags given to nested npm calls), NODE_OPTIONS and any ONNXRUNTIME_* install switch (installs run as
 * a user's would); no colours, no update checks, no fund/audit requests.
 */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.toLowerCase().startsWith('npm_') && key !== 'NODE_OPTIONS' && !key.startsWith('ONNXRUNTIME_'))
      env[key] = value;
  }
  return {
    ...env,
    NO_COLOR: '1',
    FORCE_COLOR: '0',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    ...extra,
  };
}

function done(r: SpawnSyncReturns<string>): Run {
  if (r.error) throw r.error;
  return { status: r.status ?? 1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** Runs the `troupe` CLI from source (`node --conditions=troupe:source --import tsx packages/cli/src/main.ts`). */
export function troupe(args: readonly string[], cwd: string, env: Record<string, string> = {}): Run {
  return done(
    spawnSync(process.execPath, ['--conditions=troupe:source', '--import', TSX, CLI_MAIN, ...args], {
      cwd,
      encoding: 'utf8',
      env: childEnv(env),
      maxBuffer: 64 * 1024 * 1024,
    }),
  );
}

/** Runs npm synchronously. */
export function npm(args: readonly string[], cwd: string, env: Record<string, string> = {}): Run {
  return done(spawnSync('npm', args, { cwd, encoding: 'utf8', env: childEnv(env), maxBuffer: 64 * 1024 * 1024 }));
}

/** Runs a command asynchronously (long installs must not block the event loop of mocha's timeout). */
export function exec(
  command: string,
  args: readonly string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd, env: childEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ status: code ?? 1, stdout, stderr }));
  });
}

/** Throws with the command's output when it failed. */
export function ok(run: Run, what: string): Run {
  if (run.status !== 0) {
    throw new Error(
      `${what} exited with ${run.status}\n--- stdout ---\n${run.stdout.slice(-6000)}\n--- stderr ---\n${run.stderr.slice(-6000)}`,
    );
  }
  return run;
}

/** A fresh temp folder outside the repository (under the OS temp dir). */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `troupe-${prefix}-`));
  if (dir.startsWith(REPO)) throw new Error(`temp dir ${dir} is inside the repository`);
  return dir;
}

/** Removes a folder (ignoring errors), unless TROUPE_KEEP_TMP=1. */
export function cleanup(dir: string | undefined): void {
  if (dir && existsSync(dir) && process.env.TROUPE_KEEP_TMP !== '1') rmSync(dir, { recursive: true, force: true });
}

/**
 * Builds the given workspace packages (incremental `tsc -b`; fast when up to date) so that `npm pack` ships
 * current `dist/` folders.
 */
export function buildWorkspace(dirs: readonly string[]): void {
  ok(
    done(
      spawnSync(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', ...dirs], {
        cwd: REPO,
        encoding: 'utf8',
        env: childEnv(),
        maxBuffer: 64 * 1024 * 1024,
      }),
    ),
    `tsc -b ${dirs.join(' ')}`,
  );
}

/** Packs workspace packages into `dest` and returns the tarball paths by package name. */
export function packWorkspace(names: readonly string[], dest: string): Map<string, string> {
  const run = ok(
    npm(['pack', '--json', '--pack-destination', dest, ...names.flatMap((n) => ['-w', n])], REPO),
    'npm pack',
  );
  const list = JSON.parse(run.stdout.slice(run.stdout.indexOf('['))) as { name: string; filename: string }[];
  return new Map(list.map((p) => [p.name, join(dest, p.filename)]));
}

/** An installed package of a `node_modules` tree. */
export interface InstalledPackage {
  readonly name: string;
  readonly version: string;
  /** Its folder, relative to the project. */
  readonly path: string;
  /** Its install lifecycle scripts (`preinstall`, `install`, `postinstall`; a binding.gyp alone means `node-gyp rebuild`). */
  readonly installScripts: Readonly<Record<string, string>>;
}

/** The lifecycle scripts npm runs when it installs a package. */
const INSTALL_EVENTS = ['preinstall', 'install', 'postinstall'] as const;

/** Every package installed under `project`/node_modules, nested node_modules included, read from its package.json. */
export function installedPackages(project: string): InstalledPackage[] {
  const out: InstalledPackage[] = [];
  const visitModules = (modules: string): void => {
    if (!existsSync(modules)) return;
    for (const entry of readdirSync(modules, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const dir = join(modules, entry.name);
      if (entry.name.startsWith('@')) {
        for (const scoped of readdirSync(dir, { withFileTypes: true }))
          visitPackage(join(dir, scoped.name), scoped.isSymbolicLink());
      } else {
        visitPackage(dir, entry.isSymbolicLink());
      }
    }
  };
  const visitPackage = (dir: string, link: boolean): void => {
    const file = join(dir, 'package.json');
    if (link || !existsSync(file)) return;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as {
      name?: string;
      version?: string;
      scripts?: Record<string, string>;
    };
    const scripts: Record<string, string> = {};
    for (const event of INSTALL_EVENTS) if (pkg.scripts?.[event]) scripts[event] = pkg.scripts[event]!;
    if (!scripts.install && !scripts.preinstall && existsSync(join(dir, 'binding.gyp')))
      scripts.install = 'node-gyp rebuild';
    out.push({
      name: pkg.name ?? relative(project, dir),
      version: pkg.version ?? '?',
      path: relative(project, dir),
      installScripts: scripts,
    });
    visitModules(join(dir, 'node_modules'));
  };
  visitModules(join(project, 'node_modules'));
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

/** Disk usage of a folder in KiB, as `du -sk` counts it. */
export function diskUsageKiB(dir: string): number {
  const run = ok(done(spawnSync('du', ['-sk', dir], { encoding: 'utf8' })), `du -sk ${dir}`);
  return Number(run.stdout.split(/\s/)[0]);
}

/**
 * A preload module (`node --require`) for installs: inside an npm lifecycle script, every TCP connection to a host
 * other than the loopback interface is refused and recorded as one JSON line in `log` (the package, the script, the
 * host). npm itself, which talks to the local registry, is left alone. Returns the NODE_OPTIONS that load it.
 */
export function networkGuard(dir: string, log: string): string {
  const file = join(dir, 'install-network-guard.cjs');
  writeFileSync(
    file,
    [
      "'use strict';",
      "const net = require('node:net');",
      "const fs = require('node:fs');",
      `const LOG = ${JSON.stringify(log)};`,
      "const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);",
      'const connect = net.Socket.prototype.connect;',
      'net.Socket.prototype.connect = function (...args) {',
      '  const first = Array.isArray(args[0]) ? args[0][0] : args[0];',
      "  const options = typeof first === 'object' && first !== null ? first : { port: first, host: typeof args[1] === 'string' ? args[1] : undefined };",
      "  const host = options.host ?? 'localhost';",
      '  if (process.env.npm_lifecycle_event && !options.path && !LOOPBACK.has(host)) { // a path is a local socket',
      '    fs.appendFileSync(LOG, JSON.stringify({ package: process.env.npm_package_name, version: process.env.npm_package_version, script: process.env.npm_lifecycle_event, host, port: options.port }) + "\\n");',
      '    process.nextTick(() => this.destroy(new Error(`install scripts may not reach the network (${host})`)));',
      '    return this;',
      '  }',
      '  return connect.apply(this, args);',
      '};',
      '',
    ].join('\n'),
  );
  return `--require ${file}`;
}

/** What a network guard recorded: one entry per refused connection. */
export function guardedDownloads(log: string): { package: string; version: string; script: string; host: string }[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}
