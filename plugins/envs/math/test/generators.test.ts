import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { SPLITS } from '@troupe/kernel';
import {
  FAMILIES,
  GENERATORS,
  GeneratedProblemSet,
  checkEquivalence,
  problemKey,
  type MathProblem,
} from '../src/index.js';
import { createRng } from '@troupe/kernel';

describe('generated problem set', () => {
  it('is deterministic: the same (split, index, seed) gives the same problem, another seed another stream', () => {
    const a = new GeneratedProblemSet();
    const b = new GeneratedProblemSet();
    for (const split of SPLITS) for (let i = 0; i < 10; i++) assert.deepEqual(a.get(split, i, 3), b.get(split, i, 3));
    const other = Array.from({ length: 10 }, (_, i) => problemKey(a.get('train', i, 4)));
    const same = Array.from({ length: 10 }, (_, i) => problemKey(a.get('train', i, 3)));
    assert.notDeepEqual(other, same);
  });

  it('keeps splits disjoint by content, across seeds', () => {
    const set = new GeneratedProblemSet();
    const keys: Record<string, Set<string>> = {};
    for (const split of SPLITS) {
      keys[split] = new Set();
      for (const seed of [0, 1]) for (let i = 0; i < 60; i++) keys[split]!.add(problemKey(set.get(split, i, seed)));
    }
    for (const x of SPLITS)
      for (const y of SPLITS) {
        if (x >= y) continue;
        const shared = [...keys[x]!].filter((k) => keys[y]!.has(k));
        assert.deepEqual(shared, [], `${x} and ${y} share instances`);
      }
    // few repeats inside a split (each index is drawn on its own; the trainer skips a repeat)
    const train = Array.from({ length: 200 }, (_, i) => problemKey(set.get('train', i, 0)));
    assert.ok(new Set(train).size >= 0.85 * train.length, `${new Set(train).size} distinct of ${train.length}`);
  });

  it('honours the families option and rejects unknown families', () => {
    const set = new GeneratedProblemSet({ families: ['quadratic'] });
    for (let i = 0; i < 20; i++) assert.equal(set.get('train', i, 0).family, 'quadratic');
    assert.throws(
      () => new GeneratedProblemSet({ families: ['calculus' as never] }),
      /unknown problem family "calculus"/,
    );
  });

  it('every generated answer is confirmed by running its Python program (independent computation)', function () {
    const probe = spawnSync('python3', ['--version'], { encoding: 'utf8' });
    if (probe.error || probe.status !== 0) {
      console.warn('      python3 is not available: the generated programs cannot be run here.');
      this.skip();
    }
    const problems: MathProblem[] = [];
    for (const family of FAMILIES) {
      for (let k = 0; k < 30; k++) problems.push(GENERATORS[family](createRng(`gen-check\u241f${family}\u241f${k}`)));
    }
    // One python3 process runs every program with its stdout captured.
    const runner = [
      'import sys, io, json, contextlib',
      'out = []',
      'for src in json.load(sys.stdin):',
      '    buf = io.StringIO()',
      '    with contextlib.redirect_stdout(buf):',
      '        exec(src, {"__name__": "__main__"})',
      '    out.append(buf.getvalue().strip().splitlines()[-1])',
      'print(json.dumps(out))',
    ].join('\n');
    const run = spawnSync('python3', ['-c', runner], {
      input: JSON.stringify(problems.map((p) => p.program)),
      encoding: 'utf8',
      timeout: 120_000,
    });
    assert.equal(run.status, 0, run.stderr);
    const printed = JSON.parse(run.stdout) as string[];
    const wrong = problems
      .filter((p, k) => !checkEquivalence(printed[k]!, p.answer).equivalent || printed[k] !== p.answer)
      .map((p) => `${p.family}: ${p.question} → generator ${p.answer}, program ${printed[problems.indexOf(p)]}`);
    assert.deepEqual(wrong, []);
  });

  it('every family produces well-formed problems (non-empty question, exact answer, a program)', () => {
    for (const family of FAMILIES) {
      for (let k = 0; k < 50; k++) {
        const p = GENERATORS[family](createRng(`shape\u241f${family}\u241f${k}`));
        assert.equal(p.family, family);
        assert.ok(p.question.length > 10 && p.answer.length > 0 && p.program!.includes('print('));
        assert.match(p.answer, /^-?\d+(\/\d+)?$/, `${family} answer ${p.answer}`);
      }
    }
  });
});
