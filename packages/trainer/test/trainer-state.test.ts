import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTrainerState, RunFolderError } from '../src/state.js';

describe('trainer-state.json of a checkpoint', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-state-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const read = async (text: string) => {
    writeFileSync(join(dir, 'trainer-state.json'), text);
    return readTrainerState(dir);
  };
  const good = {
    format: 1,
    step: 2,
    versions: { shared: 2 },
    optimizerSteps: { shared: 4 },
    rng: [1, 2, 3, 4],
    warmStarted: false,
    run: { name: 'team', seed: 3 },
  };

  it('reads a complete state', async () => {
    assert.deepEqual(await read(JSON.stringify(good)), good);
  });

  it('calls a corrupt state a checkpoint problem naming the file and the keys, with what to do', async () => {
    for (const [text, problem] of [
      ['null', '(root): must be object'],
      [
        '{"format": 1}',
        'step: is required; versions: is required; optimizerSteps: is required; rng: is required; run: is required',
      ],
      [JSON.stringify({ ...good, run: { seed: 3 }, step: -1 }), 'step: must be >= 0'],
    ] as const) {
      await assert.rejects(read(text), (error: unknown) => {
        assert.ok(error instanceof RunFolderError);
        assert.equal(error.name, 'CheckpointError', 'the CLI prints it as a user error, not an internal one');
        assert.ok(error.message.startsWith(`${join(dir, 'trainer-state.json')}: not a trainer state (`), error.message);
        assert.ok(error.message.includes(problem), error.message);
        assert.match(error.message, /delete this checkpoint folder to resume from the previous one/);
        return true;
      });
    }
    await assert.rejects(read('{"format": 1, '), /cannot read the trainer state/);
  });
});
