import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FolderLockError, LOCK_FILE, lockFolder } from '../src/util/index.js';

/** A lock file as another process would have written it. */
const writeLock = (dir: string, pid: number, file = LOCK_FILE): void =>
  writeFileSync(
    join(dir, file),
    JSON.stringify({ pid, token: 'other', command: 'troupe train x.yaml', since: '2026-12-02T00:00:00.000Z' }),
  );

/** The pid of a process that has exited. */
const gonePid = (): number =>
  Number(spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' }).stdout.trim());

/**
 * Starts `n` processes that all take the folder's lock at the same instant; resolves to what each printed. The one
 * that took it holds it until every other has answered, so a child that starts late on a loaded machine still meets
 * the held lock.
 */
async function race(dir: string, n: number): Promise<string[]> {
  const child = fileURLToPath(new URL('./folder-lock-child.ts', import.meta.url));
  const at = Date.now() + 2500; // after every child has started, on an idle machine
  const children = Array.from({ length: n }, () =>
    spawn(process.execPath, ['--conditions=troupe:source', '--import', 'tsx', child, dir, String(at)]),
  );
  const answered = new Set<number>();
  return Promise.all(
    children.map(
      (c, i) =>
        new Promise<string>((done) => {
          let out = '';
          const onData = (d: Buffer): void => {
            out += d.toString();
            if (out.includes('\n') && !answered.has(i)) {
              answered.add(i);
              if (answered.size === n) for (const other of children) other.stdin.end(); // release
            }
          };
          c.stdout.on('data', onData);
          c.stderr.on('data', onData);
          c.on('close', () => {
            if (!answered.has(i)) {
              answered.add(i);
              if (answered.size === n) for (const other of children) other.stdin.end();
            }
            done(out.trim());
          });
        }),
    ),
  );
}

describe('folder lock (one writer per run or experiment folder)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'troupe-lock-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is held until released: a second take, in this process too, names the folder and the holder', () => {
    const lock = lockFolder(dir, 'troupe train');
    assert.equal(JSON.parse(readFileSync(lock.file, 'utf8')).pid, process.pid);
    assert.throws(
      () => lockFolder(dir, 'troupe train'),
      (err: Error) =>
        err instanceof FolderLockError &&
        err.message.includes(`${dir} is in use by this process`) &&
        err.message.includes('choose another --out') &&
        err.message.includes(`delete ${join(dir, LOCK_FILE)}`),
    );
    lock.release();
    assert.ok(!existsSync(lock.file));
    lock.release(); // idempotent
    lockFolder(dir, 'troupe train').release();
  });

  it('refuses a folder held by another running process, naming its pid and command', async () => {
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      writeLock(dir, other.pid!);
      assert.throws(
        () => lockFolder(dir, 'troupe experiment'),
        new RegExp(
          `in use by process ${other.pid} \\(troupe train x\\.yaml\\) since 2026-12-02T00:00:00\\.000Z: troupe experiment refuses`,
        ),
      );
      assert.equal(
        JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).token,
        'other',
        "the holder's lock is left alone",
      );
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('takes over a stale lock (its process is gone, as after a SIGKILL) and an unreadable one', () => {
    writeLock(dir, gonePid());
    const lock = lockFolder(dir, 'troupe train');
    assert.equal(JSON.parse(readFileSync(lock.file, 'utf8')).pid, process.pid);
    lock.release();
    writeFileSync(join(dir, LOCK_FILE), '{"pid": 1, "tok');
    lockFolder(dir, 'troupe train').release();
  });

  it('release leaves a lock that another process took in the meantime', () => {
    const lock = lockFolder(dir, 'troupe train');
    writeLock(dir, process.pid); // someone removed ours and took the folder
    lock.release();
    assert.equal(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).token, 'other');
  });

  it('leaves only the lock file in the folder (its private copy is removed)', () => {
    const lock = lockFolder(dir, 'troupe train');
    assert.deepEqual(readdirSync(dir), [LOCK_FILE]);
    lock.release();
    assert.deepEqual(readdirSync(dir), []);
  });

  it('does not remove a stale lock while another process is taking it over, and gives up with a clear error', () => {
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      writeLock(dir, gonePid());
      writeLock(dir, other.pid!, `${LOCK_FILE}.takeover`);
      assert.throws(
        () => lockFolder(dir, 'troupe train'),
        /cannot take .*\.lock \(other processes keep changing it\); choose another --out/,
      );
      assert.equal(
        JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).token,
        'other',
        'the stale lock is left to the process taking it over',
      );
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('names the takeover file a stopped process left behind and says to delete it', () => {
    writeLock(dir, gonePid());
    writeLock(dir, gonePid(), `${LOCK_FILE}.takeover`);
    assert.throws(
      () => lockFolder(dir, 'troupe train'),
      (err: Error) =>
        err instanceof FolderLockError &&
        err.message.includes(
          `${join(dir, LOCK_FILE)}.takeover was left by a process that stopped while taking over a stale lock`,
        ) &&
        err.message.includes(`delete ${join(dir, LOCK_FILE)}.takeover`),
    );
  });

  it('gives the folder to exactly one of several processes that take it at the same instant, fresh or after a crash', async function () {
    this.timeout(120_000);
    for (const stale of [false, true, true, false, true, true]) {
      const round = mkdtempSync(join(tmpdir(), 'troupe-lock-race-'));
      try {
        if (stale) writeLock(round, gonePid());
        const outs = await race(round, 6);
        assert.equal(
          outs.filter((o) => o === 'took').length,
          1,
          `${stale ? 'stale' : 'fresh'} folder: ${JSON.stringify(outs)}`,
        );
        assert.ok(
          outs.every((o) => o === 'took' || o.startsWith(`refused: ${round} is in use by process `)),
          JSON.stringify(outs),
        );
      } finally {
        rmSync(round, { recursive: true, force: true });
      }
    }
  });
});
