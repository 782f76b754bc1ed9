/**
 * Is Redis there? One PING (after AUTH when the URL has a password) over a plain socket, with a timeout: what
 * `troupe worker`, `troupe doctor` and a distributed `troupe train` check before they start, so that an unreachable
 * Redis is one clear sentence instead of endless reconnects.
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';

/** Why Redis at a URL is not usable, or undefined when it answered PONG. */
export async function redisProblem(url: string, timeoutMs = 3000): Promise<string | undefined> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `${JSON.stringify(url)} is not a URL; give redis://host:port (e.g. redis://127.0.0.1:6379)`;
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:')
    return `${JSON.stringify(url)} must start with redis:// or rediss://`;
  const host = u.hostname || '127.0.0.1';
  const port = u.port ? Number(u.port) : 6379;
  const where = `Redis at ${u.protocol}//${host}:${port}`;
  const commands: string[][] = [];
  if (u.password)
    commands.push(
      u.username
        ? ['AUTH', decodeURIComponent(u.username), decodeURIComponent(u.password)]
        : ['AUTH', decodeURIComponent(u.password)],
    );
  commands.push(['PING']);
  const wire = commands
    .map((c) => `*${c.length}\r\n${c.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`)
    .join('');
  return new Promise((resolve) => {
    let text = '';
    const send = (): void => void socket.write(wire);
    const socket: Socket =
      u.protocol === 'rediss:' ? connectTls({ host, port, servername: host }, send) : connectTcp({ host, port }, send);
    const done = (problem: string | undefined): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(problem);
    };
    const timer = setTimeout(() => done(`${where} did not answer within ${timeoutMs} ms`), timeoutMs);
    socket.on('data', (chunk) => {
      text += chunk.toString('utf8');
      const lines = text.split('\r\n').filter((l) => l !== '');
      const error = lines.find((l) => l.startsWith('-'));
      if (error) done(`${where} refused: ${error.slice(1)}`);
      else if (lines.includes('+PONG')) done(undefined);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => done(`${where} is not reachable (${err.code ?? err.message})`));
  });
}

/** How to start a Redis, for error hints. */
export const START_REDIS_HINT =
  'start one (Debian/Ubuntu: apt-get install redis-server && redis-server --port 6379; or docker run -p 6379:6379 redis:7) and pass its URL';
