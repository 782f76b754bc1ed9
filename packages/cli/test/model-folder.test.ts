import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOnnxModelFolder } from '../src/model-folder.js';

describe('--model DIR: a folder that is not a checkpoint', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-model-folder-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a run’s checkpoint names its policy folders to pick from', async () => {
    for (const policy of ['executor', 'proposer']) {
      mkdirSync(join(dir, policy));
      writeFileSync(join(dir, policy, 'config.json'), '{}');
    }
    mkdirSync(join(dir, 'trainer'));
    await assert.rejects(loadOnnxModelFolder(dir), (err: Error) => {
      assert.match(err.message, /no config\.json there/);
      assert.match(err.message, new RegExp(`use ${join(dir, 'executor')} or ${join(dir, 'proposer')}$`));
      assert.doesNotMatch(err.message, /trainer/);
      return true;
    });
  });

  it('an empty folder says what is expected, with no policy list', async () => {
    await assert.rejects(loadOnnxModelFolder(dir), (err: Error) => {
      assert.match(err.message, /expected a Hugging Face-layout checkpoint folder\)$/);
      return true;
    });
  });
});
