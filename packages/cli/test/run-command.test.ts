import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SpecError } from '@troupe/kernel';
import { register } from '../src/commands/run.js';
import { commandRunner } from './helpers/run-command.js';

const EXAMPLE = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'examples', 'plan-path.yaml');
const run = commandRunner(register, 'run');

describe('troupe run --policy', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-run-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('blames the flag for a policy kind that is not installed, with a did-you-mean', async () => {
    const banana = await run(EXAMPLE, '--policy', 'banana', '-n', '1', '--no-progress');
    assert.equal(banana.code, 2);
    assert.match(banana.stderr, /^--policy banana: no policy plugin named "banana" is installed/);
    assert.doesNotMatch(banana.stderr, /plan-path\.yaml/);
    const typo = await run(EXAMPLE, '--policy', 'orcle', '-n', '1', '--no-progress');
    assert.match(typo.stderr, /did you mean "oracle"\?/);
  });

  it('keeps file:line:col on the spec’s own problems when the policy is overridden', async () => {
    const file = join(dir, 'bad-role.yaml');
    writeFileSync(file, readFileSync(EXAMPLE, 'utf8').replaceAll('role: planner', 'role: plannr'));
    await assert.rejects(run(file, '--policy', 'random', '-n', '1', '--no-progress'), (error: unknown) => {
      assert.ok(error instanceof SpecError, String(error));
      assert.deepEqual(
        error.issues.map((i) => [i.path, i.line > 0, i.hint?.startsWith('did you mean "planner"?')]),
        [
          ['seats.proposer.role', true, true],
          ['seats.executor.role', true, true],
        ],
      );
      return true;
    });
  });

  it('plays the team with the overriding policy', async () => {
    const result = await run(EXAMPLE, '--policy', 'oracle', '-n', '2', '--json', '--no-progress');
    assert.equal(result.code, 0);
    assert.deepEqual((JSON.parse(result.stdout) as { policies: Record<string, string> }).policies, {
      shared: 'oracle',
    });
  });
});
