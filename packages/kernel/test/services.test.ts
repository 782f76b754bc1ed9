import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContainerModule, injectable } from 'inversify';
import { injectParameters } from '../src/di.js';
import { EnvironmentContribution, Logger, RandomStreams, SandboxPool, type Rng } from '../src/contracts/index.js';
import {
  createServices,
  DerivedRandomStreams,
  logLevelFromEnv,
  processServices,
  StreamLogger,
} from '../src/services/index.js';
import { createRng, deriveSeed } from '../src/util/index.js';
import {
  deriveManifest,
  diffManifest,
  manifestMismatchMessage,
  PluginHost,
  writeManifest,
} from '../src/plugins/index.js';
import { pluginError } from './helpers/plugin-error.js';
import { FIXTURES } from './fixtures/plugins/helpers.js';

describe('services: the kernel implementations', () => {
  it('random streams are the deriveSeed-named streams contributions used before', () => {
    const random = new DerivedRandomStreams();
    const a: Rng = random.stream(7, 'code-v0', 'train', 2);
    const b = createRng(deriveSeed(7, 'code-v0', 'train', 2));
    assert.deepEqual([a.next(), a.next(), a.int(100)], [b.next(), b.next(), b.int(100)]);
    assert.equal(random.seed(1, 'x'), deriveSeed(1, 'x'));
    assert.throws(() => random.stream(), /name a stream/);
  });

  it('the logger writes at and above its level, scoped, with fields', () => {
    const lines: string[] = [];
    const logger = new StreamLogger('info', (l) => lines.push(l));
    logger.debug('hidden');
    logger.child('code-v0').child('runner').warn('slow', { runs: 3 });
    logger.error('broken');
    assert.deepEqual(lines, ['warn [code-v0 runner] slow {"runs":3}', 'error broken']);
    assert.equal(logger.enabled('debug'), false);
    assert.throws(() => new StreamLogger('loud' as never), /level must be one of debug, info, warn, error, got "loud"/);
  });

  it('TROUPE_LOG_LEVEL picks the level; a bad value is reported and ignored', () => {
    const said: string[] = [];
    assert.equal(
      logLevelFromEnv({ TROUPE_LOG_LEVEL: 'DEBUG' }, 'warn', (l) => said.push(l)),
      'debug',
    );
    assert.equal(
      logLevelFromEnv({}, 'warn', (l) => said.push(l)),
      'warn',
    );
    assert.equal(
      logLevelFromEnv({ TROUPE_LOG_LEVEL: 'chatty' }, 'warn', (l) => said.push(l)),
      'warn',
    );
    assert.deepEqual(said, [
      'troupe: TROUPE_LOG_LEVEL="chatty" names no log level (use one of debug, info, warn, error); logging at warn',
    ]);
  });

  it('one process container; hosts descend from it', () => {
    assert.equal(processServices(), processServices());
    const host = new PluginHost({ baseDirs: [FIXTURES] });
    assert.equal(host.container.get(RandomStreams), processServices().get(RandomStreams));
  });
});

describe('services: injection into contributions', () => {
  it('injects the host’s logger and random streams into a plugin’s contribution class', async () => {
    const lines: string[] = [];
    const services = createServices();
    services.rebind(Logger).toConstantValue(new StreamLogger('debug', (l) => lines.push(l)));
    const host = new PluginHost({ baseDirs: [FIXTURES], services });
    await host.load(join(FIXTURES, 'env-dice'));
    const env = host.createEnvironment('dice', { sides: 20 });
    assert.deepEqual(lines, [
      `debug [plugins] plugin loaded {"plugin":"troupe-env-dice","version":"0.1.0","file":${JSON.stringify(join(FIXTURES, 'env-dice', 'src', 'module.ts'))},"contributions":["dice-v0"]}`,
      'info [dice-v0] created {"sides":20}',
    ]);
    const expected = 1 + createRng(deriveSeed(42, 'dice-v0', 'train', 3)).int(20);
    assert.deepEqual(
      env.instance('train', 3, 42),
      { roll: expected },
      'same seed, same instance as deriving the seed by hand',
    );
    assert.equal(
      host.registry.get('environments', 'dice-v0').contribution,
      host.registry.get('environments', 'dice').contribution,
      'one singleton',
    );
  });

  it('a service bound on one host overrides the process’s for that host only', async () => {
    const fixed: RandomStreams = {
      seed: () => 0,
      stream: () => ({ next: () => 0, int: () => 0, state: () => [0, 0, 0, 0] }),
    };
    const host = new PluginHost({ baseDirs: [FIXTURES], services: createServices() });
    host.container.bind(RandomStreams).toConstantValue(fixed);
    host.container.bind(Logger).toConstantValue(new StreamLogger('error', () => undefined));
    await host.load(join(FIXTURES, 'env-dice'));
    assert.deepEqual(host.createEnvironment('dice', { sides: 6 }).instance('train', 0, 1), { roll: 1 });
    const other = new PluginHost({ baseDirs: [FIXTURES], services: createServices() });
    other.container.bind(Logger).toConstantValue(new StreamLogger('error', () => undefined));
    await other.load(join(FIXTURES, 'env-dice'));
    assert.deepEqual(other.createEnvironment('dice', { sides: 6 }).instance('train', 0, 1), {
      roll: 1 + createRng(deriveSeed(1, 'dice-v0', 'train', 0)).int(6),
    });
  });

  it('names the plugin and the unbound service when a contribution injects one the host lacks', async () => {
    const host = new PluginHost({ baseDirs: [FIXTURES], services: createServices() });
    const error = await pluginError(() => host.load(join(FIXTURES, 'unbound-service')));
    assert.equal(error.plugin, 'troupe-env-unbound-service');
    assert.match(
      error.message,
      /creating its environment contributions failed: nothing is bound to troupe\.SandboxPool, which one of them injects/,
    );
    assert.match(error.hint!, /processServices\(\)\.bind\(SandboxPool\)/);
    assert.equal(error.file, join(FIXTURES, 'unbound-service', 'src', 'module.ts'));
    assert.deepEqual(host.plugins(), [], 'nothing of it stays loaded');
    const pool = { concurrency: 1, runner: () => assert.fail('not used'), close: async () => undefined };
    host.container.bind(SandboxPool).toConstantValue(pool);
    await host.load(join(FIXTURES, 'unbound-service'));
    assert.equal((host.registry.get('environments', 'sandboxed').contribution as { pool: unknown }).pool, pool);
  });

  it('injects a built-in module’s classes too, by the tokens injectParameters names', () => {
    const host = new PluginHost({ baseDirs: [FIXTURES], services: createServices() });
    @injectable()
    class Decorated {
      readonly id = 'decorated-v0';
      constructor(readonly logger: Logger) {}
    }
    injectParameters(Decorated, [Logger]);
    host.loadBuiltin({
      name: 'decorated',
      module: new ContainerModule((bind) => {
        bind(EnvironmentContribution).to(Decorated);
      }),
    });
    assert.equal(
      (host.registry.get('environments', 'decorated').contribution as Decorated).logger,
      host.container.get(Logger),
    );
  });

  it('names the module whose contribution cannot be constructed', async () => {
    const host = new PluginHost({ baseDirs: [FIXTURES], services: createServices() });
    @injectable()
    class Broken {
      readonly id = 'broken-v0';
      constructor() {
        throw new Error('cannot open the problem set');
      }
    }
    const error = await pluginError(() =>
      host.loadBuiltin({
        name: 'broken',
        module: new ContainerModule((bind) => {
          bind(EnvironmentContribution).to(Broken);
        }),
      }),
    );
    assert.match(
      error.message,
      /^plugin broken: creating its environment contributions failed: cannot open the problem set/,
    );
    assert.equal(error.hint, 'fix the contribution classes and their bindings in the module');
    assert.deepEqual(host.registry.ids('environments'), []);
  });
});

describe('manifest from code', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-manifest-'));
    cpSync(join(FIXTURES, 'env-dice'), dir, { recursive: true });
    symlinkSync(join(FIXTURES, '..', '..', '..', '..', '..', 'node_modules'), join(dir, 'node_modules'), 'dir');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('derives troupe.contributes from the contribution classes: id, schema file, description', async () => {
    const derived = await deriveManifest(join(FIXTURES, 'env-dice'), { services: createServices() });
    assert.deepEqual(derived.derived, {
      environments: [
        {
          id: 'dice-v0',
          configSchema: './schemas/dice.json',
          description: 'A die rolled from the seeded random streams',
        },
      ],
    });
    assert.deepEqual(diffManifest(derived), []);
  });

  it('shows where package.json disagrees with the code, and --write makes them agree', async () => {
    const file = join(dir, 'package.json');
    const pkg = JSON.parse(readFileSync(file, 'utf8'));
    pkg.troupe.contributes.environments[0].description = 'An old description';
    pkg.troupe.contributes.environments.push({ id: 'gone-v0', description: 'removed from the code' });
    writeFileSync(file, JSON.stringify(pkg, null, 2));
    const derived = await deriveManifest(dir, { services: createServices() });
    assert.deepEqual(diffManifest(derived), [
      '- troupe.contributes.environments[0].description: "An old description"',
      '+ troupe.contributes.environments[0].description: "A die rolled from the seeded random streams"',
      '- troupe.contributes.environments[1]: {"id":"gone-v0","description":"removed from the code"}',
    ]);
    assert.match(
      manifestMismatchMessage(derived),
      new RegExp(`regenerate it: troupe manifest ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} --write$`),
    );
    writeManifest(derived);
    const again = await deriveManifest(dir, { services: createServices() });
    assert.deepEqual(diffManifest(again), []);
    assert.equal(JSON.parse(readFileSync(file, 'utf8')).name, 'troupe-env-dice', 'the rest of package.json stays');
  });

  it('accepts a schema read without readConfigSchema when it is the file package.json names', async () => {
    const module = join(dir, 'src', 'module.ts');
    const plain = readFileSync(module, 'utf8').replace(
      /readConfigSchema\((new URL\([^)]*\))\)/,
      "JSON.parse(readFileSync($1, 'utf8'))",
    );
    writeFileSync(module, `import { readFileSync } from 'node:fs';\n${plain}`);
    assert.deepEqual(diffManifest(await deriveManifest(dir, { services: createServices() })), []);
  });

  it('writes a schema built in code into the package, named after its contribution', async () => {
    const module = join(dir, 'src', 'module.ts');
    writeFileSync(
      module,
      readFileSync(module, 'utf8').replace(/readConfigSchema\(new URL\([^)]*\)\)/, "{ type: 'object' }"),
    );
    const inline = await deriveManifest(dir, { services: createServices() });
    assert.deepEqual(diffManifest(inline), [
      '- troupe.contributes.environments[0].configSchema: "./schemas/dice.json"',
      '+ troupe.contributes.environments[0].configSchema: "./schemas/dice-v0.config.json"',
      '+ ./schemas/dice-v0.config.json: the config schema the code builds (missing or different)',
    ]);
    writeManifest(inline);
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'schemas', 'dice-v0.config.json'), 'utf8')), { type: 'object' });
    assert.deepEqual(diffManifest(await deriveManifest(dir, { services: createServices() })), []);
  });
});
