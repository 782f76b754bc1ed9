import assert from 'node:assert/strict';
import { createHostFor, PluginError } from '@troupe/kernel';

describe('plugin resolution across the workspace', () => {
  it('finds a contribution whose id is not its package name from the installed manifests', async () => {
    const host = createHostFor(undefined);
    const entry = await host.ensure('roles', 'coder-proposer');
    assert.equal(entry.id, 'coder-proposer-v0');
    assert.equal(entry.plugin, '@troupe/role-coder');
  });

  it('still reports every candidate tried when nothing declares the id', async () => {
    const host = createHostFor(undefined);
    await assert.rejects(host.ensure('roles', 'no-such-role'), (err: unknown) => {
      assert.ok(err instanceof PluginError);
      assert.match(err.message, /@troupe\/role-no-such-role/);
      assert.match(err.message, /troupe-role-no-such-role/);
      return true;
    });
  });
});
