import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';
import {
  CodeConfigError,
  CodeEnvironment,
  DatasetError,
  decodeLcbTestCases,
  loadProblemsFile,
  resolveConfig,
} from '@troupe/env-code';
import { sharedSandbox } from './helpers.js';

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe('dataset loaders', () => {
  for (const ext of ['jsonl', 'parquet']) {
    describe(`${ext} files`, () => {
      it('APPS: stdin problems with the first solution as reference; call-based and reference-less rows skipped', () => {
        const r = loadProblemsFile(fixture(`apps.${ext}`), { splitField: 'split' });
        assert.equal(r.format, 'apps');
        assert.deepEqual(
          r.problems.map((p) => p.id),
          ['101', '104'],
        );
        assert.deepEqual(r.problems[0]!.tests, [
          { input: '1 2\n', output: '3\n' },
          { input: '3 4\n', output: '7\n' },
        ]);
        assert.equal(r.problems[0]!.reference, 'a, b = map(int, input().split())\nprint(a + b)\n');
        assert.deepEqual(r.problems[1]!.tests, [
          { input: '7', output: '14' },
          { input: '8', output: '16' },
        ]);
        assert.deepEqual(
          r.problems.map((p) => p.split),
          ['train', 'test'],
        );
        assert.equal(r.skipped.length, 2);
        assert.match(r.skipped[0]!.reason, /call-based.*fn_name f/);
        assert.match(r.skipped[0]!.origin, ext === 'jsonl' ? /apps\.jsonl:2$/ : /apps\.parquet row 2$/);
        assert.match(r.skipped[1]!.reason, /no reference solution/);
      });

      it('APPS with requireReference: false keeps problems without a solution', () => {
        const r = loadProblemsFile(fixture(`apps.${ext}`), { requireReference: false });
        assert.deepEqual(
          r.problems.map((p) => [p.id, p.reference === null]),
          [
            ['101', false],
            ['103', true],
            ['104', false],
          ],
        );
      });

      it('CodeContests: public + private + generated tests, the first PYTHON3 solution', () => {
        const r = loadProblemsFile(fixture(`codecontests.${ext}`));
        assert.equal(r.format, 'codecontests');
        assert.equal(r.problems.length, 1);
        const p = r.problems[0]!;
        assert.equal(p.id, '1000_A. Sum');
        assert.deepEqual(
          p.tests.map((t) => t.input),
          ['1 2\n', '5 5\n', '0 0\n', '-1 1\n'],
        );
        assert.equal(p.reference, 'a, b = map(int, input().split())\nprint(a + b)\n');
        assert.match(r.skipped[0]!.reason, /no reference/); // the Python 2-only problem
      });

      it('LiveCodeBench: JSON and compressed (base64 zlib pickle) test cases; functional problems skipped', () => {
        const r = loadProblemsFile(fixture(`livecodebench.${ext}`));
        assert.equal(r.format, 'livecodebench');
        assert.deepEqual(
          r.problems.map((p) => p.id),
          ['abc001_a'],
        );
        assert.deepEqual(r.problems[0]!.tests, [
          { input: '3\n', output: '6\n' },
          { input: '100\n', output: '200\n' },
          { input: '0\n', output: '0\n' },
        ]);
        assert.match(r.skipped.map((s) => s.reason).join('|'), /functional/);
        const all = loadProblemsFile(fixture(`livecodebench.${ext}`), { requireReference: false });
        assert.deepEqual(
          all.problems.map((p) => [p.id, p.reference]),
          [
            ['abc001_a', 'print(2 * int(input()))\n'],
            ['abc002_a', null],
          ],
        );
      });
    });
  }

  it('Troupe format: id, tests, reference, tolerance, split', () => {
    const r = loadProblemsFile(fixture('troupe.jsonl'));
    assert.equal(r.format, 'troupe');
    assert.deepEqual(
      r.problems.map((p) => [p.id, p.tolerance, p.split]),
      [
        ['t-sum', null, 'train'],
        ['t-half', 1e-6, 'test'],
      ],
    );
  });

  it('errors name the file, the line and the field', () => {
    assert.throws(
      () => loadProblemsFile(fixture('bad-apps.jsonl')),
      (e: Error) =>
        e instanceof DatasetError && /bad-apps\.jsonl:2: field "input_output" is not valid JSON/.test(e.message),
    );
    assert.throws(
      () => loadProblemsFile(fixture('bad-json.jsonl')),
      (e: Error) => e instanceof DatasetError && /bad-json\.jsonl:3: not valid JSON/.test(e.message),
    );
    assert.throws(
      () => loadProblemsFile(fixture('bad-field.jsonl')),
      (e: Error) =>
        /bad-field\.jsonl:2: field "tests\[0\]" must be an object with string "input" and "output"/.test(e.message),
    );
    assert.throws(() => loadProblemsFile(fixture('nope.jsonl')), /nope\.jsonl: dataset file not found/);
    assert.throws(
      () => loadProblemsFile(fixture('splits.json')),
      /expected a JSON object|cannot tell the dataset format/,
    );
    assert.throws(
      () => loadProblemsFile(fixture('apps.jsonl'), { splitField: 'difficulty' }),
      /apps\.jsonl:1: field "difficulty" must be one of train/,
    );
    const dir = mkdtempSync(join(tmpdir(), 'troupe-code-'));
    writeFileSync(
      join(dir, 'x.jsonl'),
      '{"name": "n", "description": "d", "public_tests": {"input": ["1"], "output": []}}\n',
    );
    assert.throws(
      () => loadProblemsFile(join(dir, 'x.jsonl')),
      /x\.jsonl:1: field "public_tests" has 1 inputs but 0 outputs/,
    );
    writeFileSync(
      join(dir, 'y.jsonl'),
      '{"question": "q", "input_output": "{\\"inputs\\": [], \\"outputs\\": []}", "solutions": "[]"}\n',
    );
    assert.throws(
      () => loadProblemsFile(join(dir, 'y.jsonl')),
      /y\.jsonl: no usable problem in 1 rows \(format apps\): 1 × no tests/,
    );
    writeFileSync(join(dir, 'z.parquet'), 'not parquet');
    assert.throws(() => loadProblemsFile(join(dir, 'z.parquet')), /z\.parquet: cannot read Parquet file/);
  });

  it('decodes LiveCodeBench test cases and rejects undecodable text', () => {
    assert.deepEqual(decodeLcbTestCases('[{"input": "1", "output": "2"}]', 'here'), [{ input: '1', output: '2' }]);
    // pickle protocol 4 of a short str: PROTO 4, FRAME, SHORT_BINUNICODE, MEMOIZE, STOP
    const json = '[{"input":"x","output":"y","testtype":"stdin"}]';
    const body = Buffer.concat([Buffer.from([0x8c, json.length]), Buffer.from(json), Buffer.from([0x94, 0x2e])]);
    const frame = Buffer.alloc(9);
    frame[0] = 0x95;
    frame.writeBigUInt64LE(BigInt(body.length), 1);
    const pickled = Buffer.concat([Buffer.from([0x80, 0x04]), frame, body]);
    assert.deepEqual(decodeLcbTestCases(deflateSync(pickled).toString('base64'), 'here'), [
      { input: 'x', output: 'y', testtype: 'stdin' },
    ]);
    assert.throws(
      () => decodeLcbTestCases('%%%not base64%%%', 'file.jsonl:3: field "private_test_cases"'),
      /file\.jsonl:3: field "private_test_cases": neither JSON nor/,
    );
  });

  it('environment datasets: fixed split per file, split field, split file, and overlap detection', () => {
    const sandbox = sharedSandbox();
    const fixed = new CodeEnvironment({ datasets: [{ path: fixture('apps.jsonl'), split: 'test' }] }, { sandbox });
    assert.deepEqual(
      [fixed.problems.train.length, fixed.problems.validation.length, fixed.problems.test.length],
      [0, 0, 2],
    );
    assert.throws(
      () => fixed.instance('train', 0, 1),
      /the train split has no problems \(train 0, validation 0, test 2\)/,
    );
    const byField = new CodeEnvironment({ datasets: [{ path: fixture('apps.parquet'), split: 'field' }] }, { sandbox });
    assert.deepEqual(
      byField.problems.train.map((p) => p.id),
      ['101'],
    );
    assert.deepEqual(
      byField.problems.test.map((p) => p.id),
      ['104'],
    );
    const byFile = new CodeEnvironment(
      { datasets: [{ path: fixture('apps.jsonl'), split: 'file', splitFile: fixture('splits.json') }] },
      { sandbox },
    );
    assert.deepEqual(
      [byFile.problems.train.map((p) => p.id), byFile.problems.test.map((p) => p.id)],
      [['101'], ['104']],
    );
    const several = new CodeEnvironment(
      {
        datasets: [
          { path: fixture('apps.jsonl'), split: 'train' },
          { path: fixture('livecodebench.jsonl'), split: 'test' },
        ],
      },
      { sandbox },
    );
    assert.deepEqual([several.problems.train.length, several.problems.test.length], [2, 1]);
    assert.throws(
      () =>
        new CodeEnvironment(
          {
            datasets: [
              { path: fixture('apps.jsonl'), split: 'train' },
              { path: fixture('apps.parquet'), split: 'test' },
            ],
          },
          { sandbox },
        ),
      /apps\.parquet row 1: the same problem .* is also in apps\.jsonl:1 but in split train, not test; splits must not overlap/,
    );
  });

  it('config errors name the key path', () => {
    assert.throws(
      () => resolveConfig({ seats: ['tester'] }),
      (e: Error) => e instanceof CodeConfigError && /environment\.config\.seats/.test(e.message),
    );
    assert.throws(() => resolveConfig({ maxTurns: 0 }), /environment\.config\.maxTurns: must be an integer >= 1/);
    assert.throws(() => resolveConfig({ limits: { cpu: 1 } }), /environment\.config\.limits\.cpu: unknown limit/);
    assert.throws(
      () => resolveConfig({ limits: { wallMs: 2 ** 31 } }),
      /environment\.config\.limits\.wallMs: must be a positive integer no larger than 2147483647 \(2\^31 - 1\), got 2147483648/,
    );
    assert.throws(
      () => resolveConfig({ limits: { cpuMs: Infinity } }),
      /environment\.config\.limits\.cpuMs: must be a positive integer no larger than 2147483647 \(2\^31 - 1\), got Infinity/,
    );
    assert.throws(
      () => resolveConfig({ datasets: [{ path: 'x.jsonl', split: 'file' }] }),
      /datasets\[0\]\.splitFile: required/,
    );
    assert.throws(() => resolveConfig({ bogus: 1 }), /environment\.config\.bogus: unknown key/);
    assert.equal(resolveConfig({ seats: ['coder'], maxTurns: 5 }).maxTurns, 1);
  });
});
