import assert from 'node:assert/strict';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { register } from '../src/commands/env.js';
import { commandRunner } from './helpers/run-command.js';

const GSM8K = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'plugins',
  'envs',
  'math',
  'test',
  'fixtures',
  'gsm8k.jsonl',
);
const env = commandRunner(register, 'env');

describe('troupe env sample: the overlap check', () => {
  it('lists each overlapping instance once when the train split is a few problems repeated (split: all)', async () => {
    const config = JSON.stringify({ dataset: { path: GSM8K, split: 'all' } });
    const json = await env('sample', 'math', '--count', '3', '--config', config, '--no-oracle', '--json');
    assert.equal(json.code, 1, 'the instances do overlap the train split');
    const report = JSON.parse(json.stdout) as {
      instances: { key: string }[];
      disjoint_from_train: { checkedTrain: number; distinctTrain: number; overlaps: string[] };
    };
    const keys = report.instances.map((x) => x.key);
    assert.deepEqual(report.disjoint_from_train, {
      checkedTrain: 2000,
      distinctTrain: 3,
      overlaps: [...new Set(keys)],
    });
    const text = await env('sample', 'math', '--count', '3', '--config', config, '--no-oracle');
    assert.equal(
      text.stdout.trim().split('\n').at(-1),
      'overlap with the first 2000 train instances (3 distinct): 3 of the 3 test instances',
    );
  });
});
