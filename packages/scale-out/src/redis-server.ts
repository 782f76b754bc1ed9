/**
 * A private redis-server for tests, benchmarks and single-machine runs: Debian's `redis-server` on a free port of
 * 127.0.0.1 with its own temporary directory. No persistence unless asked (`persistence: 'aof'`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisServerOptions {
  /** The executable (default `redis-server` on PATH). */
  binary?: string;
  /** Default: a free port. */
  port?: number;
  /** `'none'` (default: `--save '' --appendonly no`) or `'aof'` (`--appendonly yes --appendfsync everysec`): data
   * survives `restart()`. */
  persistence?: 'none' | 'aof';
  /** Working directory (kept); default a temporary one, removed by `stop()`. */
  dir?: string;
  /** More `--option value` arguments. */
  args?: string[];
  /** How long to wait for PONG. Default 10000. */
  startTimeoutMs?: number;
}

const INSTALL_HINT =
  'install it (Debian/Ubuntu: `apt-get install redis-server`, as scripts/setup.sh does; macOS: `brew install redis`) or pass { binary: "/path/to/redis-server" }';

export class RedisServer {
  private child: ChildProcess | undefined;
  private log = '';

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly ownDir: boolean,
    private readonly o: RedisServerOptions,
  ) {}

  /** Starts a server and resolves once it answers PING. */
  static async start(o: RedisServerOptions = {}): Promise<RedisServer> {
    const dir = o.dir ?? mkdtempSync(join(tmpdir(), 'troupe-redis-'));
    for (let tries = 0; ; tries++) {
      const server = new RedisServer(o.port ?? (await freePort()), dir, o.dir === undefined, o);
      try {
        await server.launch();
        return server;
      } catch (error) {
        // Another process may have taken the free port between the probe and redis-server's bind: try another.
        if (o.port === undefined && tries < 3 && /Address already in use/i.test(String(error))) continue;
        if (o.dir === undefined) rmSync(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** The process id, while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Stops it (SIGTERM: a clean shutdown, which writes the AOF) and removes the temporary directory. */
  async stop(): Promise<void> {
    await this.halt('SIGTERM');
    if (this.ownDir) rmSync(this.dir, { recursive: true, force: true });
  }

  /** Stops and starts it again on the same port and directory (with `persistence: 'aof'` the data comes back).
   * `kill: true` is a crash (SIGKILL); `downMs` keeps it down that long. */
  async restart(o: { kill?: boolean; downMs?: number } = {}): Promise<void> {
    await this.halt(o.kill ? 'SIGKILL' : 'SIGTERM');
    if (o.downMs) await new Promise((resolve) => setTimeout(resolve, o.downMs));
    await this.launch();
  }

  /** Stops it without removing its directory; `start()` again with `restart()`. */
  async halt(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  private async launch(): Promise<void> {
    const o = this.o;
    const persistence =
      o.persistence === 'aof' ? ['--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--appendonly', 'no'];
    const args = [
      '--port', String(this.port),
      '--bind', '127.0.0.1',
      '--dir', this.dir,
      '--save', '',
      ...persistence,
      '--daemonize', 'no',
      '--maxmemory-policy', 'noeviction',
      '--logfile', '',
      ...(o.args ?? []),
    ]; // prettier-ignore
    const binary = o.binary ?? 'redis-server';
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.log = '';
    const keep = (chunk: Buffer) => {
      this.log = (this.log + chunk.toString()).slice(-4000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const failed = new Promise<never>((_, reject) => {
      child.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          error.code === 'ENOENT'
            ? new Error(`RedisServer: ${binary} was not found; ${INSTALL_HINT}`)
            : new Error(`RedisServer: could not run ${binary}: ${error.message}`),
        ),
      );
      child.once('exit', (code, signal) =>
        reject(
          new Error(
            `RedisServer: ${binary} exited (${signal ?? `code ${code}`}) before answering on port ${this.port}: ${this.log.trim().split('\n').slice(-5).join(' | ')}`,
          ),
        ),
      );
    });
    failed.catch(() => {});
    const timeoutMs = o.startTimeoutMs ?? 10_000;
    const deadline = Date.now() + timeoutMs;
    try {
      while (!(await Promise.race([ping(this.port), failed]))) {
        if (Date.now() > deadline) {
          throw new Error(`RedisServer: ${binary} did not answer PING on port ${this.port} within ${timeoutMs} ms`);
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    } catch (error) {
      await this.halt('SIGKILL');
      throw error;
    }
    child.removeAllListeners('exit');
    child.removeAllListeners('error');
    child.on('error', () => {});
  }
}

/** Whether a Redis answers PING on 127.0.0.1:port (false while it is starting or loading its data). */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
    socket.on('error', () => done(false));
  });
}

/** A port the OS has just handed out as free. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
