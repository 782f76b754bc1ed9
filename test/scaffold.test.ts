/**
 * `troupe new` and `troupe test`: templates copied verbatim with package.json edited as JSON, names the kernel's
 * shorthand resolution finds, refusal of incompatible kernels, and a scaffolded environment that builds, passes its
 * tests and plays in a team OUTSIDE this repository, with the workspace packages installed from packed tarballs.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PluginError, PluginHost, pluginCandidates, readPluginPackage } from '@troupe/kernel';
import {
  LEFTOVER_MARKER,
  MARKED_FILES,
  defaultPackageName,
  findTemplatesDir,
  scaffold,
  shorthandOf,
  templateFiles,
  validateName,
} from '@troupe/cli/scaffold';
import { parse as parseYaml } from 'yaml';
import { REPO, buildWorkspace, cleanup, exec, npm, ok, packWorkspace, tempDir, troupe } from './scaffold-support.js';

/** Every file under `dir` (relative, `/`-separated), skipping node_modules. */
function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d)) {
      if (e === 'node_modules') continue;
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(dir, p).split('\\').join('/'));
    }
  };
  walk(dir);
  return out.sort();
}

describe('troupe new: templates and names', () => {
  let tmp: string;
  before(() => {
    tmp = tempDir('new');
  });
  after(() => cleanup(tmp));

  for (const kind of ['env', 'role', 'reward'] as const) {
    it(`${kind}: a complete package with a valid manifest, id NAME-v0 and no marker left`, async () => {
      const result = await scaffold({ kind, name: 'maze', cwd: tmp });
      assert.equal(result.packageName, `troupe-${kind}-maze`);
      assert.equal(result.id, 'maze-v0');
      assert.equal(result.shorthand, 'maze');
      assert.equal(result.dir, join(tmp, `troupe-${kind}-maze`));
      const files = listFiles(result.dir);
      assert.deepEqual(files, [...result.files].sort());
      for (const required of [
        'package.json',
        'tsconfig.json',
        '.gitignore',
        'README.md',
        'schemas/config.json',
        'src/module.ts',
        'test/conformance.test.ts',
      ]) {
        assert.ok(files.includes(required), `${required} missing from ${files.join(', ')}`);
      }
      assert.ok(!files.includes('_gitignore'));
      for (const f of files) assert.doesNotMatch(readFileSync(join(result.dir, f), 'utf8'), LEFTOVER_MARKER, f);

      const pkg = readPluginPackage(result.dir); // schema, API version, kernel range, schema files
      const key = { env: 'environments', role: 'roles', reward: 'rewards' }[kind];
      assert.deepEqual(
        pkg.manifest.contributes[key as 'roles']?.map((d) => d.id),
        ['maze-v0'],
      );
      const json = JSON.parse(readFileSync(join(result.dir, 'package.json'), 'utf8'));
      assert.equal(json.peerDependencies['@troupe/kernel'], json.troupe.kernel);
      for (const dev of [
        '@troupe/cli',
        '@troupe/kernel',
        '@troupe/testing',
        'typescript',
        'mocha',
        'tsx',
        '@types/mocha',
      ])
        assert.ok(json.devDependencies[dev], dev);
      assert.deepEqual(json.files, ['dist', 'src', 'schemas', 'README.md']);
      assert.equal(json.publishConfig.access, 'public');
      assert.equal(json.scripts.build, 'tsc -p tsconfig.json');
      const tsconfig = JSON.parse(readFileSync(join(result.dir, 'tsconfig.json'), 'utf8'));
      assert.equal(tsconfig.extends, undefined, 'the tsconfig must not extend the monorepo');
      assert.equal(tsconfig.references, undefined, 'the tsconfig must not reference the monorepo');
      assert.match(readFileSync(join(result.dir, 'README.md'), 'utf8'), /^# troupe-[a-z]+-maze\n/);
    });
  }

  it('copies every unmarked template file byte for byte', async () => {
    const templates = findTemplatesDir();
    for (const kind of ['env', 'role', 'reward', 'team'] as const) {
      const result = await scaffold({ kind, name: `copy-${kind}`, cwd: tmp });
      for (const file of templateFiles(join(templates, kind))) {
        if (file === 'package.json' || MARKED_FILES[kind].includes(file)) continue;
        const target = file === '_gitignore' ? '.gitignore' : file;
        assert.ok(
          readFileSync(join(templates, kind, file)).equals(readFileSync(join(result.dir, target))),
          `${kind}/${file}`,
        );
      }
    }
  });

  it('derives package names that the kernel shorthand resolution tries first for the printed shorthand', () => {
    for (const kind of ['env', 'role', 'reward'] as const) {
      for (const scope of [undefined, '@acme', '@troupe']) {
        const pkg = defaultPackageName(kind, 'maze', scope);
        const shorthand = shorthandOf(kind, pkg);
        assert.ok(
          pluginCandidates(kind, shorthand).includes(pkg),
          `${shorthand} → ${pluginCandidates(kind, shorthand).join(', ')} lacks ${pkg}`,
        );
      }
    }
    assert.equal(defaultPackageName('env', 'maze', '@acme'), '@acme/troupe-env-maze');
    assert.equal(shorthandOf('env', '@acme/troupe-env-maze'), '@acme/maze');
    assert.equal(defaultPackageName('role', 'maze', '@troupe'), '@troupe/role-maze');
    assert.equal(shorthandOf('reward', 'my-odd-name'), 'my-odd-name');
  });

  it('rejects names that are not lowercase npm-safe or repeat the prefix, saying what to type', () => {
    assert.throws(
      () => validateName('env', 'Maze_Game'),
      (e: Error) => e.name === 'UsageError' && /"maze-game"/.test(e.message),
    );
    assert.throws(
      () => validateName('env', 'troupe-env-maze'),
      (e: Error) => e.name === 'UsageError' && /pass "maze"/.test(e.message),
    );
    assert.throws(() => validateName('role', 'role-coder'), /pass "coder"/);
    assert.throws(() => validateName('env', 'maze-v2'), /version suffix; pass "maze"/);
    assert.throws(() => validateName('env', ''), /empty/);
    assert.equal(validateName('env', 'maze2'), 'maze2');
  });

  it('uses --scope and --package-name, and marks scoped packages public', async () => {
    const scoped = await scaffold({ kind: 'env', name: 'scoped', scope: 'acme', cwd: tmp });
    assert.equal(scoped.packageName, '@acme/troupe-env-scoped');
    assert.equal(scoped.shorthand, '@acme/scoped');
    assert.equal(scoped.dir, join(tmp, 'troupe-env-scoped'));
    const named = await scaffold({ kind: 'reward', name: 'named', packageName: 'my-reward', cwd: tmp });
    assert.equal(named.packageName, 'my-reward');
    assert.equal(named.shorthand, 'my-reward');
    await assert.rejects(
      scaffold({ kind: 'reward', name: 'bad', packageName: 'Bad Name', cwd: tmp }),
      /not a valid npm package name/,
    );
  });

  it('team: edits team.yaml as a YAML document (environment, seats, role, reward mix)', async () => {
    const result = await scaffold({
      kind: 'team',
      name: 'walkers',
      cwd: tmp,
      team: { env: 'corridor', seats: ['walker'], role: 'planner' },
    });
    const text = readFileSync(join(result.dir, 'team.yaml'), 'utf8');
    assert.match(text, /^# walkers: a Troupe team spec\./);
    const spec = parseYaml(text);
    assert.equal(spec.name, 'walkers');
    assert.deepEqual(spec.environment, { id: 'corridor', config: {} });
    assert.deepEqual(Object.keys(spec.seats), ['walker']);
    assert.equal(spec.seats.walker.role, 'planner');
    assert.deepEqual(Object.keys(spec.rewards.seats), ['walker']);
    const pkg = JSON.parse(readFileSync(join(result.dir, 'package.json'), 'utf8'));
    assert.equal(pkg.name, 'walkers');
    assert.equal(pkg.dependencies['@troupe/env-plan-path'], undefined, 'the replaced environment package is dropped');
    assert.ok(pkg.dependencies['@troupe/cli']);
    assert.ok(pkg.dependencies['@troupe/role-planner'], 'the official role it still names is kept');
    assert.ok(!result.nextSteps.some((step) => step.includes('troupe-role-planner')));
    assert.ok(result.nextSteps.some((step) => step.includes('troupe-env-corridor')));
    assert.ok(
      result.nextSteps.some((step) => step.includes('@troupe/env-corridor or troupe-env-corridor')),
      result.nextSteps.join('\n'),
    );
    const byPath = await scaffold({ kind: 'team', name: 'maze-walkers', cwd: tmp, team: { env: './maze' } });
    assert.equal(parseYaml(readFileSync(join(byPath.dir, 'team.yaml'), 'utf8')).environment.id, './maze');
    assert.deepEqual(
      byPath.nextSteps.filter((step) => step.includes('./maze')),
      ['create the env plugin in ./maze (relative to team.yaml): npx troupe new env maze --dir ./maze'],
    );
    const untouched = parseYaml(
      readFileSync(join((await scaffold({ kind: 'team', name: 'defaults', cwd: tmp })).dir, 'team.yaml'), 'utf8'),
    );
    assert.deepEqual(Object.keys(untouched.seats), ['proposer', 'executor']);
  });

  it('troupe new: refuses a non-empty folder without --force, prints one JSON document with --json', () => {
    const dir = join(tmp, 'busy');
    mkdirSync(dir);
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    const refused = troupe(['new', 'env', 'busy', '--dir', dir], tmp);
    assert.equal(refused.status, 2, refused.stderr);
    assert.match(refused.stderr, /is not empty; choose another --dir, or pass --force/);
    assert.ok(!existsSync(join(dir, 'package.json')));
    const forced = ok(
      troupe(['new', 'env', 'busy', '--dir', dir, '--force', '--json'], tmp),
      'troupe new --force --json',
    );
    const doc = JSON.parse(forced.stdout);
    assert.equal(doc.packageName, 'troupe-env-busy');
    assert.equal(doc.id, 'busy-v0');
    assert.equal(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'mine');
    assert.ok(existsSync(join(dir, 'package.json')));
    const kind = troupe(['new', 'policy', 'x'], tmp);
    assert.equal(kind.status, 2);
    assert.match(kind.stderr, /unknown kind "policy"; use one of: env, role, reward, team/);
  });

  it('a plugin built for kernel ^9.0.0 is refused before its module is imported, naming the versions that fit', async () => {
    const result = await scaffold({ kind: 'env', name: 'future', kernelRange: '^9.0.0', cwd: tmp });
    assert.match(result.warnings.join('\n'), /\^9\.0\.0 excludes the running @troupe\/kernel 0\.1\.0/);
    // If the loader imported the module, this would be the error it reports.
    mkdirSync(join(result.dir, 'dist'));
    writeFileSync(join(result.dir, 'dist', 'module.js'), "throw new Error('the module was imported');\n");
    const host = new PluginHost({ baseDirs: [tmp], fromSource: false });
    await assert.rejects(host.load(result.dir), (error: unknown) => {
      assert.ok(error instanceof PluginError, String(error));
      assert.equal(error.plugin, 'troupe-env-future');
      assert.match(error.message, /requires @troupe\/kernel \^9\.0\.0, but @troupe\/kernel 0\.1\.0 is running/);
      assert.match(error.message, /npm install @troupe\/kernel@"\^9\.0\.0"/);
      assert.doesNotMatch(error.message, /the module was imported/);
      assert.equal(error.file, join(result.dir, 'package.json'));
      return true;
    });
    const cli = troupe(['test', result.dir, '--no-own-tests'], tmp);
    assert.equal(cli.status, 1, cli.stdout + cli.stderr);
    assert.match(cli.stderr, /requires @troupe\/kernel \^9\.0\.0, but @troupe\/kernel 0\.1\.0 is running/);
  });
});

describe('troupe new env → build → test → play, outside the repository', function () {
  let tmp: string;
  let plugin: string;
  let packs: Map<string, string>;

  before(() => {
    tmp = tempDir('e2e');
    plugin = join(tmp, 'troupe-env-corridor');
    buildWorkspace(['packages/kernel', 'packages/game-kit', 'packages/testing']);
    mkdirSync(join(tmp, 'packs'));
    packs = packWorkspace(['@troupe/kernel', '@troupe/game-kit', '@troupe/testing'], join(tmp, 'packs'));
  });
  after(() => cleanup(tmp));

  it('troupe new env scaffolds it into a folder outside the repository', () => {
    assert.ok(!plugin.startsWith(REPO));
    const run = ok(troupe(['new', 'env', 'corridor', '--dir', plugin, '--json'], tmp), 'troupe new env');
    const doc = JSON.parse(run.stdout);
    assert.equal(doc.dir, plugin);
    assert.equal(doc.shorthand, 'corridor');
    assert.ok(doc.nextSteps.some((s: string) => s.includes('environment: { id: corridor }')));
  });

  it('installs @troupe/kernel, @troupe/game-kit and @troupe/testing from packed tarballs, the rest from the npm cache', async () => {
    // no --save-* flag: each package stays where the template lists it (the game kit a dependency, the rest dev).
    // @troupe/cli (the `troupe` of `npx troupe test .`) is not installed here: this test runs the CLI from source,
    // and the registry round trip installs the published one.
    const file = join(plugin, 'package.json');
    const pkg = JSON.parse(readFileSync(file, 'utf8'));
    delete pkg.devDependencies['@troupe/cli'];
    writeFileSync(file, `${JSON.stringify(pkg, null, 2)}\n`);
    const run = await exec(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        packs.get('@troupe/kernel')!,
        packs.get('@troupe/game-kit')!,
        packs.get('@troupe/testing')!,
      ],
      plugin,
    );
    ok(run, 'npm install');
    assert.ok(existsSync(join(plugin, 'node_modules', '@troupe', 'kernel', 'dist', 'index.js')));
    assert.ok(existsSync(join(plugin, 'node_modules', '@troupe', 'game-kit', 'dist', 'index.js')));
    assert.ok(existsSync(join(plugin, 'node_modules', 'typescript')));
  });

  it('builds with its own standalone tsconfig', () => {
    ok(npm(['run', 'build'], plugin), 'npm run build');
    for (const f of ['module.js', 'module.d.ts', 'environment.js', 'index.js'])
      assert.ok(existsSync(join(plugin, 'dist', f)), f);
  });

  it('passes its own tests, the conformance suites included', () => {
    const run = ok(npm(['test'], plugin), 'npm test');
    assert.match(run.stdout, /environment corridor-v0 conformance/);
    assert.match(run.stdout, /plugin module troupe-env-corridor conformance/);
    assert.match(run.stdout, /\d+ passing/);
    assert.doesNotMatch(run.stdout, /\d+ failing/);
  });

  it('passes troupe test (own tests + conformance through the kernel loader)', () => {
    const run = ok(troupe(['test', plugin, '--json'], tmp), 'troupe test');
    const doc = JSON.parse(run.stdout);
    assert.equal(doc.ok, true);
    assert.equal(doc.plugin, 'troupe-env-corridor');
    assert.deepEqual(doc.ownTests, { ran: true, exitCode: 0 });
    const suites = doc.conformance.map(
      (s: { kind: string; id: string; failures: unknown[] }) => `${s.kind}:${s.id}:${s.failures.length}`,
    );
    assert.deepEqual(suites.sort(), ['environments:corridor-v0:0', 'plugin:troupe-env-corridor:0']);
  });

  it('plays in a team spec with troupe run, next to official plugins', () => {
    const project = join(tmp, 'project');
    ok(
      troupe(
        [
          'new',
          'team',
          'corridor-team',
          '--dir',
          project,
          '--env',
          'corridor',
          '--seats',
          'proposer,executor',
          '--role',
          'planner',
        ],
        tmp,
      ),
      'troupe new team',
    );
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(plugin, join(project, 'node_modules', 'troupe-env-corridor'), 'dir');
    const run = ok(
      troupe(['run', 'team.yaml', '--episodes', '5', '--policy', 'oracle', '--json'], project),
      'troupe run',
    );
    const doc = JSON.parse(run.stdout);
    assert.equal(doc.environment, 'corridor-v0', run.stdout);
    assert.equal(doc.episodes, 5);
    assert.equal(
      doc.success_rate,
      1,
      'the oracle, rendered and parsed by the official planner role, solves every corridor',
    );
    assert.deepEqual(doc.parse_failure_rate, { proposer: 0, executor: 0 });
    assert.ok(doc.mean_reward.executor > 0, run.stdout);
  });
});
