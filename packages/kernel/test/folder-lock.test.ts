import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FolderLockError, LOCK_FILE, lockFolder } from '../src/util/index.js';

/** A lock file as another process would have written it. */
const writeLock = (dir: string, pid: number): void =>
  writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid, token: 'other', command: 'troupe train x.yaml', since: '2026-12-02T00:00:00.000Z' }));

describe('folder lock (one writer per run or experiment folder)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'troupe-lock-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is held until released: a second take, in this process too, names the folder and the holder', () => {
    const lock = lockFolder(dir, 'troupe train');
    assert.equal(JSON.parse(readFileSync(lock.file, 'utf8')).pid, process.pid);
    assert.throws(() => lockFolder(dir, 'troupe train'), (err: Error) => err instanceof FolderLockError
      && err.message.includes(`${dir} is in use by this process`) && err.message.includes('choose another --out')
      && err.message.includes(`delete ${join(dir, LOCK_FILE)}`));
    lock.release();
    assert.ok(!existsSync(lock.file));
    lock.release(); // idempotent
    lockFolder(dir, 'troupe train').release();
  });

  it('refuses a folder held by another running process, naming its pid and command', async () => {
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      writeLock(dir, other.pid!);
      assert.throws(() => lockFolder(dir, 'troupe experiment'), new RegExp(`in use by process ${other.pid} \\(troupe train x\\.yaml\\) since 2026-12-02T00:00:00\\.000Z: troupe experiment refuses`));
      assert.equal(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).token, 'other', 'the holder\'s lock is left alone');
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('takes over a stale lock (its process is gone, as after a SIGKILL) and an unreadable one', () => {
    const gone = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    writeLock(dir, Number(gone.stdout.trim()));
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
});
