import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  checkEquivalence,
  MathDatasetError,
  MathEnvironment,
  gsm8kFinalAnswer,
  loadDataset,
  loadDatasetSync,
  parseJsonl,
} from '../src/index.js';
import { writeParquet } from './helpers/parquet-writer.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

describe('dataset loaders', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-math-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads GSM8K JSONL: the final answer after ####, thousands commas dropped, blank lines skipped', () => {
    const problems = loadDatasetSync({ path: 'gsm8k.jsonl', baseDir: fixtures, format: 'gsm8k' });
    assert.deepEqual(
      problems.map((p) => p.answer),
      ['72', '30000', '10'],
    );
    assert.match(problems[0]!.question, /^Natalia sold clips/);
    assert.equal(problems[0]!.source, 'gsm8k');
    assert.match(problems[2]!.origin!, /gsm8k\.jsonl:4$/);
    assert.equal(gsm8kFinalAnswer('no marker'), undefined);
  });

  it('reads AIME (numeric answers) and Polaris files, and detects formats with auto', () => {
    const aime = loadDatasetSync({ path: join(fixtures, 'aime.jsonl'), format: 'aime' });
    assert.deepEqual(
      aime.map((p) => p.answer),
      ['738', '124'],
    );
    const polaris = loadDatasetSync({ path: join(fixtures, 'polaris.jsonl') });
    assert.deepEqual(
      polaris.map((p) => [p.source, p.answer]),
      [
        ['polaris', '\\frac{5}{6}'],
        ['polaris', '2'],
      ],
    );
    const gsm = loadDatasetSync({ path: join(fixtures, 'gsm8k.jsonl') });
    assert.equal(gsm[0]!.source, 'gsm8k');
    const math = loadDatasetSync({ path: join(fixtures, 'math.jsonl') });
    assert.deepEqual(
      math.map((p) => [p.source, p.answer]),
      [['math', '4']],
    );
  });

  it('reads a list of answers as one answer, OlympiadBench style: one → it, several → all of them', () => {
    const problems = loadDatasetSync({ path: join(fixtures, 'olympiadbench.jsonl') });
    assert.deepEqual(
      problems.map((p) => [p.source, p.answer, p.unit]),
      [
        ['olympiadbench', '4', undefined],
        ['olympiadbench', '2, 3', undefined],
        ['olympiadbench', '3', 'm/s'], // a list exported as Python text: "['$3$']"
        ['polaris', '2', undefined], // a list in a problem/answer row
      ],
    );
    // Several answers: a response gives every one, in any order; one of them alone is not the answer.
    assert.equal(checkEquivalence('3, 2', problems[1]!.answer).equivalent, true);
    assert.equal(checkEquivalence('3', problems[1]!.answer).equivalent, false);
    assert.equal(checkEquivalence('4', problems[0]!.answer).equivalent, true);
  });

  it('maps other field names with fields', () => {
    const problems = loadDatasetSync({
      path: join(fixtures, 'custom.jsonl'),
      fields: { question: 'prompt', answer: 'target' },
    });
    assert.deepEqual(
      problems.map((p) => [p.question, p.answer]),
      [
        ['What is 3 + 4?', '7'],
        ['What is 10 / 4?', '5/2'],
      ],
    );
  });

  it('reads a .json file holding one JSON array of objects', () => {
    const file = join(dir, 'array.json');
    writeFileSync(
      file,
      JSON.stringify(
        [
          { problem: 'What is 2 + 2?', answer: 4 },
          { problem: 'What is 3 * 3?', answer: '9' },
        ],
        null,
        2,
      ),
    );
    assert.deepEqual(
      loadDatasetSync({ path: file }).map((p) => [
        p.answer,
        p.origin!.endsWith('array.json[1]') || p.origin!.endsWith('array.json[0]'),
      ]),
      [
        ['4', true],
        ['9', true],
      ],
    );
    writeFileSync(file, JSON.stringify([{ problem: 'no answer here' }]));
    assert.throws(() => loadDatasetSync({ path: file, format: 'polaris' }), /array\.json\[0\]: missing field "answer"/);
  });

  it('names the file, the line and the missing field in errors', () => {
    const file = join(dir, 'bad.jsonl');
    writeFileSync(file, '{"question": "ok?", "answer": "#### 1"}\n{"question": "where is the answer?"}\n');
    assert.throws(
      () => loadDatasetSync({ path: file, format: 'gsm8k' }),
      (err: unknown) => {
        assert.ok(err instanceof MathDatasetError);
        assert.match(err.message, /bad\.jsonl:2: missing field "answer"/);
        assert.match(err.message, /dataset\.fields\.answer/);
        return true;
      },
    );
    assert.throws(
      () => parseJsonl('{"question": "q", "answer": "42"}', { path: 'x', format: 'gsm8k' }, 'x.jsonl'),
      /x\.jsonl:1: field "answer" has no "#### <final answer>" line/,
    );
    assert.throws(() => parseJsonl('{"question": "q",', { path: 'x' }, 'x.jsonl'), /x\.jsonl:1: invalid JSON/);
    assert.throws(() => parseJsonl('{"text": "q"}', { path: 'x' }, 'x.jsonl'), /x\.jsonl:1: cannot tell the format/);
    assert.throws(() => loadDatasetSync({ path: join(dir, 'nope.jsonl') }), /nope\.jsonl: dataset file not found/);
    writeFileSync(join(dir, 'empty.jsonl'), '\n\n');
    assert.throws(() => loadDatasetSync({ path: join(dir, 'empty.jsonl') }), /empty\.jsonl: the dataset has no rows/);
  });

  it('reads Parquet files (written here by a minimal Parquet writer), sync and async alike', async () => {
    const file = join(dir, 'polaris.parquet');
    writeFileSync(
      file,
      writeParquet([
        { name: 'problem', type: 'string', values: ['What is $2^{10}$?', 'Compute $\\frac{1}{4} + \\frac{1}{4}$.'] },
        { name: 'answer', type: 'int64', values: [1024n, 0n] },
      ]),
    );
    const sync = loadDatasetSync({ path: file });
    assert.deepEqual(
      sync.map((p) => [p.question, p.answer]),
      [
        ['What is $2^{10}$?', '1024'],
        ['Compute $\\frac{1}{4} + \\frac{1}{4}$.', '0'],
      ],
    );
    assert.match(sync[1]!.origin!, /polaris\.parquet row 2$/);
    const async = await loadDataset({ path: file });
    assert.deepEqual(
      async.map((p) => p.answer),
      ['1024', '0'],
    );
    const noAnswer = join(dir, 'no-answer.parquet');
    writeFileSync(noAnswer, writeParquet([{ name: 'problem', type: 'string', values: ['Q?'] }]));
    assert.throws(
      () => loadDatasetSync({ path: noAnswer, format: 'aime' }),
      /no-answer\.parquet row 1: missing field "answer"/,
    );
    writeFileSync(join(dir, 'broken.parquet'), 'not parquet at all');
    assert.throws(
      () => loadDatasetSync({ path: join(dir, 'broken.parquet') }),
      /broken\.parquet: could not read the Parquet file/,
    );
  });

  it('feeds the environment: split modes hash / all / a named split; indices wrap around', () => {
    const all = new MathEnvironment({ dataset: { path: join(fixtures, 'gsm8k.jsonl'), split: 'all' } });
    const answers = new Set([0, 1, 2].map((i) => all.instance('test', i, 0).answer));
    assert.deepEqual([...answers].sort(), ['10', '30000', '72']);
    assert.deepEqual(all.instance('test', 3, 0), all.instance('test', 0, 0));
    const testOnly = new MathEnvironment({ dataset: { path: join(fixtures, 'aime.jsonl'), split: 'test' } });
    assert.ok(['738', '124'].includes(testOnly.instance('test', 0, 1).answer));
    assert.throws(
      () => testOnly.instance('train', 0, 1),
      /the train split of dataset .*aime\.jsonl \(split mode test\) is empty/,
    );
    const hashed = new MathEnvironment({
      dataset: { path: join(fixtures, 'gsm8k.jsonl') },
      splitFractions: { train: 1, validation: 0, test: 0 },
    });
    assert.equal(hashed.instance('train', 0, 0).source, 'gsm8k');
  });
});
