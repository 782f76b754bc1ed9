/**
 * The viewer's HTTP server (Fastify): the page and its bundle, and a JSON API over a {@link RunFolder}. Each API call
 * first indexes what the run appended since the last one, so a page polling it follows a run that is still writing.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { compareOutcomes, creditCells, queryGroups, stepSummaries } from '../common/queries.js';
import type { GroupQuery } from '../common/types.js';
import { readAppAssets, renderPage, type AppAssets } from './assets.js';
import { RunFolder, RunFolderError } from './run-folder.js';
import { TraceFileError } from './trace-index.js';

/** Options of {@link startViewer}. */
export interface ViewerOptions {
  /** Port (0: a free one). Default 0. */
  readonly port?: number;
  /** Interface to listen on. Default 127.0.0.1. */
  readonly host?: string;
  /** The bundle to serve (default: the built dist/app). */
  readonly assets?: AppAssets;
}

/** A running viewer. */
export interface RunningViewer {
  /** The page's URL. */
  readonly url: string;
  readonly run: RunFolder;
  close(): Promise<void>;
}

const traceParam = { type: 'string', minLength: 1 } as const;
const stepParam = { type: 'integer', minimum: 0 } as const;

/** The Fastify app over a run folder (not listening yet; `inject` works for tests). */
export function buildServer(run: RunFolder, assets: AppAssets): FastifyInstance {
  const app = Fastify({ logger: false, ajv: { customOptions: { coerceTypes: true, removeAdditional: false } } });
  const title = run.dir.split('/').at(-1) ?? 'run';

  app.setErrorHandler((err, _req, reply) => {
    if (err instanceof RunFolderError) return reply.code(404).send({ error: err.message });
    if (err instanceof TraceFileError) return reply.code(422).send({ error: err.message });
    const e = err as { validation?: unknown; statusCode?: number; message: string };
    if (e.validation) return reply.code(400).send({ error: e.message });
    return reply.code(e.statusCode ?? 500).send({ error: e.message });
  });

  app.get('/', async (_req, reply) => reply.type('text/html; charset=utf-8').send(renderPage(title)));
  app.get('/app.js', async (_req, reply) => reply.type('text/javascript; charset=utf-8').send(assets.js));
  app.get('/app.css', async (_req, reply) => reply.type('text/css; charset=utf-8').send(assets.css));

  app.get('/api/overview', async () => run.overview());
  // what a live page polls: cheap, and it changes whenever the run writes
  app.get('/api/status', async () => run.status());

  app.get<{ Querystring: { trace: string } }>(
    '/api/steps',
    {
      schema: {
        querystring: {
          type: 'object',
          required: ['trace'],
          properties: { trace: traceParam },
          additionalProperties: false,
        },
      },
    },
    async (req) => {
      const t = await run.trace(req.query.trace);
      return stepSummaries(t.groups, t.outcomes());
    },
  );

  app.get<{ Querystring: GroupQuery & { trace: string } }>(
    '/api/groups',
    {
      schema: {
        querystring: {
          type: 'object',
          required: ['trace'],
          additionalProperties: false,
          properties: {
            trace: traceParam,
            step: stepParam,
            seat: { type: 'string' },
            turn: { type: 'integer', minimum: 0 },
            failed: { type: 'boolean' },
            malformed: { type: 'boolean' },
            zeroVariance: { type: 'boolean' },
            sort: { enum: ['id', 'spread', 'meanReward', 'maxAbsAdvantage', 'turn', 'seat'] },
            desc: { type: 'boolean' },
            offset: { type: 'integer', minimum: 0 },
            limit: { type: 'integer', minimum: 1, maximum: 1000 },
          },
        },
      },
    },
    async (req) => {
      const { trace, ...q } = req.query;
      const t = await run.trace(trace);
      // an evaluation trace's records have no step: its groups are asked for without one
      return queryGroups(t.groups, t.kind === 'eval' ? { ...q, step: q.step === undefined ? undefined : null } : q);
    },
  );

  app.get<{ Querystring: { trace: string; step?: number } }>(
    '/api/credit',
    {
      schema: {
        querystring: {
          type: 'object',
          required: ['trace'],
          properties: { trace: traceParam, step: stepParam },
          additionalProperties: false,
        },
      },
    },
    async (req) => creditCells((await run.trace(req.query.trace)).groups, req.query.step),
  );

  app.get<{ Querystring: { trace: string; id: string; step?: number } }>(
    '/api/episode',
    {
      schema: {
        querystring: {
          type: 'object',
          required: ['trace', 'id'],
          properties: { trace: traceParam, id: { type: 'string', minLength: 1 }, step: stepParam },
          additionalProperties: false,
        },
      },
    },
    async (req, reply) => {
      const t = await run.trace(req.query.trace);
      const records = await t.episode(req.query.id, t.kind === 'eval' ? null : req.query.step);
      if (!records)
        return reply.code(404).send({
          error: `episode ${req.query.id}${req.query.step !== undefined ? ` of step ${req.query.step}` : ''}: not in ${req.query.trace}`,
        });
      return records;
    },
  );

  app.get<{ Querystring: { a: string; b: string } }>(
    '/api/compare',
    {
      schema: {
        querystring: {
          type: 'object',
          required: ['a', 'b'],
          properties: { a: traceParam, b: traceParam },
          additionalProperties: false,
        },
      },
    },
    async (req) => {
      const [a, b] = await Promise.all([run.trace(req.query.a), run.trace(req.query.b)]);
      return compareOutcomes(req.query.a, a.outcomes(), req.query.b, b.outcomes());
    },
  );

  return app;
}

/**
 * Serves the viewer over a run folder (or one trace file) and resolves once it listens.
 * @throws RunFolderError for a path that is not a run; AppNotBuiltError when the bundle is missing.
 */
export async function startViewer(path: string, options: ViewerOptions = {}): Promise<RunningViewer> {
  const run = new RunFolder(path);
  const app = buildServer(run, options.assets ?? readAppAssets());
  const host = options.host ?? '127.0.0.1';
  await app.listen({ port: options.port ?? 0, host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0);
  const shown = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  return { url: `http://${shown}:${port}/`, run, close: () => app.close() };
}
