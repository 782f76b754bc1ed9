/**
 * The `openai` policy: a model served by any OpenAI-compatible server. Inference only — its weights live on the
 * server — so it plays in `run`, `eval`, `experiment` and as a frozen partner in `train` (`algorithm.freeze`).
 */
import { setMaxListeners } from 'node:events';
import OpenAI from 'openai';
import {
  deriveSeed,
  PluginError,
  type Completion,
  type GenerateCallOptions,
  type GenerationRequest,
  type OutputGrammar,
  type Policy,
} from '@troupe/kernel';
import { RESERVED_BODY_FIELDS, type OpenAiPolicyConfig } from './config.js';
import { choicesOf, completionOfChoice, type RawChatResponse } from './response.js';

const PLUGIN = '@troupe/policy-openai';

/** Tokens the policy's requests used, as the server reported them (`usage`). */
export interface OpenAiUsage {
  requests: number;
  promptTokens: number;
  completionTokens: number;
}

/** Options for tests and embedders. */
export interface OpenAiPolicyOptions {
  /** The fetch implementation the client uses (default: the global one). */
  readonly fetch?: typeof fetch;
}

function abortError(signal: AbortSignal): Error {
  if (signal.reason instanceof Error && signal.reason.name === 'AbortError') return signal.reason;
  const e = new Error('The generation was aborted.');
  e.name = 'AbortError';
  return e;
}

/** The innermost cause of a connection error (`connect ECONNREFUSED 127.0.0.1:8000` rather than `fetch failed`), as `: <message>`. */
function rootCause(err: Error): string {
  let e: unknown = err.cause;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? `: ${e.message}` : '';
}

/** The request fields that constrain the output to a seat's grammar, in the server's dialect. */
function grammarFields(
  grammar: OutputGrammar | undefined,
  dialect: OpenAiPolicyConfig['constrainedDecoding'],
): Record<string, unknown> {
  if (!grammar || dialect === 'none') return {};
  if (dialect === 'vllm')
    return {
      structured_outputs: grammar.kind === 'regex' ? { regex: grammar.pattern } : { choice: [...grammar.choices] },
    };
  const escape = (t: string): string => t.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return { regex: grammar.kind === 'regex' ? grammar.pattern : `(?:${grammar.choices.map(escape).join('|')})` };
}

/** Runs at most `limit` tasks at once, in the order they were queued. */
class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await task();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

/** A policy answering through an OpenAI-compatible `/chat/completions` endpoint. Create it with {@link createOpenAiPolicy}. */
export class OpenAiPolicy implements Policy {
  readonly kind = 'openai';
  /** Inference-only policies stay at version 0. */
  readonly version = 0;
  /** Read by the trainer: this policy cannot be trained, only played (frozen, in `algorithm.freeze`). */
  readonly inferenceOnly = true;
  /** Tokens used so far, as the server reported them. */
  readonly usage: OpenAiUsage = { requests: 0, promptTokens: 0, completionTokens: 0 };
  // An ES private field: never enumerated, never serialized, so the key inside the client cannot reach a trace or log.
  readonly #client: OpenAI;
  readonly #gate: Gate;

  private constructor(
    readonly name: string,
    readonly config: OpenAiPolicyConfig,
    client: OpenAI,
  ) {
    this.#client = client;
    this.#gate = new Gate(config.maxConcurrency);
  }

  /** Why the trainer cannot train it (its error message names the policy and this reason). */
  get inferenceOnlyReason(): string {
    return `its weights live on the server at ${this.config.baseUrl} (model "${this.config.model}")`;
  }

  /** Builds the client and checks, once, that the server answers and serves the model. */
  static async create(
    name: string,
    config: OpenAiPolicyConfig,
    options: OpenAiPolicyOptions = {},
  ): Promise<OpenAiPolicy> {
    const where = `policy '${name}' (openai)`;
    for (const key of Object.keys(config.extraBody)) {
      if (RESERVED_BODY_FIELDS.includes(key)) {
        throw new PluginError(PLUGIN, `${where}: extraBody.${key} is a field the policy sets itself`, {
          hint: `remove policies.${name}.extraBody.${key}; set sampling in the seat's sampling block, chat template options in chatTemplateKwargs`,
        });
      }
    }
    let apiKey: string | null = null;
    if (config.apiKeyEnv !== undefined) {
      apiKey = process.env[config.apiKeyEnv] ?? '';
      if (apiKey === '') {
        throw new PluginError(
          PLUGIN,
          `${where}: apiKeyEnv names the environment variable ${config.apiKeyEnv}, which is not set`,
          {
            hint: `export ${config.apiKeyEnv}=<your key> before running, or remove apiKeyEnv for a server without a key`,
          },
        );
      }
    }
    const client = new OpenAI({
      // The client insists on a key; without one it gets a placeholder that the null header below keeps from being sent.
      apiKey: apiKey ?? 'no-key',
      baseURL: config.baseUrl.replace(/\/+$/, ''),
      timeout: config.timeoutMs,
      maxRetries: config.retries,
      // Without a key send no Authorization header at all (and never OPENAI_API_KEY to a server the spec names).
      ...(apiKey === null ? { defaultHeaders: { Authorization: null } } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    const policy = new OpenAiPolicy(name, config, client);
    await policy.checkServer();
    return policy;
  }

  /** GET /models: one clear error when the server is unreachable, refuses the key, or does not serve the model. */
  private async checkServer(): Promise<void> {
    const { baseUrl, model } = this.config;
    let served: string[];
    try {
      const page = await this.#client.models.list();
      served = page.data.map((m) => m.id);
    } catch (err) {
      throw this.failure(
        err,
        'GET /models',
        `check that the server is running and that policies.${this.name}.baseUrl is its OpenAI API root (http://host:port/v1)`,
      );
    }
    if (!served.includes(model)) {
      throw new PluginError(
        PLUGIN,
        `policy '${this.name}' (openai): the server at ${baseUrl} does not serve model "${model}" (it serves: ${served.join(', ') || 'nothing'})`,
        {
          hint: `set policies.${this.name}.model to one of the served names, or start the server with that model name`,
        },
      );
    }
  }

  /** A user-facing error for a failed call, without the key (the client's errors carry the server's message only). */
  private failure(err: unknown, what: string, hint: string): Error {
    const where = `policy '${this.name}' (openai)`;
    const { baseUrl, retries, timeoutMs } = this.config;
    const tries = retries > 0 ? ` (after ${retries} ${retries === 1 ? 'retry' : 'retries'})` : '';
    if (err instanceof OpenAI.APIConnectionTimeoutError) {
      return new PluginError(PLUGIN, `${where}: ${what} to ${baseUrl} timed out after ${timeoutMs} ms${tries}`, {
        hint: `raise timeoutMs or check the server's load; ${hint}`,
      });
    }
    if (err instanceof OpenAI.APIConnectionError) {
      const cause = rootCause(err);
      return new PluginError(PLUGIN, `${where}: cannot reach the server at ${baseUrl}${cause}${tries}`, { hint });
    }
    if (err instanceof OpenAI.APIError && err.status !== undefined) {
      const auth = err.status === 401 || err.status === 403;
      return new PluginError(
        PLUGIN,
        `${where}: ${what} failed: the server at ${baseUrl} answered ${err.status}: ${err.message}${err.status === 429 || err.status >= 500 ? tries : ''}`,
        {
          hint: auth
            ? `check the key in the environment variable ${this.config.apiKeyEnv ?? '(none: set apiKeyEnv)'}`
            : hint,
        },
      );
    }
    return err instanceof Error ? err : new Error(String(err));
  }

  /** Samples `n` completions per request; rejects with an `AbortError` when the signal fires. */
  async generate(requests: readonly GenerationRequest[], options: GenerateCallOptions = {}): Promise<Completion[][]> {
    const outer = options.signal;
    outer?.throwIfAborted();
    // One signal for this call's HTTP requests (each listens to it): the caller's signal gets one listener per call,
    // and when one request fails for good the others are cancelled rather than left running.
    const inner = new AbortController();
    setMaxListeners(0, inner.signal);
    const relay = (): void => inner.abort(outer!.reason);
    outer?.addEventListener('abort', relay, { once: true });
    try {
      return await Promise.all(requests.map((r) => this.sample(r, inner.signal)));
    } finally {
      outer?.removeEventListener('abort', relay);
      inner.abort();
    }
  }

  private async sample(request: GenerationRequest, signal: AbortSignal): Promise<Completion[]> {
    if (!Number.isInteger(request.n) || request.n < 1)
      throw new Error(`Policy '${this.name}' (openai): n must be an integer >= 1, got ${request.n}.`);
    if (this.config.supportsN) {
      const response = await this.call(request, request.n, request.seed, signal);
      const choices = choicesOf(response);
      if (choices.length !== request.n) {
        throw new PluginError(
          PLUGIN,
          `policy '${this.name}' (openai): asked the server at ${this.config.baseUrl} for n=${request.n} choices and got ${choices.length}`,
          {
            hint: `the server does not support n: set policies.${this.name}.supportsN: false (K parallel requests with distinct seeds)`,
          },
        );
      }
      return choices.map((c) => completionOfChoice(response, c, request.sampling.stop));
    }
    // K parallel requests, the first with the request's seed, the others with seeds derived from it.
    const seeds = Array.from({ length: request.n }, (_, i) =>
      i === 0 ? request.seed : deriveSeed('openai-sample', request.seed, i),
    );
    return Promise.all(
      seeds.map(async (seed) => {
        const response = await this.call(request, 1, seed, signal);
        const [choice] = choicesOf(response);
        if (!choice)
          throw new PluginError(
            PLUGIN,
            `policy '${this.name}' (openai): the server at ${this.config.baseUrl} answered with no choices`,
          );
        return completionOfChoice(response, choice, request.sampling.stop);
      }),
    );
  }

  /** The request body: the seat's sampling, the policy's options, then the server-specific `extraBody`. */
  body(request: GenerationRequest, n: number, seed: number): Record<string, unknown> {
    const { sampling } = request;
    const c = this.config;
    return {
      model: c.model,
      messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
      temperature: sampling.temperature,
      top_p: sampling.topP,
      max_tokens: sampling.maxTokens,
      seed,
      ...(c.supportsN ? { n } : {}),
      ...(sampling.stop && sampling.stop.length > 0 ? { stop: [...sampling.stop] } : {}),
      ...(sampling.topK > 0 ? { top_k: sampling.topK } : {}),
      ...(c.logprobs ? { logprobs: true } : {}),
      ...(c.returnTokenIds ? { return_token_ids: true } : {}),
      ...(Object.keys(c.chatTemplateKwargs).length > 0 ? { chat_template_kwargs: c.chatTemplateKwargs } : {}),
      ...grammarFields(request.grammar, c.constrainedDecoding),
      ...c.extraBody,
    };
  }

  private async call(
    request: GenerationRequest,
    n: number,
    seed: number,
    signal: AbortSignal,
  ): Promise<RawChatResponse> {
    return this.#gate.run(async () => {
      if (signal.aborted) throw abortError(signal);
      try {
        const body = this.body(request, n, seed) as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
        const response = (await this.#client.chat.completions.create(body, { signal })) as unknown as RawChatResponse;
        this.usage.requests++;
        this.usage.promptTokens += response.usage?.prompt_tokens ?? 0;
        this.usage.completionTokens += response.usage?.completion_tokens ?? 0;
        return response;
      } catch (err) {
        if (signal.aborted || err instanceof OpenAI.APIUserAbortError) throw abortError(signal);
        throw this.failure(err, 'POST /chat/completions', 'check the server log');
      }
    });
  }
}

/** Creates a `kind: openai` policy (config validated and default-filled by the plugin host). */
export function createOpenAiPolicy(
  name: string,
  config: OpenAiPolicyConfig,
  options?: OpenAiPolicyOptions,
): Promise<OpenAiPolicy> {
  return OpenAiPolicy.create(name, config, options);
}
