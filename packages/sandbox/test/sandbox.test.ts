import assert from 'node:assert/strict';
import {
  chooseIsolation,
  DEFAULT_LIMITS,
  IsolationReport,
  looksOutOfMemory,
  probeIsolation,
  RunRequest,
  Sandbox,
  TaskPool,
} from '@troupe/sandbox';
import { classify, leastWallForCpu } from '../src/classify.js';
import type { RawOutcome } from '../src/execute.js';
import { noUserNamespacesFilter } from '../src/seccomp.js';

const LIMITS = { cpuMs: 1000, wallMs: 15_000, memoryMb: 128, maxOutputBytes: 64 * 1024 };
const isRoot = process.getuid?.() === 0;

describe('sandbox: API', function () {
  this.timeout(60_000);
  const sandbox = new Sandbox({ concurrency: 2, defaults: LIMITS });
  after(() => sandbox.close());

  it('merges limits: defaults, then the sandbox options, then the request', () => {
    assert.deepEqual(sandbox.limitsFor(), { ...DEFAULT_LIMITS, ...LIMITS });
    assert.equal(sandbox.limitsFor({ limits: { wallMs: 7, cpuMs: undefined } }).wallMs, 7);
    assert.equal(sandbox.limitsFor({ limits: { cpuMs: undefined } }).cpuMs, 1000);
  });

  it('rejects bad options at construction, naming the key', () => {
    assert.throws(
      () => new Sandbox({ defaults: { memoryMb: -1 } }),
      /options\.defaults\.memoryMb must be a positive integer/,
    );
    assert.throws(() => new Sandbox({ concurrency: 0 }), /concurrency/);
    assert.throws(() => new Sandbox({ isolation: 'docker' as never }), /isolation/);
  });

  it('refuses invalid requests with a reason instead of throwing', async () => {
    const cases: [RunRequest, RegExp][] = [
      [{ language: 'ruby' as never, source: 'puts 1' }, /language/],
      [{ language: 'python', source: 'print(1)', limits: { cpuMs: 0 } }, /limits\.cpuMs must be a positive integer/],
      [{ language: 'python', source: 'print(1)', limits: { gpuMs: 5 } as never }, /limits\.gpuMs is not a known limit/],
      [{ language: 'python', source: 'print(1)', files: { '../escape.txt': 'x' } }, /files: "\.\.\/escape\.txt"/],
      [{ language: 'python', source: 'print(1)', files: { '/etc/x': 'x' } }, /relative path/],
      [{ language: 'python', source: 'print(1)', files: { 'main.py': 'x' } }, /overwrite the program/],
    ];
    for (const [req, re] of cases) {
      const r = await sandbox.run(req);
      assert.equal(r.verdict, 'refused');
      assert.match(r.reason ?? '', re);
      assert.equal(r.exitCode, null);
    }
  });

  it('refuses JavaScript limits Node cannot start under (instead of hanging)', async () => {
    const a = await sandbox.run({ language: 'javascript', source: 'console.log(1)', limits: { maxProcesses: 3 } });
    assert.equal(a.verdict, 'refused');
    assert.match(a.reason ?? '', /maxProcesses >= 6/);
    const b = await sandbox.run({ language: 'javascript', source: 'console.log(1)', limits: { memoryMb: 16 } });
    assert.equal(b.verdict, 'refused');
    assert.match(b.reason ?? '', /memoryMb >= 32/);
  });

  it('reports the isolation it uses', async () => {
    const machine = await probeIsolation();
    const mine = await sandbox.isolation();
    assert.equal(mine.kind, machine.kind);
    assert.ok(mine.details.length > 0);
    const r = await sandbox.run({ language: 'python', source: 'print(1)' });
    assert.equal(r.isolation, machine.kind);
  });

  it('refuses unisolated runs unless they are allowed', async () => {
    const strict = new Sandbox({ isolation: 'none' });
    const r = await strict.run({ language: 'python', source: 'print(1)' });
    assert.equal(r.verdict, 'refused');
    assert.match(r.reason ?? '', /allowUnisolated/);
    assert.equal((await strict.isolation()).kind, 'unavailable');
    await strict.close();

    const loose = new Sandbox({ isolation: 'none', allowUnisolated: true, defaults: LIMITS });
    process.env.TROUPE_SANDBOX_API_SECRET = 'unisolated-secret';
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      // Node is under /usr here, reachable by any uid (a pyenv Python under /root is not: see the next test).
      const ok = await loose.run({
        language: 'javascript',
        source:
          'console.log(Object.keys(process.env).sort().join(","), process.getuid()); process.stdin.on("data", (d) => console.log(String(d)))',
        stdin: 'hi',
      });
      assert.equal(ok.verdict, 'ok', ok.stderr);
      assert.equal(ok.isolation, 'none');
      assert.ok(!ok.stdout.includes('TROUPE_SANDBOX_API_SECRET'), 'even unisolated runs get an empty environment');
      assert.match(ok.stdout, /hi\n$/);
      if (isRoot)
        assert.doesNotMatch(ok.stdout.split('\n')[0]!, / 0$/, 'an unisolated run as root must drop to another uid');
      const t = await loose.run({ language: 'javascript', source: 'for (;;) {}' });
      assert.equal(t.verdict, 'timeout');
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(warnings.filter((w) => /UNISOLATED/.test(w.message)).length, 1, 'one loud warning per sandbox');
    } finally {
      process.off('warning', onWarning);
      delete process.env.TROUPE_SANDBOX_API_SECRET;
      await loose.close();
    }
  });

  it('as root, an unisolated run never runs as root: /etc/shadow stays unreadable, an unreachable runtime is refused', async function () {
    if (!isRoot) this.skip(); // unprivileged, there is no root to drop
    const loose = new Sandbox({ isolation: 'none', allowUnisolated: true, defaults: LIMITS });
    try {
      const r = await loose.run({
        language: 'javascript',
        source:
          'try { require("fs").readFileSync("/etc/shadow"); console.log("READ") } catch (e) { console.log(e.code) }',
      });
      assert.equal(r.verdict, 'ok', r.stderr);
      assert.equal(r.stdout, 'EACCES\n');
      const py = await loose.run({ language: 'python', source: 'print(open("/etc/shadow").read())' });
      if (py.verdict === 'refused') assert.match(py.reason ?? '', /drops to an unprivileged uid, which cannot reach/);
      else assert.match(py.stderr, /PermissionError/);
    } finally {
      await loose.close();
    }
  });

  it('rejects limits beyond 2^31 - 1 or not finite (a longer timer would fire at once)', async () => {
    for (const [key, value] of [
      ['wallMs', 2 ** 31],
      ['cpuMs', Infinity],
      ['memoryMb', 1e308],
      ['maxFileBytes', NaN],
    ] as const) {
      const r = await sandbox.run({ language: 'python', source: 'print(1)', limits: { [key]: value } });
      assert.equal(r.verdict, 'refused', `${key}: ${value}`);
      assert.match(r.reason ?? '', new RegExp(`limits\\.${key} must be a positive integer no larger than 2147483647`));
    }
    assert.throws(
      () => new Sandbox({ defaults: { wallMs: 2 ** 31 } }),
      /options\.defaults\.wallMs must be a positive integer no larger than 2147483647/,
    );
    const edge = await sandbox.run({ language: 'python', source: 'print(1)', limits: { wallMs: 2 ** 31 - 1 } });
    assert.equal(edge.verdict, 'ok', edge.reason);
  });

  it('runs in parallel without interference (same file names, a fork bomb next door)', async () => {
    const reqs: RunRequest[] = Array.from({ length: 6 }, (_, i) => ({
      language: 'python' as const,
      source: [
        'import os, subprocess, sys, time',
        `open("x.txt", "w").write("${i}")`,
        'kids = [subprocess.Popen(["/bin/sleep", "0.3"]) for _ in range(3)]',
        'for k in kids: k.wait()',
        'print(open("x.txt").read(), sorted(os.listdir(".")))',
      ].join('\n'),
    }));
    reqs.splice(2, 0, {
      language: 'python',
      source:
        'import os, time\nfor _ in range(100):\n    try:\n        os.fork()\n    except OSError:\n        pass\ntime.sleep(1)',
      limits: { maxProcesses: 8 },
    });
    const results = await sandbox.runMany(reqs);
    const normal = results.filter((_, i) => i !== 2);
    normal.forEach((r, i) => {
      assert.equal(r.verdict, 'ok', r.stderr);
      assert.equal(r.stdout, `${i} ['main.py', 'x.txt']\n`);
    });
  });

  it('aborting kills a running program; aborting first refuses it', async () => {
    const ctl = new AbortController();
    const p = sandbox.run({
      language: 'python',
      source: 'import time\nprint("up", flush=True)\ntime.sleep(60)',
      signal: ctl.signal,
    });
    setTimeout(() => ctl.abort(), 800);
    const r = await p;
    assert.equal(r.verdict, 'runtime-error');
    assert.match(r.reason ?? '', /aborted/);
    const pre = new AbortController();
    pre.abort();
    const q = await sandbox.run({ language: 'python', source: 'print(1)', signal: pre.signal });
    assert.equal(q.verdict, 'refused');
  });

  it('close() kills running programs and refuses later runs', async () => {
    const s = new Sandbox({ concurrency: 1, defaults: LIMITS });
    const running = s.run({ language: 'python', source: 'import time\ntime.sleep(60)' });
    const queued = s.run({ language: 'python', source: 'print(1)' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    await s.close();
    const [a, b] = await Promise.all([running, queued]);
    assert.notEqual(a.verdict, 'ok');
    assert.equal(b.verdict, 'refused');
    const c = await s.run({ language: 'python', source: 'print(1)' });
    assert.equal(c.verdict, 'refused');
    assert.match(c.reason ?? '', /closed/);
  });
});

describe('sandbox: TaskPool', () => {
  it('never runs more than `concurrency` tasks at once and keeps FIFO order', async () => {
    const pool = new TaskPool(2);
    let active = 0;
    let peak = 0;
    const started: number[] = [];
    const gates: Array<() => void> = [];
    const tasks = Array.from({ length: 6 }, (_, i) =>
      pool.run(async () => {
        started.push(i);
        active++;
        peak = Math.max(peak, active);
        await new Promise<void>((resolve) => gates.push(resolve));
        active--;
        return i * 10;
      }),
    );
    while (started.length < 6) {
      await new Promise((resolve) => setImmediate(resolve));
      assert.ok(active <= 2);
      gates.shift()?.();
    }
    gates.forEach((g) => g());
    assert.deepEqual(await Promise.all(tasks), [0, 10, 20, 30, 40, 50]);
    assert.equal(peak, 2);
    assert.deepEqual(started, [0, 1, 2, 3, 4, 5]);
  });

  it('frees the slot when a task fails', async () => {
    const pool = new TaskPool(1);
    await assert.rejects(
      pool.run(async () => Promise.reject(new Error('x'))),
      /x/,
    );
    assert.equal(await pool.run(async () => 5), 5);
    assert.equal(pool.running, 0);
  });
});

describe('sandbox: out-of-memory detection', () => {
  it('recognises Python, V8 and libc messages, and not ordinary errors', () => {
    assert.ok(looksOutOfMemory('Traceback (most recent call last):\n  File "main.py", line 1\nMemoryError\n'));
    assert.ok(looksOutOfMemory('FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory'));
    assert.ok(looksOutOfMemory('RangeError: Array buffer allocation failed'));
    assert.ok(looksOutOfMemory('OSError: [Errno 12] Cannot allocate memory'));
    assert.ok(!looksOutOfMemory('ValueError: memory is a nice word'));
    assert.ok(!looksOutOfMemory(''));
  });
});

describe('sandbox: choosing the isolation', () => {
  const none: IsolationReport = {
    kind: 'unavailable',
    details: 'bwrap: unavailable',
    available: { bwrap: false, unshare: false },
  };
  const onlyUnshare: IsolationReport = {
    kind: 'unshare',
    details: 'unshare works',
    available: { bwrap: false, unshare: true },
  };

  it('refuses when nothing isolates, saying what to install, unless unisolated runs are allowed', () => {
    const r = chooseIsolation(none, {}, true);
    assert.equal(r.kind, undefined);
    assert.match(r.refusal ?? '', /apt-get install -y bubblewrap/);
    assert.deepEqual(chooseIsolation(none, { allowUnisolated: true }, true), { kind: 'none' });
    assert.match(chooseIsolation(none, { allowUnisolated: true }, false).refusal ?? '', /prlimit/);
  });

  it('uses the best available kind, and refuses a forced kind that does not work', () => {
    assert.deepEqual(chooseIsolation(onlyUnshare, {}, true), { kind: 'unshare' });
    assert.deepEqual(chooseIsolation(onlyUnshare, { isolation: 'unshare' }, true), { kind: 'unshare' });
    assert.match(
      chooseIsolation(onlyUnshare, { isolation: 'bwrap', allowUnisolated: true }, true).refusal ?? '',
      /"bwrap" was requested/,
    );
    assert.match(chooseIsolation(onlyUnshare, { isolation: 'none' }, true).refusal ?? '', /allowUnisolated/);
  });
});

describe('sandbox: verdicts say what is known', () => {
  const limits = { ...DEFAULT_LIMITS, cpuMs: 2000, maxProcesses: 16 };
  const raw = (exitCode: number | null, signal: string | null, wallMs: number): RawOutcome => ({
    exitCode,
    signal,
    stdout: Buffer.alloc(0),
    stderr: Buffer.alloc(0),
    outputExceeded: false,
    wallExceeded: false,
    aborted: false,
    wallMs,
  });

  it('status 152 from a launcher: a CPU timeout only when the run lasted long enough to use the CPU time', () => {
    const quick = classify(raw(152, null, 40), 'bwrap', limits);
    assert.equal(quick.verdict, 'runtime-error');
    assert.match(quick.reason ?? '', /not the CPU time limit.*exited with 152 itself/);
    const slow = classify(raw(152, null, 2100), 'unshare', limits);
    assert.equal(slow.verdict, 'timeout');
    assert.match(
      slow.reason ?? '',
      /CPU time limit of 2000 ms exceeded \(SIGXCPU\) \(exit status 152: killed by SIGXCPU, or the program exited with 152 itself/,
    );
    // unisolated, the signal is the kernel's own word
    assert.equal(
      classify(raw(null, 'SIGXCPU', 2100), 'none', limits).reason,
      'CPU time limit of 2000 ms exceeded (SIGXCPU)',
    );
    assert.match(
      classify(raw(137, null, 10), 'bwrap', limits).reason ?? '',
      /killed by SIGKILL, or the program exited with 137 itself/,
    );
  });

  it('the least wall time for the CPU limit counts the threads and the cores', () => {
    assert.equal(leastWallForCpu(2000, { ...limits, maxProcesses: 4 }, 2), 1000);
    assert.equal(leastWallForCpu(2000, { ...limits, maxProcesses: 1 }, 64), 2000);
  });
});

describe('sandbox: the user-namespace seccomp filter', () => {
  it('is built for x64 and arm64 only, and ends in allow / EPERM / ENOSYS', () => {
    const x64 = noUserNamespacesFilter('x64')!;
    assert.equal(x64.length % 8, 0);
    const rets = [x64.length - 24, x64.length - 16, x64.length - 8].map((o) => [
      x64.readUInt16LE(o),
      x64.readUInt32LE(o + 4),
    ]);
    assert.deepEqual(rets, [
      [0x06, 0x7fff0000],
      [0x06, 0x00050001],
      [0x06, 0x00050026],
    ]);
    assert.equal(noUserNamespacesFilter('arm64')!.length, x64.length - 8); // no x32 ABI check
    assert.equal(noUserNamespacesFilter('riscv64'), undefined);
  });
});
