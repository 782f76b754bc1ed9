import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { composeTeam, createHostFor, loadTeamSpec, PluginError, validateTeamFile } from '@troupe/kernel';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

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

  it('a plugin named by its folder (id: ./plugins/maze) validates and composes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-by-path-'));
    try {
      mkdirSync(join(dir, 'plugins'));
      symlinkSync(join(ROOT, 'plugins', 'envs', 'plan-path'), join(dir, 'plugins', 'maze'), 'dir');
      const text = readFileSync(join(ROOT, 'examples', 'plan-path.yaml'), 'utf8').replace(
        /^ {2}id: plan-path\b/m,
        '  id: ./plugins/maze',
      );
      assert.match(text, /id: \.\/plugins\/maze/);
      const file = join(dir, 'team.yaml');
      writeFileSync(file, text);
      assert.deepEqual(await validateTeamFile(file, createHostFor(file)), []);
      const team = await composeTeam(loadTeamSpec(file));
      try {
        assert.equal(team.environment.id, 'plan-path-v0');
        assert.deepEqual(
          team.seats.map((s) => s.name),
          ['proposer', 'executor'],
        );
      } finally {
        await team.dispose();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
