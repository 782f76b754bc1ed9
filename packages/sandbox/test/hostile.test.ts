import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { probeIsolation, removeStaleRunDirs, RunRequest, RunResult, Sandbox, SandboxLimits } from '@troupe/sandbox';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Small limits keep the suite fast; wall time is generous because the test machine is shared. */
const LIMITS: Partial<SandboxLimits> = {
  cpuMs: 1000,
  wallMs: 15_000,
  memoryMb: 128,
  maxProcesses: 16,
  maxOutputBytes: 64 * 1024,
  maxFileBytes: 64 * 1024,
};

const report = await probeIsolation();
const KINDS = (['bwrap', 'unshare'] as const).filter((k) => report.available[k]);

/** Host processes whose command line contains `tag` (pgrep -f), excluding none. */
function hostProcessesWith(tag: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', tag], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

describe('sandbox: isolation is available here', () => {
  it('bubblewrap or unshare works (CI must run: apt-get install -y bubblewrap)', () => {
    assert.ok(KINDS.length > 0, `no isolation available: ${report.details}`);
  });
});

// The preferred kind runs every test; the fallback runs the isolation-critical ones (the rest exercise shared code).
for (const [index, kind] of KINDS.entries()) {
  const full = index === 0;
  /** Defines a test only in the full suite. */
  const itFull = (title: string, fn: () => Promise<void>): void => {
    if (full) it(title, fn);
  };
  describe(`sandbox: hostile programs under ${kind}${full ? '' : ' (isolation-critical subset)'}`, function () {
    this.timeout(60_000);
    const sandbox = new Sandbox({ isolation: kind, concurrency: 2, defaults: LIMITS });
    const tag = `troupe_tag_${randomBytes(6).toString('hex')}`;
    const secretValue = `s3cr3t-${randomBytes(8).toString('hex')}`;
    const secretFiles = [
      path.join(here, `.secret-${tag}`),
      path.join(tmpdir(), `secret-${tag}`),
      path.join(homedir(), `.secret-${tag}`),
    ];
    let server: Server;
    let port = 0;
    let connections = 0;

    const py = (source: string, extra: Partial<RunRequest> = {}): Promise<RunResult> =>
      sandbox.run({ language: 'python', source, ...extra });
    const js = (source: string, extra: Partial<RunRequest> = {}): Promise<RunResult> =>
      sandbox.run({ language: 'javascript', source, ...extra });

    before(async () => {
      for (const f of secretFiles) writeFileSync(f, secretValue);
      process.env.TROUPE_SANDBOX_TEST_SECRET = secretValue;
      server = createServer((sock) => {
        connections++;
        sock.end('hello from the host\n');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });

    after(async () => {
      for (const f of secretFiles) rmSync(f, { force: true });
      delete process.env.TROUPE_SANDBOX_TEST_SECRET;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await sandbox.close();
    });

    afterEach(async () => {
      // The host is unharmed and the next run works.
      for (const f of secretFiles) assert.equal(readFileSync(f, 'utf8'), secretValue, `${f} was changed`);
      const r = await py('print(6 * 7)');
      assert.equal(r.verdict, 'ok', r.stderr);
      assert.equal(r.stdout, '42\n');
      assert.deepEqual(hostProcessesWith(tag), []);
    });

    itFull('round-trips stdin to stdout', async () => {
      const input = Array.from({ length: 2000 }, (_, i) => `line ${i} ünïcödé`).join('\n');
      const r = await py('import sys\ndata = sys.stdin.read()\nsys.stdout.write(data.upper())', { stdin: input });
      assert.equal(r.verdict, 'ok', r.stderr);
      assert.equal(r.stdout, input.toUpperCase());
      assert.equal(r.exitCode, 0);
      assert.equal(r.isolation, kind);
    });

    itFull('stderr warnings with exit 0 are ok', async () => {
      const r = await py(
        'import warnings, sys\nwarnings.warn("careful")\nprint("fine", file=sys.stderr)\nprint("answer")',
      );
      assert.equal(r.verdict, 'ok');
      assert.match(r.stderr, /careful/);
      assert.equal(r.stdout, 'answer\n');
    });

    itFull('reports non-zero exits and exceptions as runtime errors', async () => {
      const a = await py('import sys\nsys.exit(3)');
      assert.equal(a.verdict, 'runtime-error');
      assert.equal(a.exitCode, 3);
      const b = await py('raise ValueError("boom")');
      assert.equal(b.verdict, 'runtime-error');
      assert.equal(b.exitCode, 1);
      assert.match(b.stderr, /ValueError: boom/);
    });

    it('passes files and args verbatim (no shell), with the temp dir as cwd and HOME', async () => {
      const args = ['a', '--b', 'it\'s $(id) `id` "q" ; rm -rf / \\ ünï'];
      const r = await py(
        'import os, sys, json\nprint(open("data/in.txt").read(), json.dumps(sys.argv[1:]), os.getcwd() == os.environ["HOME"])',
        { files: { 'data/in.txt': 'hello', "we'ird $(x).txt": 'y' }, args },
      );
      assert.equal(r.verdict, 'ok', r.stderr);
      assert.equal(
        r.stdout,
        `hello ${JSON.stringify(args)
          .replace(/,/g, ', ')
          // eslint-disable-next-line no-control-regex -- the range is every non-ASCII character, which Python's json.dumps escapes
          .replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)} True\n`,
      );
    });

    itFull('gives Python a fixed hash seed (reproducible set order)', async () => {
      const src = 'print(list({"apple", "banana", "cherry", "date", "elderberry", "fig"}))';
      const [a, b] = await sandbox.runMany([
        { language: 'python', source: src },
        { language: 'python', source: src },
      ]);
      assert.equal(a.verdict, 'ok', a.stderr);
      assert.equal(a.stdout, b.stdout);
    });

    itFull('stops an infinite loop (CPU time limit)', async () => {
      const r = await py('while True:\n    pass', { limits: { cpuMs: 1000 } });
      assert.equal(r.verdict, 'timeout');
      assert.match(r.reason ?? '', /CPU|wall/);
    });

    itFull('stops a sleeping program (wall time limit)', async () => {
      const r = await py('import time\nprint("start", flush=True)\ntime.sleep(60)', { limits: { wallMs: 1500 } });
      assert.equal(r.verdict, 'timeout');
      assert.match(r.reason ?? '', /wall time/);
      assert.equal(r.stdout, 'start\n');
      assert.ok(r.wallMs < 10_000);
    });

    it('caps the number of processes (fork bomb)', async () => {
      const r = await py(
        [
          'import os, time',
          'n = 0',
          'try:',
          '    for _ in range(200):',
          '        if os.fork() == 0:',
          '            time.sleep(30)',
          '            os._exit(0)',
          '        n += 1',
          'except OSError as e:',
          '    print("fork failed", e.errno)',
          'print(n)',
        ].join('\n'),
        { limits: { maxProcesses: 8 } },
      );
      assert.equal(r.verdict, 'ok', r.stderr);
      const lines = r.stdout.trim().split('\n');
      assert.equal(lines[0], 'fork failed 11');
      assert.ok(Number(lines[1]) < 8, r.stdout);
    });

    it('survives a spinning fork bomb', async () => {
      const r = await py('import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass', {
        limits: { wallMs: 2000, maxProcesses: 8 },
      });
      assert.equal(r.verdict, 'timeout');
    });

    it('stops a Python memory bomb', async () => {
      const a = await py('x = bytearray(1 << 30)\nprint(len(x))');
      assert.equal(a.verdict, 'memory-limit', a.stderr);
      const b = await py('chunks = []\nwhile True:\n    chunks.append(" " * 10_000_000)', { limits: { cpuMs: 5000 } });
      assert.equal(b.verdict, 'memory-limit', b.stderr);
    });

    itFull('stops a JavaScript memory bomb (V8 heap and array buffers)', async () => {
      // CPU time to spare (on a loaded machine, zeroing pages costs more of it): only the memory limit can stop them
      const a = await js('const a = []; while (true) a.push(new Array(1e6).fill(1.5));', { limits: { cpuMs: 5000 } });
      assert.equal(a.verdict, 'memory-limit', a.stderr.slice(-500));
      const b = await js('const a = []; while (true) a.push(Buffer.alloc(50e6, 1));', { limits: { cpuMs: 5000 } });
      assert.equal(b.verdict, 'memory-limit', b.stderr.slice(-500));
    });

    itFull('caps huge output on stdout and on stderr', async () => {
      const a = await py('while True:\n    print("x" * 1000)');
      assert.equal(a.verdict, 'output-limit');
      assert.equal(a.truncated, true);
      assert.equal(Buffer.byteLength(a.stdout), 64 * 1024);
      // (A JavaScript loop that never yields cannot drain a full pipe, so the flood is one big write.)
      const b = await js('process.stderr.write("y".repeat(1 << 20)); setInterval(() => {}, 1000);');
      assert.equal(b.verdict, 'output-limit');
      assert.equal(b.truncated, true);
    });

    itFull('caps the size of files the program writes', async () => {
      const r = await py('with open("big.bin", "wb") as f:\n    f.write(b"0" * (1 << 20))');
      assert.equal(r.verdict, 'runtime-error');
      assert.match(r.stderr + (r.reason ?? ''), /File too large|SIGXFSZ|file size/);
    });

    it('has no privileges: no capabilities, no chroot escape, no mount', async () => {
      const r = await py(
        [
          'import os, subprocess',
          'print(open("/proc/self/status").read().split("CapEff:")[1].split()[0])',
          'try:',
          '    os.mkdir("esc"); os.chroot("esc")',
          '    for _ in range(30): os.chdir("..")',
          '    os.chroot(".")',
          '    print("ESCAPED", os.listdir("/"))',
          'except OSError as e:',
          '    print("chroot blocked")',
          'p = subprocess.run(["/bin/mount", "-t", "tmpfs", "x", "/sandbox/esc"], capture_output=True)',
          'print("mount blocked" if p.returncode != 0 else "MOUNTED")',
        ].join('\n'),
      );
      assert.equal(r.verdict, 'ok', r.stderr);
      assert.equal(r.stdout, '0000000000000000\nchroot blocked\nmount blocked\n');
    });

    it('cannot fill the host disk: the working directory is a small tmpfs', async () => {
      const r = await py(
        [
          'import errno',
          'n = 0',
          'try:',
          '    for i in range(100_000):',
          '        with open(f"f{i}", "wb") as f:',
          '            f.write(b"0" * 60_000)',
          '        n += 1',
          'except OSError as e:',
          '    print("full" if e.errno == errno.ENOSPC else e)',
          'print(n < 1000)',
        ].join('\n'),
      );
      assert.equal(r.verdict, 'ok', r.stderr);
      assert.equal(r.stdout, 'full\nTrue\n');
    });

    it('has no network: neither the host loopback nor an external address', async () => {
      const r = await py(
        [
          'import socket',
          `for addr in [("127.0.0.1", ${port}), ("1.1.1.1", 53), ("8.8.8.8", 443)]:`,
          '    s = socket.socket()',
          '    s.settimeout(2)',
          '    try:',
          '        s.connect(addr)',
          '        print("connected", addr, s.recv(100))',
          '    except OSError as e:',
          '        print("blocked", addr[0], type(e).__name__)',
          'try:',
          '    print("resolved", socket.gethostbyname("registry.npmjs.org"))',
          'except OSError as e:',
          '    print("no dns")',
        ].join('\n'),
      );
      assert.equal(r.verdict, 'ok', r.stderr);
      assert.doesNotMatch(r.stdout, /connected|resolved/);
      assert.equal(r.stdout.match(/blocked/g)?.length, 3, r.stdout);
      assert.equal(connections, 0);
      const j = await js(
        `require('net').connect(${port}, '127.0.0.1').on('connect', () => console.log('connected')).on('error', (e) => console.log('blocked', e.code));`,
      );
      assert.equal(j.verdict, 'ok', j.stderr);
      assert.match(j.stdout, /^blocked/);
      assert.equal(connections, 0);
    });

    it('cannot read host files: secrets under /work, the temp dir, the home dir, /etc/shadow, /root', async () => {
      const targets = [
        ...secretFiles,
        '/etc/shadow',
        '/etc/passwd',
        '/root/.bashrc',
        '/proc/1/root/etc/hostname',
        '/proc/1/environ',
        path.join(here, 'hostile.test.ts'),
      ];
      const r = await py(
        [
          'import json, os',
          `targets = ${JSON.stringify(targets)}`,
          'out = {}',
          'for t in targets:',
          '    try:',
          '        out[t] = open(t).read()[:100]',
          '    except OSError as e:',
          '        out[t] = "DENIED " + type(e).__name__',
          'out["ls /"] = sorted(os.listdir("/"))',
          'try:',
          '    out["ls /root"] = sorted(os.listdir("/root"))',
          'except OSError as e:',
          '    out["ls /root"] = "DENIED"',
          'print(json.dumps(out))',
        ].join('\n'),
      );
      assert.equal(r.verdict, 'ok', r.stderr);
      assert.ok(!r.stdout.includes(secretValue), 'a secret leaked');
      const out = JSON.parse(r.stdout) as Record<string, unknown>;
      for (const t of targets) {
        if (t === '/proc/1/environ') assert.ok(!String(out[t]).includes(secretValue));
        else assert.match(String(out[t]), /^DENIED/, `${t} was readable: ${String(out[t])}`);
      }
      for (const name of out['ls /'] as string[])
        assert.ok(
          [
            '.input',
            'bin',
            'dev',
            'etc',
            'lib',
            'lib32',
            'lib64',
            'libx32',
            'proc',
            'root',
            'sandbox',
            'sbin',
            'usr',
          ].includes(name),
          `unexpected /${name}`,
        );
      assert.ok(!(out['ls /'] as string[]).includes('work') && !(out['ls /'] as string[]).includes('tmp'));
    });

    it('cannot write or delete outside its temp dir', async () => {
      const targets = [
        ...secretFiles,
        path.join(here, `new-${tag}`),
        `/tmp/new-${tag}`,
        `/usr/new-${tag}`,
        `/new-${tag}`,
        `/etc/new-${tag}`,
      ];
      const r = await py(
        [
          'import os',
          `for t in ${JSON.stringify(targets)}:`,
          '    for op in ("write", "delete"):',
          '        try:',
          '            open(t, "w").write("pwned") if op == "write" else os.remove(t)',
          '            print("DID", op, t)',
          '        except OSError:',
          '            pass',
          'open("inside.txt", "w").write("fine")',
          'print(open("inside.txt").read())',
        ].join('\n'),
      );
      assert.equal(r.verdict, 'ok', r.stderr);
      assert.doesNotMatch(r.stdout, /DID/);
      assert.equal(r.stdout.trim(), 'fine');
      for (const t of targets.slice(secretFiles.length)) assert.equal(existsSync(t), false, `${t} was created`);
    });

    it("cannot see the parent's environment", async () => {
      assert.equal(process.env.TROUPE_SANDBOX_TEST_SECRET, secretValue);
      const r = await py('import os, json\nprint(json.dumps(dict(os.environ)))');
      assert.equal(r.verdict, 'ok', r.stderr);
      assert.ok(!r.stdout.includes(secretValue));
      const env = JSON.parse(r.stdout) as Record<string, string>;
      assert.deepEqual(
        Object.keys(env).filter(
          (k) => !['PATH', 'HOME', 'TMPDIR', 'LANG', 'PWD', 'LC_CTYPE', 'PYTHONHASHSEED'].includes(k),
        ),
        [],
      );
      const j = await js('console.log(JSON.stringify(process.env))');
      assert.ok(!j.stdout.includes(secretValue));
      assert.equal(JSON.parse(j.stdout).TROUPE_SANDBOX_TEST_SECRET, undefined);
    });

    it('kills background processes when the run ends', async () => {
      const marker = path.join(tmpdir(), `marker-${tag}`);
      const r = await py(
        [
          'import os, subprocess, sys',
          `subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.5); open('${marker}', 'w').write('x'); open('/sandbox/m', 'w').write('x'); time.sleep(30)  # ${tag}"], start_new_session=True)`,
          'pid = os.fork()',
          'if pid == 0:',
          '    os.setsid()',
          `    os.execv("/bin/sleep", ["sleep", "30", "${tag}"])`,
          'print("spawned")',
        ].join('\n'),
      );
      assert.equal(r.verdict, 'ok', r.stderr);
      assert.equal(r.stdout, 'spawned\n');
      assert.deepEqual(hostProcessesWith(tag), []);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      assert.equal(existsSync(marker), false);
      assert.deepEqual(hostProcessesWith(tag), []);
    });

    itFull('a JavaScript program cannot spawn a lingering child either', async () => {
      const r = await js(
        `require('child_process').spawn('/bin/sleep', ['30', '${tag}'], { detached: true, stdio: 'ignore' }).unref(); console.log('spawned');`,
      );
      assert.equal(r.verdict, 'ok', r.stderr);
      assert.deepEqual(hostProcessesWith(tag), []);
    });

    itFull('JavaScript: stdin round trip, runtime errors and timeouts', async () => {
      const a = await js(
        'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(s.split("").reverse().join("")));',
        { stdin: 'abc' },
      );
      assert.equal(a.verdict, 'ok', a.stderr);
      assert.equal(a.stdout, 'cba\n');
      const b = await js('throw new Error("boom")');
      assert.equal(b.verdict, 'runtime-error');
      assert.match(b.stderr, /boom/);
      const c = await js('for (;;) {}', { limits: { cpuMs: 1000 } });
      assert.equal(c.verdict, 'timeout');
      const d = await js('console.warn("deprecated"); console.log(1)');
      assert.equal(d.verdict, 'ok');
      const e = await js('import { readFileSync } from "node:fs";\nconsole.log(typeof readFileSync);');
      assert.equal(e.verdict, 'ok', e.stderr);
      assert.equal(e.stdout, 'function\n');
    });

    itFull('leaves no temp dirs behind, whatever the verdict', async () => {
      const saved = process.env.TMPDIR;
      const privateTmp = mkdtempSync(path.join(tmpdir(), 'troupe-sbx-test-'));
      process.env.TMPDIR = privateTmp;
      try {
        const results = await sandbox.runMany([
          { language: 'python', source: 'open("f", "w").write("x")\nprint(1)' },
          { language: 'python', source: 'import time\ntime.sleep(60)', limits: { wallMs: 1000 } },
          { language: 'javascript', source: 'process.stdout.write("x".repeat(1 << 20))' },
        ]);
        assert.deepEqual(
          results.map((r) => r.verdict),
          ['ok', 'timeout', 'output-limit'],
        );
        assert.deepEqual(readdirSync(privateTmp), []);
      } finally {
        if (saved === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = saved;
        rmSync(privateTmp, { recursive: true, force: true });
      }
    });
  });
}

/**
 * The reliability table: one hostile program per family of attack on the sandbox's limits, each with the outcome
 * that means "contained". Every program runs under every isolation kind that works here, two at a time (so the
 * memory bombs are also classified under load); the count is in the test title.
 */
interface HostileCase {
  family: string;
  name: string;
  language: 'python' | 'javascript';
  source: string;
  limits?: Partial<SandboxLimits>;
  /** Why the run was NOT contained under `kind`, or undefined when it was. */
  escaped: (r: RunResult, kind: 'bwrap' | 'unshare') => string | undefined;
}

/** What a run did, for a failure message. */
const said = (r: RunResult): string =>
  `verdict ${r.verdict} (${r.reason ?? ''}): ${r.stdout.slice(0, 300)}${r.stderr.slice(-300)}`;
const verdictIs = (verdict: RunResult['verdict']) => (r: RunResult) => (r.verdict === verdict ? undefined : said(r));
const printed = (stdout: string) => (r: RunResult) => (r.verdict === 'ok' && r.stdout === stdout ? undefined : said(r));
const isRoot = process.getuid?.() === 0;

/** 100k empty files in `dir`: contained when the tmpfs's inode cap stops it with ENOSPC after at most `cap`. */
function fileBomb(dir: string, cap: number): HostileCase {
  return {
    family: 'files',
    name: `100k empty files in ${dir} (inode bomb)`,
    language: 'python',
    source: `import errno\nn = 0\ntry:\n    for i in range(100_000):\n        open(f"${dir}/f{i}", "w").close(); n += 1\nexcept OSError as e:\n    print(errno.errorcode[e.errno], n)`,
    escaped: (r, kind) => {
      const [code, n] = r.stdout.trim().split(' ');
      // unprivileged bwrap cannot cap inodes: there the wall time is the bound
      if (kind === 'bwrap' && !isRoot) return r.verdict === 'timeout' || code === 'ENOSPC' ? undefined : said(r);
      return r.verdict === 'ok' && code === 'ENOSPC' && Number(n) <= cap ? undefined : said(r);
    },
  };
}
const MEMORY = { memoryMb: 64, cpuMs: 5000 };

const HOSTILE_CASES: HostileCase[] = [
  {
    family: 'memory',
    name: 'shared anonymous mmap of 1 GiB touched page by page',
    language: 'python',
    source:
      'import mmap\nm = mmap.mmap(-1, 1 << 30)\nfor i in range(0, 1 << 30, 4096):\n    m[i] = 1\nprint("touched")',
    limits: MEMORY,
    escaped: verdictIs('memory-limit'),
  },
  {
    family: 'memory',
    name: 'memfd of 1 GiB mapped and touched',
    language: 'python',
    source:
      'import mmap, os\nfd = os.memfd_create("x")\nos.ftruncate(fd, 1 << 30)\nm = mmap.mmap(fd, 1 << 30)\nfor i in range(0, 1 << 30, 4096):\n    m[i] = 1\nprint("touched")',
    limits: MEMORY,
    escaped: (r) =>
      r.verdict === 'memory-limit' ||
      (r.verdict === 'runtime-error' && /File too large|SIGXFSZ|file size/.test(r.stderr + (r.reason ?? '')))
        ? undefined
        : said(r),
  },
  {
    family: 'memory',
    name: 'one 1 GiB allocation',
    language: 'python',
    source: 'x = bytearray(1 << 30)\nprint(len(x))',
    limits: MEMORY,
    escaped: verdictIs('memory-limit'),
  },
  {
    family: 'memory',
    name: 'growing list of 10 MB strings',
    language: 'python',
    source: 'a = []\nwhile True:\n    a.append(" " * 10_000_000)',
    limits: MEMORY,
    escaped: verdictIs('memory-limit'),
  },
  {
    family: 'memory',
    name: '/dev/shm filled until it refuses',
    language: 'python',
    source:
      'import errno\nn = 0\ntry:\n    with open("/dev/shm/fill", "wb") as f:\n        while True:\n            f.write(b"0" * 65536); f.flush(); n += 65536\nexcept OSError as e:\n    print(errno.errorcode[e.errno], n <= 16 << 20)',
    limits: { ...MEMORY, maxFileBytes: 1 << 30 },
    escaped: printed('ENOSPC True\n'),
  },
  {
    family: 'memory',
    name: 'JavaScript heap growth',
    language: 'javascript',
    source: 'const a = []; while (true) a.push(new Array(1e6).fill(1.5));',
    limits: MEMORY,
    escaped: verdictIs('memory-limit'),
  },
  {
    family: 'memory',
    name: 'JavaScript array buffers',
    language: 'javascript',
    source: 'const a = []; while (true) a.push(Buffer.alloc(50e6, 1));',
    limits: MEMORY,
    escaped: verdictIs('memory-limit'),
  },
  fileBomb('/sandbox', 5000),
  fileBomb('/dev/shm', 256),
  {
    family: 'namespaces',
    name: 'creating a user namespace (libc unshare and the unshare tool)',
    language: 'python',
    source: [
      'import ctypes, subprocess, threading',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'print(libc.unshare(0x10000000), ctypes.get_errno())',
      'print(subprocess.run(["/usr/bin/unshare", "--user", "--map-root-user", "id", "-u"], capture_output=True).returncode != 0)',
      't = threading.Thread(target=print, args=("threads work",)); t.start(); t.join()',
    ].join('\n'),
    escaped: printed('-1 1\nTrue\nthreads work\n'),
  },
  {
    family: 'verdicts',
    name: 'exit(152) at once is not called a CPU timeout',
    language: 'python',
    source: 'import sys\nsys.exit(152)',
    escaped: (r) => (r.verdict === 'runtime-error' && /exited with 152/.test(r.reason ?? '') ? undefined : said(r)),
  },
];

for (const kind of KINDS) {
  describe(`sandbox: reliability table under ${kind}`, function () {
    this.timeout(120_000);
    const sandbox = new Sandbox({ isolation: kind, concurrency: 2, defaults: LIMITS });
    after(() => sandbox.close());

    it(`contains all ${HOSTILE_CASES.length} hostile programs (memory bombs two at a time)`, async () => {
      const results = await sandbox.runMany(
        HOSTILE_CASES.map((c) => ({ language: c.language, source: c.source, limits: c.limits })),
      );
      const escaped = HOSTILE_CASES.flatMap((c, i) => {
        const why = c.escaped(results[i]!, kind);
        return why ? [`${c.family}: ${c.name}: ${why}`] : [];
      });
      assert.deepEqual(escaped, [], `${HOSTILE_CASES.length - escaped.length} of ${HOSTILE_CASES.length} contained`);
    });
  });
}

/** A Python launcher that opens a directory, a secret file and a connected socket WITHOUT close-on-exec, then execs `argv`. */
const LEAKY_LAUNCHER = [
  'import os, socket, sys',
  'd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY); os.dup2(d, 20)',
  'f = os.open(sys.argv[2], os.O_RDWR); os.dup2(f, 21)',
  's = socket.create_connection(("127.0.0.1", int(sys.argv[3]))); os.dup2(s.fileno(), 22)',
  'for fd in (20, 21, 22): os.set_inheritable(fd, True)',
  'os.execv(sys.argv[4], sys.argv[4:])',
].join('\n');

/** Inside the sandbox: what every descriptor above 2 is, and what it gives (fchdir out, read, write). */
const FD_PROBE = [
  'import json, os, stat',
  'out = {}',
  'for name in os.listdir("/proc/self/fd"):',
  '    fd = int(name)',
  '    try:',
  '        st = os.fstat(fd)',
  '    except OSError:',
  '        continue',
  '    if fd <= 2:',
  '        continue',
  '    e = {"null": stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)}',
  '    try:',
  '        os.fchdir(fd); os.chdir(".."); e["escaped"] = sorted(os.listdir("."))[:20]',
  '    except OSError:',
  '        pass',
  '    try:',
  '        e["read"] = os.read(fd, 200).decode("latin1")',
  '    except OSError:',
  '        pass',
  '    try:',
  '        os.write(fd, b"pwned from the sandbox"); e["wrote"] = True',
  '    except OSError:',
  '        pass',
  '    out[fd] = e',
  'print(json.dumps(out))',
].join('\n');

describe('sandbox: descriptors the host holds open never reach the program', function () {
  this.timeout(120_000);
  const secret = `fd-secret-${randomBytes(8).toString('hex')}`;
  let dir: string;
  let server: Server;
  let port = 0;
  let received = '';

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'troupe-fd-test-'));
    writeFileSync(path.join(dir, 'secret.txt'), secret);
    writeFileSync(path.join(dir, 'launcher.py'), LEAKY_LAUNCHER);
    writeFileSync(path.join(dir, 'probe.py'), FD_PROBE);
    server = createServer((sock) => {
      sock.on('data', (d) => (received += d.toString('latin1')));
      sock.write(`${secret}\n`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  for (const kind of KINDS) {
    it(`under ${kind}: an inherited directory, file and socket (fds 20-22) are /dev/null inside`, async () => {
      const node = [
        process.execPath,
        '--conditions=troupe:source',
        '--import',
        'tsx',
        path.join(here, 'fixtures', 'run-one.ts'),
        kind,
        path.join(dir, 'probe.py'),
      ];
      const out = execFileSync(
        'python3',
        [path.join(dir, 'launcher.py'), here, path.join(dir, 'secret.txt'), String(port), ...node],
        { encoding: 'utf8', cwd: here },
      );
      const r = JSON.parse(out) as RunResult;
      assert.equal(r.verdict, 'ok', r.stderr);
      assert.equal(r.isolation, kind);
      assert.ok(!r.stdout.includes(secret), 'the secret leaked');
      const fds = JSON.parse(r.stdout) as Record<string, { null: boolean; escaped?: string[]; wrote?: boolean }>;
      for (const fd of ['20', '21', '22']) assert.equal(fds[fd]?.null, true, `fd ${fd}: ${JSON.stringify(fds[fd])}`);
      for (const [fd, e] of Object.entries(fds))
        assert.equal(e.escaped, undefined, `fd ${fd} let the program out: ${JSON.stringify(e)}`);
      assert.equal(readFileSync(path.join(dir, 'secret.txt'), 'utf8'), secret);
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(received, '', 'the program wrote to the host socket');
    });
  }
});

describe('sandbox: stale run dirs of dead processes', () => {
  it('are removed; those of live processes, and foreign names, stay', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'troupe-stale-test-'));
    try {
      const gone = execFileSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).trim();
      const mine = readFileSync('/proc/self/stat', 'utf8');
      const start = mine.slice(mine.lastIndexOf(')') + 2).split(' ')[19];
      const names = {
        dead: `troupe-sbx-${gone}-12345-aB3dE6`,
        reused: `troupe-sbx-${process.pid}-1-xY7zQ2`, // this pid, but started at another time
        live: `troupe-sbx-${process.pid}-${start}-Kp9mN4`,
        foreign: 'troupe-sbx-not-a-run',
      };
      for (const n of Object.values(names)) mkdirSync(path.join(dir, n, 'work'), { recursive: true });
      writeFileSync(path.join(dir, names.dead, 'work', 'f'), 'x');
      const removed = await removeStaleRunDirs(dir);
      assert.deepEqual(removed.sort(), [names.dead, names.reused].sort());
      assert.deepEqual(readdirSync(dir).sort(), [names.foreign, names.live].sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
