/**
 * A local OpenAI-compatible server for the tests: node:http on 127.0.0.1, a free port. It answers GET /v1/models
 * with a recorded model list and POST /v1/chat/completions with the replies queued by the test, in order, and
 * records every request it gets.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted answer: a JSON body with a status, a dropped connection, or a request held until the client leaves. */
export type Reply =
  | {
      readonly status?: number;
      readonly headers?: Record<string, string>;
      readonly body: unknown;
      readonly together?: number;
    }
  | { readonly reset: true }
  | { readonly hold: true };

/** A request the server got. */
export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown> | undefined;
}

export class ReplayServer {
  readonly requests: SeenRequest[] = [];
  /** Replies to POST /v1/chat/completions, taken in order. */
  readonly replies: Reply[] = [];
  /** The reply when the queue is empty (default: a 500 saying so). */
  fallback: Reply | undefined;
  /** Most chat requests in flight at once. */
  maxInFlight = 0;
  private inFlight = 0;
  private readonly held: (() => void)[] = [];
  private constructor(
    private readonly server: Server,
    public models: unknown,
  ) {}

  static async start(models: unknown): Promise<ReplayServer> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () =>
        self.answer(req.method ?? '', req.url ?? '', req.headers, Buffer.concat(chunks).toString('utf8'), res, req),
      );
    });
    const self = new ReplayServer(server, models); // the handler above runs only once the server listens
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return self;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** The chat requests' bodies, in arrival order. */
  get chatBodies(): Record<string, unknown>[] {
    return this.requests.filter((r) => r.url === '/v1/chat/completions').map((r) => r.body!);
  }

  private answer(
    method: string,
    url: string,
    headers: IncomingHttpHeaders,
    text: string,
    res: import('node:http').ServerResponse,
    req: import('node:http').IncomingMessage,
  ): void {
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
    this.requests.push({ method, url, headers, body });
    const json = (status: number, value: unknown, extra: Record<string, string> = {}): void => {
      res.writeHead(status, { 'content-type': 'application/json', ...extra });
      res.end(JSON.stringify(value));
    };
    if (method === 'GET' && url === '/v1/models') return json(200, this.models);
    if (method !== 'POST' || url !== '/v1/chat/completions')
      return json(404, { error: { message: `no route ${method} ${url}`, type: 'invalid_request_error', code: 404 } });
    const reply = this.replies.shift() ?? this.fallback;
    if (!reply)
      return json(500, { error: { message: 'the test queued no reply for this request', type: 'server_error' } });
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    const done = (): void => {
      this.inFlight--;
    };
    if ('reset' in reply) {
      done();
      req.socket.destroy();
      return;
    }
    if ('hold' in reply) {
      res.on('close', done);
      return;
    }
    const send = (): void => {
      done();
      json(reply.status ?? 200, reply.body, reply.headers);
    };
    // `together: k`: answer once k such requests are in flight at the same time (then all of them).
    if (reply.together === undefined) return setImmediate(send) as unknown as void;
    this.held.push(send);
    if (this.held.length >= reply.together) this.held.splice(0).forEach((f) => f());
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
