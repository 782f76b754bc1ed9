import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContainerModule } from 'inversify';
import {
  PLUGIN_API_VERSION,
  PolicyContribution,
  type PolicyContribution as PolicyContributionT,
} from '../src/contracts/index.js';
import { createRng } from '../src/util/index.js';
import {
  ContributionRegistry,
  KERNEL_ROOT,
  PluginHost,
  checkCompatibility,
  closest,
  discoverPlugins,
  kernelVersion,
  levenshtein,
  pluginCandidates,
  readPluginPackage,
  resolvePlugin,
  runningFromSource,
  validateManifest,
} from '../src/plugins/index.js';
import { pluginError } from './helpers/plugin-error.js';
import { FIXTURES, fakeProject } from './fixtures/plugins/helpers.js';

const executed = (): string[] =>
  ((globalThis as Record<string, unknown>).__troupeFixtureExecuted as string[] | undefined) ?? [];

describe('plugins: names', () => {
  it('expands shorthands like Docusaurus', () => {
    assert.deepEqual(pluginCandidates('env', 'sokoban'), ['sokoban', '@troupe/env-sokoban', 'troupe-env-sokoban']);
    assert.deepEqual(pluginCandidates('env', '@acme/sokoban'), ['@acme/sokoban', '@acme/troupe-env-sokoban']);
    assert.deepEqual(pluginCandidates('role', 'planner'), ['planner', '@troupe/role-planner', 'troupe-role-planner']);
    assert.deepEqual(pluginCandidates('reward', 'signals'), [
      'signals',
      '@troupe/reward-signals',
      'troupe-reward-signals',
    ]);
    assert.deepEqual(pluginCandidates('env', '@troupe/env-sokoban'), ['@troupe/env-sokoban']);
    assert.deepEqual(pluginCandidates('env', 'troupe-env-sokoban'), ['troupe-env-sokoban']);
    assert.deepEqual(pluginCandidates('env', '@troupe/sokoban'), ['@troupe/sokoban', '@troupe/env-sokoban']);
  });

  it('suggests close names', () => {
    assert.equal(levenshtein('kitten', 'sitting'), 3);
    assert.equal(closest('modul', ['module', 'kernel']), 'module');
    assert.equal(closest('zzz', ['module', 'kernel']), undefined);
  });
});

describe('plugins: manifests (no plugin code runs)', () => {
  it('reads the kernel version from package.json', () => {
    assert.match(kernelVersion(), /^\d+\.\d+\.\d+/);
    assert.ok(existsSync(join(KERNEL_ROOT, 'schemas', 'plugin-manifest.schema.json')));
  });

  it('reports every problem of a broken manifest with its key path, without importing the module', async () => {
    const marker = join(tmpdir(), `troupe-marker-${process.pid}-${Date.now()}`);
    process.env.TROUPE_FIXTURE_MARKER = marker;
    try {
      const host = new PluginHost({ baseDirs: [FIXTURES] });
      const error = await pluginError(() => host.load(join(FIXTURES, 'bad-manifest')));
      assert.equal(error.plugin, 'troupe-env-bad-manifest');
      assert.equal(error.file, join(FIXTURES, 'bad-manifest', 'package.json'));
      assert.match(error.message, /troupe\.apiVersion: must be integer/);
      assert.match(error.message, /troupe\.modul: unknown key \(did you mean "module"\?\)/);
      assert.doesNotMatch(error.message, /troupe\.module: is required/, 'the typo is the problem, not a missing key');
      assert.match(error.message, /troupe\.contributes\.environments\[0\]\.id: must match pattern/);
      assert.match(error.message, /troupe\.contributes\.envs: unknown key/);
      assert.ok(error.hint);
      assert.equal(existsSync(marker), false, 'the module of a broken plugin must not run');
      assert.ok(!executed().some((u) => u.includes('bad-manifest')));
    } finally {
      delete process.env.TROUPE_FIXTURE_MARKER;
      rmSync(marker, { force: true });
    }
  });

  it('rejects an incompatible kernel range before importing, saying which versions and what to do', async () => {
    const host = new PluginHost({ baseDirs: [FIXTURES] });
    const error = await pluginError(() => host.load(join(FIXTURES, 'incompatible')));
    assert.match(
      error.message,
      new RegExp(
        `requires @troupe/kernel \\^9\\.0\\.0, but @troupe/kernel ${kernelVersion().replace(/\./g, '\\.')} is running`,
      ),
    );
    assert.match(error.hint!, /upgrade @troupe\/kernel/);
    assert.ok(!executed().some((u) => u.includes('incompatible')));
  });

  it('suggests a downgrade (or a newer plugin) when the kernel is too new', async () => {
    const host = new PluginHost({ baseDirs: [FIXTURES], kernelVersion: '2.0.0' });
    const error = await pluginError(() => host.load(join(FIXTURES, 'env-grid')));
    assert.match(error.message, /requires @troupe\/kernel >=0\.1\.0 <1\.0\.0, but @troupe\/kernel 2\.0\.0 is running/);
    assert.match(error.hint!, /upgrade troupe-env-grid .* or downgrade @troupe\/kernel/);
  });

  it('checks the plugin API version', async () => {
    const host = new PluginHost({ baseDirs: [FIXTURES] });
    const error = await pluginError(() => host.load(join(FIXTURES, 'api2')));
    assert.match(
      error.message,
      new RegExp(`plugin API version 2, but @troupe/kernel .* implements version ${PLUGIN_API_VERSION}`),
    );
    assert.ok(!executed().some((u) => u.includes('api2')));
  });

  it('reports a missing config schema file before importing', async () => {
    const error = await pluginError(() => readPluginPackage(join(FIXTURES, 'missing-schema')));
    assert.equal(error.file, join(FIXTURES, 'missing-schema', 'schemas', 'ghost.json'));
    assert.match(error.message, /config schema file of environments "ghost-v0" does not exist/);
  });

  it('reports a config schema that is not a JSON schema before importing', async () => {
    const host = new PluginHost({ baseDirs: [FIXTURES] });
    const error = await pluginError(() => host.load(join(FIXTURES, 'invalid-schema')));
    assert.equal(error.file, join(FIXTURES, 'invalid-schema', 'schemas', 'odd.json'));
    assert.match(error.message, /config schema of environments "odd-v0" is not a valid JSON schema/);
    assert.ok(!executed().some((u) => u.includes('invalid-schema')));
  });

  it('validates a raw manifest and a range', async () => {
    const ok = validateManifest(
      { apiVersion: 1, kernel: '^0.1.0', module: './m.js', contributes: {} },
      'p',
      'package.json',
    );
    assert.equal(ok.module, './m.js');
    const missing = await pluginError(() => validateManifest(undefined, 'p', 'package.json'));
    assert.match(missing.message, /no `troupe` field/);
    const badRange = await pluginError(() => checkCompatibility({ ...ok, kernel: 'not a range' }, 'p', 'package.json'));
    assert.match(badRange.message, /not a valid semver range/);
  });
});

describe('plugins: resolution and discovery', () => {
  let project: string;
  before(() => {
    project = fakeProject({
      grid: 'not-a-plugin',
      'troupe-env-grid': 'env-grid',
      '@acme/troupe-role-mover': 'role-mover',
      'troupe-reward-score': 'reward-score',
      'troupe-env-bad-manifest': 'bad-manifest',
      'troupe-env-incompatible': 'incompatible',
    });
  });
  after(() => rmSync(project, { recursive: true, force: true }));

  it('skips a same-named package without a manifest and finds the prefixed one', () => {
    const found = resolvePlugin('env', 'grid', [project]);
    assert.equal(found.packageName, 'troupe-env-grid');
    assert.equal(found.dir, join(FIXTURES, 'env-grid'));
  });

  it('resolves scoped shorthands', () => {
    assert.equal(resolvePlugin('role', '@acme/mover', [project]).packageName, '@acme/troupe-role-mover');
  });

  it('lists every candidate and folder on a miss', async () => {
    const error = await pluginError(() => resolvePlugin('env', 'sokoban', [project, tmpdir()]));
    assert.match(error.message, /tried packages: sokoban, @troupe\/env-sokoban, troupe-env-sokoban/);
    assert.ok(error.message.includes(`searched from: ${project}, ${tmpdir()}`));
    assert.equal(
      error.hint,
      'fix the name, or install it: npm install @troupe/env-sokoban (official) or troupe-env-sokoban (community)',
    );
    const json = JSON.parse(JSON.stringify(error)) as Record<string, unknown>;
    assert.equal(json.plugin, 'sokoban');
    assert.equal(json.message, error.message);
  });

  it('suggests the installed contribution a mistyped name was meant to be', async () => {
    const env = await pluginError(() => resolvePlugin('env', 'gird', [project]));
    assert.match(env.hint!, /^did you mean "grid"\? or install it: /);
    const role = await pluginError(() => resolvePlugin('role', 'mover-v1x', [project]));
    assert.match(role.hint!, /^did you mean "mover"\?/);
    const scoped = await pluginError(() => resolvePlugin('env', '@acme/maze', [project]));
    assert.equal(scoped.hint, 'fix the name, or install it: npm install @acme/troupe-env-maze');
  });

  it('names the official package of a policy kind that is not named after it', async () => {
    const error = await pluginError(() => resolvePlugin('policy', 'oracle', [project]));
    assert.match(error.hint!, /npm install @troupe\/policy-scripted/);
    assert.match(
      (await pluginError(() => resolvePlugin('policy', 'tfjs-causal-lm', [project]))).hint!,
      /npm install @troupe\/policy-causal-lm/,
    );
  });

  it('discovers installed plugins from manifests only, recording where they came from and what is wrong', () => {
    const found = discoverPlugins([project]);
    const names = found.map((p) => p.name).sort();
    assert.deepEqual(names, [
      '@acme/troupe-role-mover',
      'troupe-env-bad-manifest',
      'troupe-env-grid',
      'troupe-env-incompatible',
      'troupe-reward-score',
    ]);
    const grid = found.find((p) => p.name === 'troupe-env-grid')!;
    assert.equal(grid.origin, 'community');
    assert.equal(grid.foundIn, join(project, 'node_modules'));
    assert.equal(grid.version, '1.2.3');
    assert.deepEqual(
      grid.manifest!.contributes.environments!.map((e) => e.id),
      ['grid-v0', 'grid-v1'],
    );
    assert.equal(grid.problem, undefined);
    assert.match(
      found.find((p) => p.name === 'troupe-env-bad-manifest')!.problem!.message,
      /invalid `troupe` manifest/,
    );
    assert.match(
      found.find((p) => p.name === 'troupe-env-incompatible')!.problem!.message,
      /requires @troupe\/kernel \^9\.0\.0/,
    );
    assert.ok(!executed().some((u) => u.includes('bad-manifest') || u.includes('incompatible')));
  });

  it('discovers the official workspace plugins from the kernel location', () => {
    const found = discoverPlugins([KERNEL_ROOT]);
    const official = found.filter((p) => p.origin === 'official');
    assert.ok(official.length > 0, 'expected @troupe/* plugins in the workspace');
    assert.ok(official.every((p) => p.name.startsWith('@troupe/') && p.workspace));
  });

  it('loads by shorthand through ensure() and picks the highest version of an unversioned id', async () => {
    const host = new PluginHost({ baseDirs: [project] });
    const entry = await host.ensure('environments', 'grid');
    assert.equal(entry.id, 'grid-v1');
    assert.equal(entry.plugin, 'troupe-env-grid');
    assert.equal((await host.ensure('environments', 'grid-v0')).id, 'grid-v0');
    assert.equal(host.plugins().length, 1, 'the package is loaded once');
    const concurrent = new PluginHost({ baseDirs: [project] });
    const [a, b] = await Promise.all([
      concurrent.ensure('environments', 'grid-v0'),
      concurrent.ensure('environments', 'grid'),
    ]);
    assert.deepEqual([a.id, b.id], ['grid-v0', 'grid-v1']);
    assert.equal(concurrent.plugins().length, 1, 'concurrent loads of one package share one import');
    // No package is named after mover-v0: the installed manifests say which package declares it.
    const role = await host.ensure('roles', 'mover-v0', [project]);
    assert.equal(role.id, 'mover-v0');
    assert.equal(host.registry.get('roles', 'mover').id, 'mover-v0');
  });
});

describe('plugins: loading', () => {
  it('loads an environment plugin, validates configs with defaults and reports errors with key paths', async () => {
    const host = new PluginHost({ baseDirs: [FIXTURES] });
    const loaded = await host.load(join(FIXTURES, 'env-grid'));
    assert.deepEqual(loaded.contributions, [
      { kind: 'environments', id: 'grid-v0' },
      { kind: 'environments', id: 'grid-v1' },
    ]);
    assert.equal(loaded.file, join(FIXTURES, 'env-grid', 'module.js'));
    const input = { size: 3 };
    const env = host.createEnvironment('grid', input) as unknown as { id: string; config: Record<string, unknown> };
    assert.equal(env.id, 'grid-v1');
    assert.deepEqual(env.config, { size: 3, turns: 4, reward: 'shaped' });
    assert.deepEqual(input, { size: 3 }, 'the caller’s config is not modified');
    const error = await pluginError(() =>
      host.createEnvironment('grid-v0', { size: 50, colour: 'red', reward: 'shapd' }, 'environment.config'),
    );
    assert.equal(error.plugin, 'troupe-env-grid');
    assert.match(error.message, /environment\.config\.size: must be <= 10/);
    assert.match(error.message, /environment\.config\.colour: unknown key/);
    assert.match(
      error.message,
      /environment\.config\.reward: must be one of "shaped", "sparse" \(did you mean "shaped"\?\)/,
    );
    assert.equal(error.file, join(FIXTURES, 'env-grid', 'schemas', 'grid.json'));
    const missing = await pluginError(() => host.createEnvironment('gird', {}));
    assert.match(missing.message, /no environment "gird" is registered/);
    assert.equal(missing.hint, 'did you mean "grid"?');
  });

  it('uses the contribution’s own schema when the manifest names no file', async () => {
    const host = new PluginHost({ baseDirs: [FIXTURES] });
    await host.load(join(FIXTURES, 'role-mover'));
    const role = host.createRole('mover', {}) as unknown as { config: Record<string, unknown> };
    assert.deepEqual(role.config, { verbose: false });
    const error = await pluginError(() => host.createRole('talker-v0', { verbose: 'yes' }));
    assert.match(error.message, /verbose: must be boolean/);
  });

  it('imports sourceModule when running from source, module otherwise, and validates 2020-12 schemas', async () => {
    assert.equal(runningFromSource(), true, 'mocha runs with --conditions=troupe:source');
    const host = new PluginHost({ baseDirs: [FIXTURES] });
    const loaded = await host.load(join(FIXTURES, 'reward-score'));
    assert.equal(loaded.file, join(FIXTURES, 'reward-score', 'src', 'module.js'));
    assert.equal(
      host.registry.get('rewards', 'score').description,
      'score',
      'the manifest has no description: the contribution’s is used',
    );
    const built = new PluginHost({ baseDirs: [FIXTURES], fromSource: false });
    assert.equal(
      (await built.load(join(FIXTURES, 'reward-score'))).file,
      join(FIXTURES, 'reward-score', 'lib', 'module.js'),
    );
    assert.equal(
      (built.registry.get('rewards', 'score').contribution as { description: string }).description,
      'score (built)',
    );
    const reward = host.createReward('score', { team: 'goal' }) as unknown as { config: Record<string, unknown> };
    assert.deepEqual(reward.config, { team: 'goal', scale: 1 });
    const error = await pluginError(() => host.createReward('score-v0', { scale: 'x' }, 'rewards.config'));
    assert.match(error.message, /rewards\.config\.team: is required/);
    assert.match(error.message, /rewards\.config\.scale: must be number/);
  });

  it('reports a missing module file with what to do', async () => {
    const host = new PluginHost({ baseDirs: [FIXTURES], fromSource: false });
    const error = await pluginError(() => host.load(join(FIXTURES, 'missing-module')));
    assert.equal(error.plugin, 'troupe-env-missing-module');
    assert.equal(error.file, join(FIXTURES, 'missing-module', 'dist', 'module.js'));
    assert.match(error.message, /module file does not exist/);
    assert.match(error.hint!, /npm run build/);
  });

  it('reports a module that throws on import', async () => {
    const host = new PluginHost({ baseDirs: [FIXTURES] });
    const error = await pluginError(() => host.load(join(FIXTURES, 'throws')));
    assert.match(error.message, /plugin troupe-env-throws .*threw while being imported: boom at import time/s);
    assert.equal(error.file, join(FIXTURES, 'throws', 'module.js'));
  });

  it('reports a default export that is not a ContainerModule', async () => {
    const host = new PluginHost({ baseDirs: [FIXTURES] });
    const error = await pluginError(() => host.load(join(FIXTURES, 'wrong-export')));
    assert.match(error.message, /must be an inversify ContainerModule, but it is a function \(register\)/);
    assert.match(error.hint!, /export default new ContainerModule/);
  });

  it('rejects undeclared bindings and rolls the module back', async () => {
    const host = new PluginHost({ baseDirs: [FIXTURES] });
    const error = await pluginError(() => host.load(join(FIXTURES, 'undeclared')));
    assert.match(error.message, /binds environment "sneaky-v0" that the manifest does not declare/);
    assert.deepEqual(host.registry.ids('environments'), []);
    assert.deepEqual(host.plugins(), [], 'nothing of the rejected plugin stays loaded');
  });

  it('rejects declared ids that the module does not bind', async () => {
    const host = new PluginHost({ baseDirs: [FIXTURES] });
    const error = await pluginError(() => host.load(join(FIXTURES, 'undelivered')));
    assert.match(error.message, /declares environment "promised-v0" but its module binds no environment contribution/);
  });

  it('names both packages when two plugins provide one id', async () => {
    const host = new PluginHost({ baseDirs: [FIXTURES] });
    await host.load(join(FIXTURES, 'env-grid'));
    const error = await pluginError(() => host.load(join(FIXTURES, 'duplicate')));
    assert.match(error.message, /troupe-env-duplicate.*"grid-v0" is also provided by troupe-env-grid/s);
    assert.equal(host.registry.get('environments', 'grid-v0').plugin, 'troupe-env-grid');
    assert.deepEqual(
      host.registry.ids('environments'),
      ['grid-v0', 'grid-v1'],
      'nothing of the duplicate plugin was registered',
    );
    assert.deepEqual(
      host.plugins().map((p) => p.name),
      ['troupe-env-grid'],
    );
  });

  it('loads built-in modules given to the constructor and creates policies from them', async () => {
    const fake: PolicyContributionT = {
      id: 'echo',
      description: 'echoes',
      configSchema: {
        type: 'object',
        additionalProperties: false,
        properties: { prefix: { type: 'string', default: '>' } },
      },
      create: (name, config) => ({
        name,
        kind: 'echo',
        version: 0,
        generate: async () => [
          [{ text: String(config.prefix), promptIds: [], tokenIds: [], logprobs: [], finishReason: 'stop' }],
        ],
      }),
    };
    const host = new PluginHost({
      baseDirs: [FIXTURES],
      builtins: [
        {
          name: '@troupe/kernel (test policies)',
          module: new ContainerModule((bind) => {
            bind(PolicyContribution).toConstantValue(fake);
          }),
        },
      ],
    });
    assert.equal(host.plugins()[0]!.builtin, true);
    const policy = await host.createPolicy(
      'echo',
      'shared',
      { kind: 'echo' },
      { baseDir: FIXTURES, seed: 1, rng: createRng(1) },
    );
    assert.equal(policy.name, 'shared');
    const completion = (await policy.generate([]))[0]![0]!;
    assert.equal(completion.text, '>');
    const error = await pluginError(() =>
      host.createPolicy(
        'echo',
        'shared',
        { kind: 'echo', prefx: '#' },
        { baseDir: FIXTURES, seed: 1, rng: createRng(1) },
        'policies.shared',
      ),
    );
    assert.match(error.message, /policies\.shared\.prefx: unknown key \(did you mean "prefix"\?\)/);
  });
});

describe('plugins: registry', () => {
  it('selects the highest version and rejects duplicates', async () => {
    const registry = new ContributionRegistry();
    const validate = Object.assign(() => true, { errors: null }) as never;
    for (const id of ['a-v0', 'a-v10', 'a-v2'])
      registry.add({ kind: 'environments', id, contribution: {}, plugin: 'p', description: '', validate });
    assert.equal(registry.get('environments', 'a').id, 'a-v10');
    assert.equal(registry.get('environments', 'a-v2').id, 'a-v2');
    const error = await pluginError(() =>
      registry.add({ kind: 'environments', id: 'a-v0', contribution: {}, plugin: 'q', description: '', validate }),
    );
    assert.match(error.message, /plugin q: environment id "a-v0" is already provided by p/);
  });
});
