/**
 * `troupe test`, as a library: finds a plugin package (a folder or a package name, resolved like the kernel's
 * loader), runs its own tests (`npm test`), loads it through the kernel's {@link PluginHost} (manifest, kernel range,
 * bindings) and runs the `@troupe/testing` conformance suite of every contribution it declares.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  PluginError,
  PluginHost,
  createRng,
  defaultBaseDirs,
  discoverPlugins,
  findPackageJson,
  isPathLike,
  readPluginPackage,
  resolvePlugin,
  type ContributionEntry,
  type Environment,
  type EnvironmentContribution,
  type Observation,
  type PluginKind,
  type RewardContribution,
  type RoleContribution,
  type SeatContext,
  type Transition,
} from '@troupe/kernel';
import {
  checkEnvironmentConformance,
  checkModuleConformance,
  checkRewardConformance,
  checkRoleConformance,
  playEpisode,
  type ConformanceFailure,
} from '@troupe/testing';
import { CliError } from '../errors.js';

/** Options of {@link testPlugin}. */
export interface PluginTestOptions {
  /** A plugin folder, or a package name / shorthand resolved from `cwd` (default `.`). */
  readonly plugin?: string;
  /** Base folder (default: the current directory). */
  readonly cwd?: string;
  /** Run the plugin's own `npm test` (default true). */
  readonly ownTests?: boolean;
  /** Run `npm run build` first: `true`, `false`, or `auto` (when the manifest's module file is missing). Default auto. */
  readonly build?: boolean | 'auto';
  /** Where the child processes' output goes: `inherit` (our stdout/stderr) or `stderr` (everything on stderr). */
  readonly output?: 'inherit' | 'stderr';
  /** Config given to every contribution of the plugin (validated and default-filled); default `{}`. */
  readonly config?: Record<string, unknown>;
  /** Environment (id or shorthand) that role and reward samples come from, instead of the automatic choice. */
  readonly samplesFrom?: string;
}

/** The result of one conformance suite. */
export interface SuiteResult {
  /** `environments`, `roles` or `rewards`. */
  readonly kind: string;
  /** The contribution id. */
  readonly id: string;
  /** Failures (empty when it conforms). */
  readonly failures: readonly ConformanceFailure[];
  /** Where the sample observations / transitions came from (roles and rewards). */
  readonly samples?: string;
  /** Why the suite did not run, when it did not. */
  readonly skipped?: string;
}

/** The result of {@link testPlugin}. */
export interface PluginTestResult {
  /** Package name. */
  readonly plugin: string;
  /** Package version. */
  readonly version: string;
  /** Package folder. */
  readonly dir: string;
  /** The build step, when it ran. */
  readonly build?: { readonly exitCode: number };
  /** The plugin's own tests. */
  readonly ownTests: { readonly ran: boolean; readonly exitCode?: number; readonly reason?: string };
  /** One entry per declared contribution (policies are listed as skipped: they have no suite). */
  readonly conformance: readonly SuiteResult[];
  /** True when the build, the own tests and every suite passed. */
  readonly ok: boolean;
}

const PLUGIN_KINDS: readonly PluginKind[] = ['env', 'role', 'reward', 'policy'];

/**
 * Finds the folder of a plugin: an existing folder (absolute or relative to `cwd`), else an exact package name, else
 * a shorthand of any kind (`maze` → `maze`, `@troupe/env-maze`, `troupe-env-maze`, `@troupe/role-maze`, ...). A miss
 * lists every candidate tried.
 */
export function locatePlugin(plugin: string, cwd: string, command = 'troupe test'): string {
  const asPath = resolve(cwd, plugin);
  if (isPathLike(plugin) || (existsSync(asPath) && statSync(asPath).isDirectory())) {
    if (!existsSync(join(asPath, 'package.json'))) {
      throw new CliError(`${command}: no package.json in ${asPath}; pass a plugin package folder or a package name`, 2);
    }
    return asPath;
  }
  const baseDirs = defaultBaseDirs(undefined, cwd);
  for (const base of baseDirs) {
    const file = findPackageJson(plugin, base);
    if (file) return resolve(file, '..');
  }
  const misses: string[] = [];
  for (const kind of PLUGIN_KINDS) {
    try {
      return resolvePlugin(kind, plugin, baseDirs).dir;
    } catch (error) {
      if (!(error instanceof PluginError)) throw error;
      misses.push(error.message.split('\n').find((l) => l.includes('tried packages')) ?? '');
    }
  }
  const tried = [
    ...new Set(misses.flatMap((m) => m.replace(/^\s*tried packages:\s*/, '').split(', ')).filter(Boolean)),
  ];
  throw new CliError(
    `${command}: no plugin "${plugin}" found from ${baseDirs.join(', ')}\n  tried packages: ${tried.join(', ')}\n  hint: pass the plugin's folder (${command} ./my-plugin) or install it`,
    1,
  );
}

/** Runs `npm <args>` in `dir`, resolving with its exit code. */
function npm(args: readonly string[], dir: string, output: 'inherit' | 'stderr'): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, {
      cwd: dir,
      stdio: output === 'inherit' ? 'inherit' : ['ignore', 2, 2],
      env: process.env,
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolvePromise(code ?? (signal ? 1 : 0)));
  });
}

/** A source of sample states: an environment with a default config and its seats. */
interface SampleEnvironment {
  readonly id: string;
  readonly env: Environment;
}

/** Creates an environment from a registered contribution with its default config. */
function createEnvironment(host: PluginHost, entry: ContributionEntry): SampleEnvironment {
  const { config } = host.checkConfig('environments', entry.id, {});
  return { id: entry.id, env: (entry.contribution as EnvironmentContribution).create(config) };
}

/**
 * Environments to draw role and reward samples from: the given ones (the plugin's own, or the --samples-from choice),
 * then, when `others`, the other installed environment plugins (official ones first), loaded lazily one at a time.
 */
async function* sampleEnvironments(
  host: PluginHost,
  own: readonly ContributionEntry[],
  baseDirs: readonly string[],
  others = true,
): AsyncGenerator<SampleEnvironment> {
  for (const entry of own) yield createEnvironment(host, entry);
  if (!others) return;
  const discovered = discoverPlugins(baseDirs)
    .filter((p) => !p.problem && !p.shadowed && (p.manifest?.contributes.environments?.length ?? 0) > 0)
    .sort((a, b) => (a.origin === b.origin ? a.name.localeCompare(b.name) : a.origin === 'official' ? -1 : 1));
  for (const plugin of discovered) {
    let loaded;
    try {
      loaded = await host.load(plugin.dir);
    } catch {
      continue; // a broken neighbour must not fail this plugin's test
    }
    for (const c of loaded.contributions) {
      if (c.kind !== 'environments') continue;
      try {
        yield createEnvironment(host, host.registry.get('environments', c.id));
      } catch {
        // an environment whose defaults do not build is no sample source
      }
    }
  }
}

/** Observations, actions and seats of the seats of `env` that produce one of `produces`, from a few instances. */
function roleSamples(
  source: SampleEnvironment,
  produces: readonly string[],
):
  | { observations: Observation[]; actions: unknown[]; seats: SeatContext[]; actionSchema?: Record<string, unknown> }
  | undefined {
  const { env } = source;
  const seats = env.seats
    .filter((s) => produces.includes(s.actionType))
    .map((s) => ({ seat: s.name, actionType: s.actionType }));
  if (seats.length === 0) return undefined;
  const actionType = seats[0]!.actionType;
  const sameType = seats.filter((s) => s.actionType === actionType);
  const observations: Observation[] = [];
  const actions: unknown[] = [];
  const rng = createRng(`troupe-test:${source.id}`);
  for (let i = 0; i < 3; i++) {
    const state = env.reset(env.instance('train', i, 0));
    for (const seat of sameType) {
      observations.push(env.observe(state, seat.seat));
      if (env.oracle) actions.push(env.oracle(state, seat.seat));
      actions.push(env.randomAction(state, seat.seat, rng));
    }
  }
  const schema = env.actionTypes.find((t) => t.name === actionType)?.schema;
  return { observations, actions, seats: sameType, ...(schema ? { actionSchema: schema } : {}) };
}

/** Transitions recorded from two episodes of `env` (oracle when it has one, and random). */
async function rewardSamples(source: SampleEnvironment): Promise<Transition[]> {
  const { env } = source;
  const rng = createRng(`troupe-test:${source.id}`);
  const out: Transition[] = [];
  const choosers = [
    ...(env.oracle ? [(state: unknown, seat: string) => env.oracle!(state, seat)] : []),
    (state: unknown, seat: string) => env.randomAction(state, seat, rng),
  ];
  for (const [i, choose] of choosers.entries()) {
    const rollout = await playEpisode(env, env.instance('train', i, 0), choose);
    for (const step of rollout.steps)
      out.push({ seat: step.seat, turn: step.turn, before: step.before, move: step.move, result: step.result });
  }
  return out;
}

/** Tests a plugin: build (when needed), its own tests, then the conformance suites. Never throws for a failing test. */
export async function testPlugin(options: PluginTestOptions = {}): Promise<PluginTestResult> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const output = options.output ?? 'inherit';
  const dir = locatePlugin(options.plugin ?? '.', cwd);
  const pkg = readPluginPackage(dir); // manifest, kernel range and schema files: throws PluginError
  const scripts =
    (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};

  let build: { exitCode: number } | undefined;
  const moduleMissing = !existsSync(resolve(dir, pkg.manifest.module));
  if ((options.build === true || ((options.build ?? 'auto') === 'auto' && moduleMissing)) && scripts.build) {
    build = { exitCode: await npm(['run', 'build'], dir, output) };
  }

  let ownTests: PluginTestResult['ownTests'];
  if (options.ownTests === false) ownTests = { ran: false, reason: 'skipped (--no-own-tests)' };
  else if (!scripts.test) ownTests = { ran: false, reason: 'the package has no test script' };
  else ownTests = { ran: true, exitCode: await npm(['test'], dir, output) };

  const baseDirs = [dir, ...defaultBaseDirs(undefined, cwd).filter((d) => d !== dir)];
  const host = new PluginHost({ baseDirs });
  const conformance: SuiteResult[] = [];
  let loadError: string | undefined;
  try {
    await host.load(dir);
  } catch (error) {
    if (!(error instanceof PluginError)) throw error;
    loadError = error.message;
  }
  if (loadError !== undefined) {
    // The module suite says why (and, when the manifest is stale, how package.json differs from the code).
    const failures = await checkModuleConformance(dir);
    conformance.push({
      kind: 'plugin',
      id: pkg.name,
      failures: failures.length
        ? failures
        : [{ suite: `plugin ${pkg.name}`, check: 'loads through the kernel', message: loadError }],
    });
  } else {
    conformance.push({ kind: 'plugin', id: pkg.name, failures: await checkModuleConformance(dir) });
    const entries = host.registry.list().filter((e) => e.dir === pkg.dir || e.plugin === pkg.name);
    const ownEnvs = entries.filter((e) => e.kind === 'environments');
    let chosen: ContributionEntry | undefined;
    if (options.samplesFrom !== undefined) {
      try {
        chosen = await host.ensure('environments', options.samplesFrom, baseDirs);
      } catch (error) {
        if (!(error instanceof PluginError)) throw error;
        throw new CliError(`troupe test: --samples-from ${options.samplesFrom}: ${error.message}`, 2);
      }
    }
    const sources = chosen ? [chosen] : ownEnvs;
    const given = options.config !== undefined;
    for (const entry of entries) {
      const { config, issues } = host.checkConfig(entry.kind, entry.id, options.config ?? {});
      if (issues.length > 0) {
        const problems = issues
          .map((i) => `config${i.path.length ? `.${i.path.join('.')}` : ''}: ${i.message}`)
          .join('; ');
        if (given) {
          conformance.push({
            kind: entry.kind,
            id: entry.id,
            failures: [{ suite: `${entry.kind} ${entry.id}`, check: 'the --config is valid', message: problems }],
          });
        } else {
          conformance.push({
            kind: entry.kind,
            id: entry.id,
            failures: [],
            skipped: `its default config is not valid (${problems}); pass one with --config '<json>'`,
          });
        }
        continue;
      }
      if (entry.kind === 'environments') {
        const failures = await checkEnvironmentConformance(entry.contribution as EnvironmentContribution, { config });
        conformance.push({ kind: entry.kind, id: entry.id, failures });
      } else if (entry.kind === 'roles') {
        const contribution = entry.contribution as RoleContribution;
        let done = false;
        for await (const source of sampleEnvironments(host, sources, baseDirs, chosen === undefined)) {
          const samples = roleSamples(source, contribution.produces);
          if (!samples) continue;
          const failures = await checkRoleConformance(contribution, { config, ...samples });
          conformance.push({ kind: entry.kind, id: entry.id, failures, samples: `environment ${source.id}` });
          done = true;
          break;
        }
        if (!done) {
          conformance.push({
            kind: entry.kind,
            id: entry.id,
            failures: [],
            skipped:
              `no installed environment has a seat with action type ${contribution.produces.join(' or ')} to draw samples from; ` +
              "the plugin's own tests must run roleConformance (from @troupe/testing) with sample observations and actions",
          });
        }
      } else if (entry.kind === 'rewards') {
        const contribution = entry.contribution as RewardContribution;
        let done = false;
        for await (const source of sampleEnvironments(host, sources, baseDirs, chosen === undefined)) {
          let transitions: Transition[];
          try {
            transitions = await rewardSamples(source);
          } catch {
            continue;
          }
          if (transitions.length === 0) continue;
          const failures = await checkRewardConformance(contribution, { config, transitions });
          conformance.push({ kind: entry.kind, id: entry.id, failures, samples: `environment ${source.id}` });
          done = true;
          break;
        }
        if (!done) {
          conformance.push({
            kind: entry.kind,
            id: entry.id,
            failures: [],
            skipped:
              "no installed environment to record transitions from; the plugin's own tests must run rewardConformance (from @troupe/testing)",
          });
        }
      } else {
        conformance.push({
          kind: entry.kind,
          id: entry.id,
          failures: [],
          skipped: 'policies have no conformance suite',
        });
      }
    }
  }
  const ok =
    (build === undefined || build.exitCode === 0) &&
    (!ownTests.ran || ownTests.exitCode === 0) &&
    conformance.every((s) => s.failures.length === 0);
  return {
    plugin: pkg.name,
    version: pkg.version,
    dir: pkg.dir,
    ...(build ? { build } : {}),
    ownTests,
    conformance,
    ok,
  };
}
