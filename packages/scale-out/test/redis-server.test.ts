import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { RedisServer } from '@troupe/scale-out/redis-server';
import { Redis } from 'ioredis';

describe('RedisServer', function () {
  this.timeout(30_000);

  it('starts on a free port with a temporary directory, answers, and stop() removes both', async () => {
    const server = await RedisServer.start();
    const client = new Redis(server.url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      assert.equal(await client.ping(), 'PONG');
      assert.deepEqual(await client.config('GET', 'appendonly'), ['appendonly', 'no']);
      assert.deepEqual(await client.config('GET', 'maxmemory-policy'), ['maxmemory-policy', 'noeviction']);
      assert.ok(existsSync(server.dir));
    } finally {
      client.disconnect();
      await server.stop();
    }
    assert.ok(!existsSync(server.dir), 'the temporary directory is removed');
    const refused = await new Promise<string>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port: server.port });
      socket.on('connect', () => resolve('connected'));
      socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    });
    assert.equal(refused, 'ECONNREFUSED', 'nothing listens on the port any more');
  });

  it('restart() keeps the port; the data survives with persistence "aof" and is gone without', async () => {
    for (const persistence of ['aof', 'none'] as const) {
      const server = await RedisServer.start({ persistence });
      const client = new Redis(server.url, { retryStrategy: () => 50 });
      client.on('error', () => {});
      try {
        await client.set('kept', persistence);
        const port = server.port;
        await server.restart({ downMs: 100 });
        assert.equal(server.port, port);
        assert.equal(await client.get('kept'), persistence === 'aof' ? 'aof' : null, persistence);
      } finally {
        client.disconnect();
        await server.stop();
      }
    }
  });

  it('a missing redis-server is a clear error that says how to install it', async () => {
    await assert.rejects(
      RedisServer.start({ binary: '/nonexistent/redis-server' }),
      (error: Error) =>
        /\/nonexistent\/redis-server was not found/.test(error.message) &&
        /apt-get install redis-server/.test(error.message),
    );
  });

  it('a server that cannot start reports its own log', async () => {
    await assert.rejects(
      RedisServer.start({ args: ['--no-such-option', 'x'] }),
      /exited \(code 1\) before answering.*no-such-option/i,
    );
  });
});
