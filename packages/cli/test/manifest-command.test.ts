import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { register as registerManifest } from '../src/commands/manifest.js';
import { register as registerTest } from '../src/commands/test.js';
import { commandRunner } from './helpers/run-command.js';

const manifest = commandRunner(registerManifest, 'manifest');
const test = commandRunner(registerTest, 'test');
const REPO = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

/** A role plugin whose package.json says `description` while its class says 'Echoes the state'. */
function echoPlugin(description: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-role-echo-'));
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'), 'dir');
  mkdirSync(join(dir, 'schemas'));
  writeFileSync(
    join(dir, 'schemas', 'echo.json'),
    JSON.stringify({ type: 'object', additionalProperties: false, properties: {} }),
  );
  writeFileSync(
    join(dir, 'module.js'),
    `
import { ContainerModule, RoleContribution, injectable, readConfigSchema } from '@troupe/kernel';
class EchoContribution {
  id = 'echo-v0';
  description = 'Echoes the state';
  produces = ['echo-text'];
  configSchema = readConfigSchema(new URL('./schemas/echo.json', import.meta.url));
  create() {
    return { id: this.id, produces: this.produces, prompt: (o) => [{ role: 'user', content: o.state }], parse: (text) => ({ kind: 'action', action: text, text }), render: (a) => String(a) };
  }
}
injectable()(EchoContribution);
export default new ContainerModule((bind) => { bind(RoleContribution).to(EchoContribution).inSingletonScope(); });
`,
  );
  const pkg = {
    name: 'troupe-role-echo',
    version: '0.1.0',
    type: 'module',
    troupe: {
      apiVersion: 1,
      kernel: '>=0.1.0 <1.0.0',
      module: './module.js',
      contributes: { roles: [{ id: 'echo-v0', configSchema: './schemas/echo.json', description }] },
    },
  };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  return dir;
}

describe('troupe manifest and troupe test: the manifest is the code’s', function () {
  this.timeout(120_000);
  let dir: string;
  beforeEach(() => {
    dir = echoPlugin('Says the state back');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('troupe test fails when package.json disagrees with the code, showing the difference and the fix', async () => {
    const r = await test(dir, '--no-own-tests');
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /package\.json `troupe\.contributes` does not match what the code states \(- package\.json, \+ code\)/,
    );
    assert.match(r.stdout, /- troupe\.contributes\.roles\[0\]\.description: "Says the state back"/);
    assert.match(r.stdout, /\+ troupe\.contributes\.roles\[0\]\.description: "Echoes the state"/);
    assert.ok(r.stdout.includes(`regenerate it: troupe manifest ${dir} --write`), r.stdout);
    assert.match(r.stdout, /FAILED$/m);
  });

  it('troupe manifest shows the difference, --check fails on it, --write fixes it, and troupe test then passes', async () => {
    const shown = await manifest(dir);
    assert.equal(shown.code, 0);
    assert.match(shown.stdout, /troupe-role-echo: package\.json troupe\.contributes differs from the code/);
    assert.equal((await manifest(dir, '--check')).code, 1);
    const json = await manifest(dir, '--json');
    assert.deepEqual(JSON.parse(json.stdout), {
      roles: [{ id: 'echo-v0', configSchema: './schemas/echo.json', description: 'Echoes the state' }],
    });
    assert.equal((await manifest(dir, '--write')).code, 0);
    assert.equal(
      JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).troupe.contributes.roles[0].description,
      'Echoes the state',
    );
    const again = await manifest(dir, '--check');
    assert.equal(again.code, 0);
    assert.match(again.stdout, /matches the code/);
    const tested = await test(dir, '--no-own-tests');
    assert.equal(tested.code, 0, tested.stdout + tested.stderr);
  });
});
