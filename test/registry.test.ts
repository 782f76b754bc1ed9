/**
 * A real registry round trip, on this machine only: verdaccio on 127.0.0.1 (no uplink for `@troupe/*` and
 * `troupe-*`; every other package proxied to the npm registry), the @troupe packages and a freshly scaffolded
 * community plugin published to it, then a new project that depends only on published packages installs them and
 * plays a team with the community plugin. npm runs with a temp userconfig, globalconfig and cache (seeded from a copy
 * of the machine's cache), so nothing is written to the machine's npm setup. Verdaccio is always stopped in `after`.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { REPO, buildWorkspace, childEnv, cleanup, exec, ok, tempDir, troupe, type Run } from './scaffold-support.js';

/** A free TCP port on the loopback interface. */
function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePromise(address.port) : reject(new Error('no port'))));
    });
  });
}

/** A workspace package. */
interface WorkspacePackage {
  readonly name: string;
  readonly dir: string;
  readonly private: boolean;
  /** Its @troupe/* dependencies (dependencies and peerDependencies). */
  readonly troupeDeps: readonly string[];
}

/** The workspace packages (every package.json under packages/ and plugins/<kind>/). */
function workspacePackages(): WorkspacePackage[] {
  const dirs = [
    ...readdirSync(join(REPO, 'packages')).map((d) => join(REPO, 'packages', d)),
    ...readdirSync(join(REPO, 'plugins')).flatMap((k) => readdirSync(join(REPO, 'plugins', k)).map((d) => join(REPO, 'plugins', k, d))),
  ];
  return dirs
    .filter((d) => existsSync(join(d, 'package.json')))
    .map((dir) => {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name: string; private?: boolean; dependencies?: Record<string, string>; peerDependencies?: Record<string, string>;
      };
      const deps = Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies }).filter((n) => n.startsWith('@troupe/'));
      return { name: pkg.name, dir, private: pkg.private === true, troupeDeps: deps };
    });
}

/** The packages a user of `roots` installs: the roots and their @troupe/* dependencies, transitively. */
function closure(all: readonly WorkspacePackage[], roots: readonly string[]): WorkspacePackage[] {
  const byName = new Map(all.map((p) => [p.name, p]));
  const seen = new Set<string>();
  const visit = (name: string): void => {
    if (seen.has(name)) return;
    const pkg = byName.get(name);
    if (!pkg) throw new Error(`${name} is not a workspace package`);
    seen.add(name);
    pkg.troupeDeps.forEach(visit);
  };
  roots.forEach(visit);
  return all.filter((p) => seen.has(p.name));
}

/** What the new project installs: the CLI, the official plugins the team uses, and the plugin author's tools. */
const ROOTS = ['@troupe/cli', '@troupe/kernel', '@troupe/testing', '@troupe/role-planner', '@troupe/reward-signals'];

const VERDACCIO = join(REPO, 'node_modules', '.bin', 'verdaccio');

describe('registry round trip: publish to a local verdaccio, install into a new project, play', function () {
  let tmp: string;
  let registry: string;
  let verdaccio: ChildProcess | undefined;
  let verdaccioLog = '';
  let npmEnv: Record<string, string>;
  let toPublish: WorkspacePackage[];

  /** npm with the temp config, cache and registry. */
  const npm = (args: readonly string[], cwd: string): Promise<Run> => exec('npm', args, cwd, npmEnv);

  before(async () => {
    tmp = tempDir('registry');
    toPublish = closure(workspacePackages(), ROOTS);
    buildWorkspace(toPublish.map((p) => relative(REPO, p.dir)));

    const port = await freePort();
    registry = `http://127.0.0.1:${port}/`;
    const storage = join(tmp, 'verdaccio', 'storage');
    mkdirSync(storage, { recursive: true });
    const config = join(tmp, 'verdaccio', 'config.yaml');
    writeFileSync(config, [
      `storage: ${JSON.stringify(storage)}`,
      'auth:',
      '  htpasswd:',
      `    file: ${JSON.stringify(join(tmp, 'verdaccio', 'htpasswd'))}`,
      '    max_users: 1',
      'uplinks:',
      '  npmjs:',
      '    url: https://registry.npmjs.org/',
      '    timeout: 120s',
      '    maxage: 60m',
      'packages:',
      "  '@troupe/*':", // never proxied: only what this test publishes
      '    access: $all',
      '    publish: $authenticated',
      "  'troupe-*':",
      '    access: $all',
      '    publish: $authenticated',
      "  '**':", // third-party dependencies come from the npm registry through verdaccio
      '    access: $all',
      '    publish: $authenticated',
      '    proxy: npmjs',
      'log: { type: stdout, format: pretty, level: warn }',
      '',
    ].join('\n'));
    verdaccio = spawn(VERDACCIO, ['--config', config, '--listen', `127.0.0.1:${port}`], { cwd: tmp, env: childEnv() });
    verdaccio.stdout!.on('data', (d: Buffer) => { verdaccioLog += d.toString(); });
    verdaccio.stderr!.on('data', (d: Buffer) => { verdaccioLog += d.toString(); });
    let up = false;
    for (let i = 0; i < 120 && !up && verdaccio.exitCode === null; i++) {
      try {
        up = (await fetch(`${registry}-/ping`)).ok;
      } catch {
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    assert.ok(up, `verdaccio did not start on ${registry}:\n${verdaccioLog}`);

    // A throwaway user, created through the registry API; its token goes into a temp userconfig.
    const response = await fetch(`${registry}-/user/org.couchdb.user:troupe-test`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'troupe-test', password: `pw-${Date.now()}-${Math.random()}` }),
    });
    const { token } = (await response.json()) as { token?: string };
    assert.ok(response.ok && token, `creating the registry user failed (${response.status})`);
    const userconfig = join(tmp, 'npmrc');
    writeFileSync(userconfig, [
      `registry=${registry}`,
      `//127.0.0.1:${port}/:_authToken=${token}`,
      'onnxruntime-node-install-cuda=skip',
      'fund=false',
      'audit=false',
      'update-notifier=false',
      '',
    ].join('\n'));
    const globalconfig = join(tmp, 'global-npmrc');
    writeFileSync(globalconfig, '');
    const cache = join(tmp, 'npm-cache');
    const machineCache = join(homedir(), '.npm', '_cacache');
    if (existsSync(machineCache)) cpSync(machineCache, join(cache, '_cacache'), { recursive: true }); // a copy: never written back
    npmEnv = {
      npm_config_userconfig: userconfig,
      npm_config_globalconfig: globalconfig,
      npm_config_cache: cache,
      npm_config_registry: registry,
    };
  });

  after(async () => {
    if (verdaccio && verdaccio.exitCode === null && verdaccio.signalCode === null) {
      const exited = new Promise<void>((r) => verdaccio!.once('exit', () => r()));
      verdaccio.kill('SIGTERM');
      const timer = setTimeout(() => verdaccio!.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    cleanup(tmp);
  });

  it('verdaccio listens on the loopback interface only', () => {
    assert.match(registry, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    assert.doesNotMatch(verdaccioLog, /http address - http:\/\/(?!127\.0\.0\.1)/);
  });

  it('publishes the @troupe packages the CLI and the team need (the CLI with its templates)', async () => {
    const packs = join(tmp, 'packs');
    mkdirSync(packs);
    const packages = toPublish;
    assert.deepEqual(packages.filter((p) => p.private).map((p) => p.name), [], 'a published package is private');
    const pack = ok(await exec('npm', ['pack', '--json', '--pack-destination', packs, ...packages.flatMap((p) => ['-w', p.name])], REPO), 'npm pack');
    const list = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as { name: string; filename: string; files: { path: string }[] }[];
    const cli = list.find((p) => p.name === '@troupe/cli')!;
    assert.ok(cli.files.some((f) => f.path === 'templates/env/package.json'), '@troupe/cli must ship templates/');
    assert.ok(cli.files.some((f) => f.path === 'dist/main.js'), '@troupe/cli must ship dist/main.js');
    for (const p of list) {
      assert.ok(p.files.some((f) => f.path.startsWith('dist/')), `${p.name} ships no dist/`);
      ok(await npm(['publish', join(packs, p.filename)], tmp), `npm publish ${p.name}`);
    }
    const view = ok(await npm(['view', '@troupe/cli', 'version', '--json'], tmp), 'npm view');
    assert.equal(JSON.parse(view.stdout), JSON.parse(readFileSync(join(REPO, 'packages', 'cli', 'package.json'), 'utf8')).version);
  });

  it('builds, tests and publishes a freshly scaffolded community plugin against the published packages', async () => {
    const community = join(tmp, 'community');
    ok(troupe(['new', 'env', 'corridor', '--dir', community, '--json'], tmp), 'troupe new env');
    ok(await npm(['install', '--prefer-offline', '--ignore-scripts'], community), 'npm install (community plugin)');
    const kernel = realpathSync(join(community, 'node_modules', '@troupe', 'kernel'));
    assert.ok(kernel.startsWith(community), `@troupe/kernel must be installed from the registry, got ${kernel}`);
    ok(await npm(['run', 'build'], community), 'npm run build');
    const test = ok(await npm(['test'], community), 'npm test');
    assert.match(test.stdout, /environment corridor-v0 conformance/);
    ok(await npm(['publish'], community), 'npm publish troupe-env-corridor');
    const view = ok(await npm(['view', 'troupe-env-corridor', 'troupe', '--json'], tmp), 'npm view');
    assert.equal(JSON.parse(view.stdout).contributes.environments[0].id, 'corridor-v0');
  });

  it('installs @troupe/cli and the community plugin into a new project from the registry only', async () => {
    const project = join(tmp, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), `${JSON.stringify({
      name: 'registry-project',
      version: '1.0.0',
      private: true,
      type: 'module',
      dependencies: {
        '@troupe/cli': '^0.1.0',
        '@troupe/role-planner': '^0.1.0',
        '@troupe/reward-signals': '^0.1.0',
        'troupe-env-corridor': '^0.1.0',
      },
    }, null, 2)}\n`);
    ok(await npm(['install', '--prefer-offline', '--ignore-scripts'], project), 'npm install (project)');
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string; link?: boolean }> };
    const foreign = Object.entries(lock.packages).filter(([path, p]) => path !== '' && !p.link && !(p.resolved ?? '').startsWith(registry));
    assert.deepEqual(foreign.map(([path, p]) => `${path} ${p.resolved}`), [], 'every package must come from the local registry');
    for (const name of ['@troupe/cli', '@troupe/kernel', 'troupe-env-corridor']) {
      const dir = realpathSync(join(project, 'node_modules', name));
      assert.ok(dir.startsWith(realpathSync(project)), `${name} resolved to ${dir}`);
    }
  });

  it('loads the community plugin through the kernel plugin host of the new project', async () => {
    const project = join(tmp, 'project');
    writeFileSync(join(project, 'load.mjs'), [
      "import { PluginHost } from '@troupe/kernel';",
      'const host = new PluginHost({ baseDirs: [process.cwd()] });',
      "const entry = await host.ensure('environments', 'corridor');",
      "const env = entry.contribution.create(host.checkConfig('environments', entry.id, {}).config);",
      "const state = env.reset(env.instance('test', 0, 1));",
      "const result = env.step(state, 'walker', { kind: 'action', action: env.oracle(state, 'walker'), text: '' });",
      'console.log(JSON.stringify({ id: entry.id, plugin: entry.plugin, dir: entry.dir, success: result.success }));',
      '',
    ].join('\n'));
    const run = ok(await exec(process.execPath, ['load.mjs'], project, npmEnv), 'node load.mjs');
    const doc = JSON.parse(run.stdout);
    assert.equal(doc.id, 'corridor-v0');
    assert.equal(doc.plugin, 'troupe-env-corridor');
    assert.equal(doc.dir, realpathSync(join(project, 'node_modules', 'troupe-env-corridor')));
    assert.equal(doc.success, true);
  });

  it('the published CLI scaffolds a team with its bundled templates (npx troupe new team)', async () => {
    const project = join(tmp, 'project');
    ok(await npm(['exec', '--offline', '--', 'troupe', 'new', 'team', 'corridor-team', '--dir', 'team', '--env', 'corridor', '--seats', 'walker', '--role', 'planner', '--json'], project), 'npx troupe new team');
    const spec = readFileSync(join(project, 'team', 'team.yaml'), 'utf8');
    assert.match(spec, /^environment:\n {2}id: corridor$/m);
    assert.match(spec, /^ {2}walker:\n {4}role: planner$/m);
  });

  it('the published CLI tests the installed community plugin by its shorthand (npx troupe test corridor)', async () => {
    const project = join(tmp, 'project');
    const tested = ok(await npm(['exec', '--offline', '--', 'troupe', 'test', 'corridor', '--no-own-tests', '--json'], project), 'npx troupe test corridor');
    const report = JSON.parse(tested.stdout);
    assert.equal(report.plugin, 'troupe-env-corridor');
    assert.equal(report.ok, true, tested.stdout);
    assert.deepEqual(report.conformance.map((s: { kind: string; id: string }) => `${s.kind}:${s.id}`).sort(), ['environments:corridor-v0', 'plugin:troupe-env-corridor']);
  });

  it('the published CLI plays a team that uses the community plugin (npx troupe run --policy oracle)', async () => {
    const project = join(tmp, 'project');
    writeFileSync(join(project, 'play.yaml'), [
      'name: corridor-play',
      'extends: prompt-only',
      'environment: { id: corridor }          # troupe-env-corridor, from the local registry',
      'seatDefaults: { policy: shared }',
      'seats: { walker: { role: planner } }  # @troupe/role-planner',
      'policies: { shared: { kind: oracle } }',
      'rewards: { id: signals, config: { team: executed_reward, local: executed_reward } }',
      '',
    ].join('\n'));
    const run = ok(await npm(['exec', '--offline', '--', 'troupe', 'run', 'play.yaml', '--episodes', '5', '--policy', 'oracle', '--json'], project), 'npx troupe run');
    const doc = JSON.parse(run.stdout);
    assert.equal(doc.environment, 'corridor-v0');
    assert.equal(doc.episodes, 5);
    assert.equal(doc.success_rate, 1, run.stdout);
    assert.equal(doc.parse_failure_rate.walker, 0);
  });
});
