/**
 * Fixture-driven parsing (Babel style): each folder in test/fixtures holds `output.txt` (a model's completion) and
 * `expected.json` (the move the planner makes of it). `UPDATE_FIXTURES=1 npx mocha` writes missing/changed expected
 * files; review the diff.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PlannerRole } from '../src/index.js';

const dir = join(import.meta.dirname, 'fixtures');
const role = new PlannerRole({});

describe('planner fixtures', () => {
  for (const name of readdirSync(dir).sort()) {
    it(name, () => {
      const text = readFileSync(join(dir, name, 'output.txt'), 'utf8');
      const move = role.parse(text, { seat: 'executor', actionType: 'moves' });
      const actual =
        move.kind === 'action' ? { kind: 'action', action: move.action } : { kind: 'invalid', error: move.error };
      const file = join(dir, name, 'expected.json');
      if (process.env.UPDATE_FIXTURES === '1' || !existsSync(file)) {
        if (process.env.CI) assert.fail(`${file} is missing; run UPDATE_FIXTURES=1 npx mocha locally and review it`);
        writeFileSync(file, `${JSON.stringify(actual, null, 2)}\n`);
      }
      assert.deepEqual(actual, JSON.parse(readFileSync(file, 'utf8')));
    });
  }
});
