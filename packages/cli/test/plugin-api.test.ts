import assert from 'node:assert/strict';
import { importPluginApi } from '../src/plugin-api.js';

interface Checker {
  extractReference(reference: string): string;
  noSuchFunction(): void;
}

describe("importPluginApi (a plugin package's own functions, loaded when a command runs)", () => {
  it('finds the package from a shorthand, like the plugin host, and returns its exports', async () => {
    const api = await importPluginApi<Checker>('env', 'math', ['extractReference'], 'this test');
    assert.equal(api.extractReference('Natalia sold 48 clips.\n#### 72'), '72');
  });

  it('names the package to install when it is not installed', async () => {
    await assert.rejects(
      importPluginApi<Checker>('env', 'no-such-game', ['extractReference'], 'this test'),
      (e: Error) =>
        e.name === 'PluginError' &&
        /no env plugin named "no-such-game" is installed/.test(e.message) &&
        /npm install @troupe\/env-no-such-game/.test((e as Error & { hint?: string }).hint ?? ''),
    );
  });

  it('names the functions the installed package lacks', async () => {
    await assert.rejects(
      importPluginApi<Checker>('env', 'math', ['extractReference', 'noSuchFunction'], '`troupe verify math`'),
      (e: Error) =>
        e.name === 'PluginError' && /does not export noSuchFunction, which `troupe verify math` needs/.test(e.message),
    );
  });
});
