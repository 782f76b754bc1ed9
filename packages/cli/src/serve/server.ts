/**
 * The OpenAI-compatible HTTP server of `troupe serve` (Fastify): `GET /v1/models`, `POST /v1/chat/completions`,
 * `POST /v1/completions`, `GET /health`. Bodies are validated by Fastify's ajv schemas; every error is OpenAI-style
 * JSON `{ error: { message, type, param, code } }` (400 bad request, 404 unknown model or route, 503 queue full).
 * Requests are decoded in batches by `Batcher`. Streaming (`stream: true`) answers Server-Sent Events, a chunk per
 * token as it is sampled, and `data: [DONE]`.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import type { GeneratedSample, GenerationItem, Tokenizer } from '@troupe/lm';
import { Batcher, QueueFullError, type GenerateBatch, type ServedModel } from './batcher.js';

/** Options of `createServer`. */
export interface ServeOptions<M extends ServedModel> {
  readonly model: M;
  readonly tokenizer: Tokenizer;
  /** The model id clients name (`model` in requests, `/v1/models`). */
  readonly modelName: string;
  /** `@troupe/lm`'s `generateBatch` (or another runtime's, for its model). */
  readonly generateBatch: GenerateBatch<M>;
  /** Most requests waiting for a batch before 503. Default 256. */
  readonly maxQueue?: number;
  /** Most requests decoded together. Default 32. */
  readonly maxBatch?: number;
  /** Default `max_tokens`. Default 256. */
  readonly defaultMaxTokens?: number;
}

const samplingProps = {
  model: { type: 'string', minLength: 1 },
  n: { type: 'integer', minimum: 1, maximum: 64 },
  seed: { type: 'integer' },
  stop: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 4 }, { type: 'null' }] },
  max_tokens: { type: ['integer', 'null'], minimum: 1 },
  max_completion_tokens: { type: ['integer', 'null'], minimum: 1 },
  temperature: { type: ['number', 'null'], minimum: 0, maximum: 2 },
  top_p: { type: ['number', 'null'], exclusiveMinimum: 0, maximum: 1 },
  top_k: { type: ['integer', 'null'], minimum: -1 },
  stream: { type: ['boolean', 'null'] },
  stream_options: { type: ['object', 'null'], properties: { include_usage: { type: 'boolean' } } },
  user: { type: 'string' },
  return_token_ids: { type: ['boolean', 'null'] },
} as const;

const chatSchema = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    ...samplingProps,
    messages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['role', 'content'],
        properties: {
          role: { type: 'string', enum: ['system', 'developer', 'user', 'assistant'] },
          content: {
            anyOf: [
              { type: 'string' },
              {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['type', 'text'],
                  properties: { type: { const: 'text' }, text: { type: 'string' } },
                },
              },
            ],
          },
        },
      },
    },
    logprobs: { type: ['boolean', 'null'] },
    top_logprobs: { type: ['integer', 'null'], minimum: 0, maximum: 0 },
    chat_template_kwargs: { type: ['object', 'null'] },
  },
} as const;

const completionSchema = {
  type: 'object',
  required: ['model', 'prompt'],
  properties: {
    ...samplingProps,
    prompt: {
      anyOf: [
        { type: 'string', minLength: 1 },
        { type: 'array', minItems: 1, maxItems: 1, items: { type: 'string', minLength: 1 } },
      ],
    },
    logprobs: { type: ['integer', 'null'], minimum: 0, maximum: 0 },
    echo: { type: 'boolean', const: false },
  },
} as const;

interface SamplingBody {
  model: string;
  n?: number;
  seed?: number;
  stop?: string | string[] | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  top_k?: number | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  return_token_ids?: boolean | null;
}
interface ChatBody extends SamplingBody {
  messages: { role: string; content: string | { type: 'text'; text: string }[] }[];
  logprobs?: boolean | null;
  chat_template_kwargs?: Record<string, unknown> | null;
}
interface CompletionBody extends SamplingBody {
  prompt: string | string[];
  logprobs?: number | null;
}

/** An error answered as OpenAI-style JSON. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

function sendError(reply: FastifyReply, e: ApiError): FastifyReply {
  return reply.code(e.status).send({ error: { message: e.message, type: e.type, param: e.param, code: e.code } });
}

/** Builds the server (not listening yet). */
export function createServer<M extends ServedModel>(opts: ServeOptions<M>): FastifyInstance {
  const { model, tokenizer: tok, modelName } = opts;
  const batcher = new Batcher(model, tok, opts.generateBatch, {
    maxQueue: opts.maxQueue ?? 256,
    maxBatch: opts.maxBatch ?? 32,
  });
  const created = Math.floor(Date.now() / 1000);
  const app = Fastify({
    logger: false,
    bodyLimit: 8 * 1024 * 1024,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
  });

  app.setErrorHandler((err: FastifyError, _req, reply) => {
    if (err instanceof ApiError) return sendError(reply, err);
    if (err instanceof QueueFullError)
      return sendError(reply, new ApiError(503, err.message, 'server_overloaded', null, 'queue_full'));
    if (err.validation) {
      const v = err.validation[0];
      const param = v?.instancePath
        ? v.instancePath.slice(1).replace(/\//g, '.')
        : ((v?.params as { missingProperty?: string } | undefined)?.missingProperty ?? null);
      return sendError(
        reply,
        new ApiError(400, `invalid request: ${err.message}`, 'invalid_request_error', param, 'invalid_value'),
      );
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return sendError(reply, new ApiError(err.statusCode, err.message, 'invalid_request_error'));
    }
    return sendError(reply, new ApiError(500, `generation failed: ${err.message}`, 'server_error'));
  });
  app.setNotFoundHandler((req, reply) =>
    sendError(
      reply,
      new ApiError(404, `no route ${req.method} ${req.url}`, 'invalid_request_error', null, 'not_found'),
    ),
  );

  app.get('/health', async () => ({ status: 'ok', model: modelName, waiting: batcher.waiting }));
  app.get('/v1/models', async () => ({
    object: 'list',
    data: [{ id: modelName, object: 'model', created, owned_by: 'troupe' }],
  }));
  app.get<{ Params: { id: string } }>('/v1/models/:id', async (req) => {
    checkModel(req.params.id, 'id');
    return { id: modelName, object: 'model', created, owned_by: 'troupe' };
  });

  function checkModel(name: string, param = 'model'): void {
    if (name !== modelName)
      throw new ApiError(
        404,
        `The model \`${name}\` does not exist; this server serves "${modelName}"`,
        'invalid_request_error',
        param,
        'model_not_found',
      );
  }

  function item(body: SamplingBody, promptIds: number[]): GenerationItem {
    if (promptIds.length === 0)
      throw new ApiError(400, 'the prompt encodes to no tokens', 'invalid_request_error', 'prompt');
    const stop = body.stop == null ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop;
    const maxNewTokens = body.max_completion_tokens ?? body.max_tokens ?? opts.defaultMaxTokens ?? 256;
    const limit = model.config.maxPositionEmbeddings;
    if (limit && promptIds.length + maxNewTokens > limit) {
      throw new ApiError(
        400,
        `the prompt (${promptIds.length} tokens) plus max_tokens (${maxNewTokens}) exceeds the model's context of ${limit} tokens`,
        'invalid_request_error',
        'max_tokens',
        'context_length_exceeded',
      );
    }
    return {
      promptIds,
      options: {
        maxNewTokens,
        n: body.n ?? 1,
        seed: body.seed ?? 0,
        temperature: body.temperature ?? 1,
        topP: body.top_p ?? 1,
        topK: body.top_k != null && body.top_k > 0 ? body.top_k : 0,
        ...(stop.length ? { stop: stop.filter((s) => s.length > 0) } : {}),
      },
    };
  }

  const usage = (promptIds: number[], samples: GeneratedSample[]): Record<string, number> => {
    const completion = samples.reduce((a, s) => a + s.tokenIds.length, 0);
    return {
      prompt_tokens: promptIds.length,
      completion_tokens: completion,
      total_tokens: promptIds.length + completion,
    };
  };
  const eos = new Set([...model.config.eosTokenIds, ...(tok.eosTokenId !== undefined ? [tok.eosTokenId] : [])]);
  /** The per-token texts of a sample (special tokens and a final EOS give ''). */
  const pieces = (s: GeneratedSample): string[] => {
    const out: string[] = [];
    let prev = '';
    for (let i = 1; i <= s.tokenIds.length; i++) {
      const t = tok.decode(s.tokenIds.slice(0, i).filter((id) => !eos.has(id)));
      out.push(t.startsWith(prev) ? t.slice(prev.length) : t);
      prev = t;
    }
    return out;
  };
  /** How a streamed answer renders its chunks. */
  interface StreamShape {
    /** Chunks sent before the first token (chat: each choice's role). */
    readonly opening: object[];
    /** A chunk for one sampled token of choice `index`: the text it releases, at `offset` in the completion. */
    token(index: number, delta: string, token: number, logprob: number, offset: number): object;
    /** The last chunk of choice `index`: the text still held back, and why it stopped. */
    finish(index: number, delta: string, reason: string, offset: number): object;
    /** The usage chunk (`stream_options.include_usage`). */
    usage(u: Record<string, number>): object;
  }

  /**
   * Streams one request as Server-Sent Events while its batch decodes: a chunk per sampled token, then each choice's
   * finish chunk, the usage chunk when asked and `data: [DONE]`. With stop strings, text that could be the start of
   * one is held back until it is not (the chunks add up to the stop-cut text); an error after the headers are sent
   * arrives as an `error` event.
   */
  async function streamAnswer(
    reply: FastifyReply,
    gen: GenerationItem,
    promptIds: number[],
    shape: StreamShape,
    includeUsage: boolean,
  ): Promise<FastifyReply> {
    const stops = gen.options.stop ?? [];
    const hold = stops.length > 0 ? Math.max(...stops.map((x) => x.length)) - 1 : 0;
    const rows = Array.from({ length: gen.options.n ?? 1 }, () => ({ ids: [] as number[], sent: '' }));
    const res = reply.raw;
    const send = (c: object): void => {
      if (!res.destroyed) res.write(`data: ${JSON.stringify(c)}\n\n`);
    };
    const done = batcher.submit(gen, (j, token, logprob) => {
      const r = rows[j]!;
      if (!eos.has(token)) r.ids.push(token);
      let text = tok.decode(r.ids);
      let cut = -1;
      for (const x of stops) {
        const k = x ? text.indexOf(x) : -1;
        if (k >= 0 && (cut < 0 || k + x.length < cut)) cut = k + x.length;
      }
      text = cut >= 0 ? text.slice(0, cut) : text.slice(0, text.length - hold);
      if (text.endsWith('\uFFFD')) text = text.slice(0, -1); // an incomplete UTF-8 sequence waits for its next byte
      const delta = text.length > r.sent.length && text.startsWith(r.sent) ? text.slice(r.sent.length) : '';
      r.sent += delta;
      send(shape.token(j, delta, token, logprob, r.sent.length - delta.length));
    });
    reply.hijack();
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    for (const c of shape.opening) send(c);
    try {
      const samples = await done;
      samples.forEach((smp, j) => {
        const sent = rows[j]!.sent;
        send(
          shape.finish(j, smp.text.startsWith(sent) ? smp.text.slice(sent.length) : '', smp.finishReason, sent.length),
        );
      });
      if (includeUsage) send(shape.usage(usage(promptIds, samples)));
      res.end('data: [DONE]\n\n');
    } catch (err) {
      send({
        error: {
          message: `generation failed: ${(err as Error).message}`,
          type: 'server_error',
          param: null,
          code: null,
        },
      });
      res.end();
    }
    return reply;
  }

  app.post<{ Body: ChatBody }>('/v1/chat/completions', { schema: { body: chatSchema } }, async (req, reply) => {
    const body = req.body;
    checkModel(body.model);
    const messages = body.messages.map((m) => ({
      role: (m.role === 'developer' ? 'system' : m.role) as 'system' | 'user' | 'assistant',
      content: typeof m.content === 'string' ? m.content : m.content.map((p) => p.text).join(''),
    }));
    const text = tok.applyChatTemplate(messages, { templateArgs: body.chat_template_kwargs ?? {} });
    const promptIds = tok.encode(text);
    const gen = item(body, promptIds);
    const base = { id: `chatcmpl-${randomUUID()}`, created: Math.floor(Date.now() / 1000), model: modelName };
    const lp = (s: GeneratedSample, p: string[]): object | null =>
      body.logprobs
        ? {
            content: s.logprobs.map((l, i) => ({
              token: p[i]!,
              logprob: l,
              bytes: [...Buffer.from(p[i]!, 'utf8')],
              top_logprobs: [],
            })),
          }
        : null;
    if (body.stream) {
      const chunk = (choice: object): object => ({ ...base, object: 'chat.completion.chunk', choices: [choice] });
      return streamAnswer(
        reply,
        gen,
        promptIds,
        {
          opening: Array.from({ length: gen.options.n ?? 1 }, (_, index) =>
            chunk({ index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }),
          ),
          token: (index, content, id, logprob) => {
            const piece = tok.decode([id]);
            const tokLp = body.logprobs
              ? { content: [{ token: piece, logprob, bytes: [...Buffer.from(piece, 'utf8')], top_logprobs: [] }] }
              : null;
            return chunk({
              index,
              delta: { content },
              logprobs: tokLp,
              finish_reason: null,
              ...(body.return_token_ids ? { token_ids: [id] } : {}),
            });
          },
          finish: (index, content, reason) =>
            chunk({ index, delta: content ? { content } : {}, logprobs: null, finish_reason: reason }),
          usage: (u) => ({ ...base, object: 'chat.completion.chunk', choices: [], usage: u }),
        },
        body.stream_options?.include_usage === true,
      );
    }
    const samples = await batcher.submit(gen);
    return {
      ...base,
      object: 'chat.completion',
      ...(body.return_token_ids ? { prompt_token_ids: promptIds } : {}),
      choices: samples.map((s, index) => ({
        index,
        message: { role: 'assistant', content: s.text },
        logprobs: lp(s, body.logprobs ? pieces(s) : []),
        finish_reason: s.finishReason,
        ...(body.return_token_ids ? { token_ids: s.tokenIds } : {}),
      })),
      usage: usage(promptIds, samples),
    };
  });

  app.post<{ Body: CompletionBody }>('/v1/completions', { schema: { body: completionSchema } }, async (req, reply) => {
    const body = req.body;
    checkModel(body.model);
    const prompt = typeof body.prompt === 'string' ? body.prompt : body.prompt[0]!;
    const promptIds = tok.encode(prompt);
    const gen = item(body, promptIds);
    const base = { id: `cmpl-${randomUUID()}`, created: Math.floor(Date.now() / 1000), model: modelName };
    const wantLp = body.logprobs != null;
    const lp = (s: GeneratedSample, p: string[]): object | null => {
      if (!wantLp) return null;
      const offsets: number[] = [];
      let at = prompt.length;
      for (const piece of p) {
        offsets.push(at);
        at += piece.length;
      }
      return { tokens: p, token_logprobs: s.logprobs, top_logprobs: p.map(() => ({})), text_offset: offsets };
    };
    if (body.stream) {
      const chunk = (choice: object): object => ({ ...base, object: 'text_completion', choices: [choice] });
      return streamAnswer(
        reply,
        gen,
        promptIds,
        {
          opening: [],
          token: (index, text, id, logprob, offset) =>
            chunk({
              index,
              text,
              finish_reason: null,
              logprobs: wantLp
                ? {
                    tokens: [tok.decode([id])],
                    token_logprobs: [logprob],
                    top_logprobs: [{}],
                    text_offset: [prompt.length + offset],
                  }
                : null,
            }),
          finish: (index, text, reason) => chunk({ index, text, logprobs: null, finish_reason: reason }),
          usage: (u) => ({ ...base, object: 'text_completion', choices: [], usage: u }),
        },
        body.stream_options?.include_usage === true,
      );
    }
    const samples = await batcher.submit(gen);
    return {
      ...base,
      object: 'text_completion',
      ...(body.return_token_ids ? { prompt_token_ids: promptIds } : {}),
      choices: samples.map((s, index) => ({
        index,
        text: s.text,
        logprobs: lp(s, wantLp ? pieces(s) : []),
        finish_reason: s.finishReason,
        ...(body.return_token_ids ? { token_ids: s.tokenIds } : {}),
      })),
      usage: usage(promptIds, samples),
    };
  });

  return app;
}
