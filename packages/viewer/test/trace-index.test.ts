/**
 * The byte-offset index of a trace: group summaries as the records say, episodes read back from byte ranges, a file
 * followed while it grows (a group split across two writes included), a file that shrank, and clear errors.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  RunFolder,
  RunFolderError,
  TraceIndex,
  compareOutcomes,
  creditCells,
  mcnemarExact,
  queryGroups,
} from '../src/index.js';
import { FIXTURE_RUN, fixtureRecords, rawGroups, rawOutcomes } from './helpers/fixture.js';

describe('TraceIndex', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-trace-index-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const lines = readFileSync(join(FIXTURE_RUN, 'trace.jsonl'), 'utf8').split('\n').filter(Boolean);
  const records = fixtureRecords();

  it('summarises every group as its records say, and reads an episode back from its byte ranges', async () => {
    const t = new TraceIndex(join(FIXTURE_RUN, 'trace.jsonl'), 'trace.jsonl');
    await t.settle();
    const raw = rawGroups(records);
    assert.equal(t.records, records.length);
    assert.equal(t.groups.length, raw.length);
    const outcomes = rawOutcomes(records);
    t.groups.forEach((g, i) => {
      const rs = raw[i]!;
      assert.deepEqual(
        g.rewards,
        rs.map((r) => r.reward),
      );
      assert.deepEqual(
        g.advantages,
        rs.map((r) => r.advantage),
      );
      assert.equal(g.selected, rs.find((r) => r.selected)?.branch ?? -1);
      assert.equal(g.greedy, rs.find((r) => r.greedy)?.branch ?? -1);
      assert.equal(g.malformed, rs.filter((r) => r.parseError !== null).length);
      assert.equal(g.episodeSuccess, outcomes.get(`${rs[0]!.step}|${rs[0]!.episodeId}`));
    });
    const first = records[0]!;
    const episode = await t.episode(first.episodeId, first.step);
    assert.deepEqual(
      episode,
      records.filter((r) => r.step === first.step && r.episodeId === first.episodeId),
    );
    assert.equal(await t.episode('no-such-episode', 1), undefined);
  });

  it('follows a growing file: new lines, a torn last line and a group split across two writes', async () => {
    const file = join(dir, 'trace.jsonl');
    const g0 = rawGroups(records)[0]!.length;
    // the first group and one record of the second, then half a line
    writeFileSync(file, `${lines.slice(0, g0 + 1).join('\n')}\n${lines[g0 + 1]!.slice(0, 40)}`);
    const t = new TraceIndex(file, 'trace.jsonl');
    await t.update();
    assert.equal(t.groups.length, 1, 'the second group is still open');
    assert.equal(t.records, g0 + 1, 'the torn line waits');
    appendFileSync(file, `${lines[g0 + 1]!.slice(40)}\n${lines.slice(g0 + 2).join('\n')}\n`);
    await t.settle();
    assert.equal(t.records, records.length);
    assert.deepEqual(
      t.groups.map((g) => g.rewards),
      rawGroups(records).map((rs) => rs.map((r) => r.reward)),
    );
  });

  it('indexes a file again when it shrank (a run restarted)', async () => {
    const file = join(dir, 'trace.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const t = new TraceIndex(file, 'trace.jsonl');
    await t.settle();
    writeFileSync(file, `${lines.slice(0, 3).join('\n')}\n`);
    await t.settle();
    assert.equal(t.records, 3);
    assert.equal(t.groups.length, 1);
  });

  it('names the file and the byte of a line that is not a trace record', async () => {
    const file = join(dir, 'x.jsonl');
    writeFileSync(file, `${lines[0]}\n{"step": 1, "hello": true}\n`);
    await assert.rejects(
      new TraceIndex(file, 'x.jsonl').settle(),
      (err: Error) =>
        err.name === 'TraceFileError' && /x\.jsonl: the line at byte \d+ is not a trace record/.test(err.message),
    );
    writeFileSync(file, 'not json\n');
    await assert.rejects(new TraceIndex(file, 'x.jsonl').settle(), /x\.jsonl: byte 0 is not a JSON line/);
  });
});

describe('RunFolder', () => {
  it('finds the training trace first, then the evaluation traces, and reads checkpoints and the spec as run', async () => {
    const run = new RunFolder(FIXTURE_RUN);
    assert.deepEqual(run.traceNames(), ['trace.jsonl', 'evals/step-0.trace.jsonl', 'evals/step-3-sampled.trace.jsonl']);
    const o = await run.overview();
    assert.equal(o.name, 'viewer-fixture');
    assert.deepEqual(
      o.checkpoints.map((c) => c.step),
      [0, 2, 3],
    );
    assert.equal(o.spec?.file, 'spec.yaml');
    assert.deepEqual(
      o.traces.map((t) => t.kind),
      ['train', 'eval', 'eval'],
    );
  });

  it('views one trace file on its own', async () => {
    const run = new RunFolder(join(FIXTURE_RUN, 'evals', 'step-0.trace.jsonl'));
    assert.deepEqual(run.traceNames(), ['step-0.trace.jsonl']);
    assert.equal((await run.overview()).metrics.length, 0);
  });

  it('says what to pass for a path that is not a run', () => {
    assert.throws(
      () => new RunFolder('/no/such/run'),
      (e: Error) =>
        e instanceof RunFolderError && /\/no\/such\/run: no such file or folder; pass a run folder/.test(e.message),
    );
    assert.throws(
      () => new RunFolder(join(FIXTURE_RUN, 'checkpoints')),
      /not a run folder \(no trace\.jsonl, metrics\.jsonl or evals\/\*\.jsonl in it\)/,
    );
    assert.throws(() => new RunFolder(join(FIXTURE_RUN, 'spec.yaml')), /not a \.jsonl trace/);
  });
});

describe('queries', () => {
  it('pairs episodes by instance uid and finds the turn where the selected paths part', () => {
    const path = (...hashes: number[]) => hashes.map((hash, turn) => ({ turn, seat: 's', hash }));
    const e = (uid: string, success: boolean, p: ReturnType<typeof path>) => ({
      episodeId: uid,
      instanceUid: uid,
      step: null,
      success,
      turns: p.length,
      path: p,
    });
    const c = compareOutcomes('a', [e('x', false, path(1, 2)), e('y', true, path(1)), e('z', true, path(5))], 'b', [
      e('x', true, path(1, 3)),
      e('y', true, path(1)),
      e('w', false, path(1)),
    ]);
    assert.deepEqual(
      c.rows.map((r) => [r.instanceUid, r.status, r.parts]),
      [
        ['x', 'gained', { turn: 1, seat: 's' }],
        ['y', 'both', null],
        ['z', 'unpaired', null],
        ['w', 'unpaired', null],
      ],
    );
    assert.equal(c.paired, 2);
    assert.equal(c.gained, 1);
  });

  it('computes the exact McNemar p', () => {
    assert.equal(mcnemarExact(0, 0), 1);
    assert.ok(Math.abs(mcnemarExact(8, 1) - 0.0390625) < 1e-12);
    assert.equal(mcnemarExact(3, 3), 1);
  });

  it('sorts and pages groups, and averages credit per seat and turn', () => {
    const g = (id: number, seat: string, rewards: number[], advantages: number[]) => ({
      id,
      step: 1,
      episodeId: 'e',
      instanceUid: 'e',
      turn: 0,
      seat,
      rewards,
      advantages,
      termMeans: { team: rewards[0]! },
      selected: 0,
      greedy: -1,
      malformed: 0,
      spread: Math.max(...rewards) - Math.min(...rewards),
      zeroVariance: rewards.every((r) => r === rewards[0]),
      episodeSuccess: false,
    });
    const groups = [g(0, 'a', [1, 1], [0, 0]), g(1, 'a', [0, 2], [-1, 1]), g(2, 'b', [0, 4], [-1, 1])];
    assert.deepEqual(
      queryGroups(groups, { sort: 'spread', desc: true }).rows.map((x) => x.id),
      [2, 1, 0],
    );
    assert.deepEqual(queryGroups(groups, { limit: 1, offset: 1 }), { total: 3, offset: 1, rows: [groups[1]] });
    const [a] = creditCells(groups);
    assert.deepEqual(
      { seat: a!.seat, zero: a!.zeroVarianceShare, adv: a!.meanAbsAdvantage, team: a!.termMeans.team },
      { seat: 'a', zero: 0.5, adv: 0.5, team: 0.5 },
    );
  });
});
