/**
 * Reading one chat-completion response into Troupe completions. The OpenAI-compatible servers differ in what they
 * return besides the text:
 * - vLLM: `n` choices; with `return_token_ids: true` the prompt's ids at the top level (`prompt_token_ids`) and each
 *   choice's ids (`token_ids`); `logprobs.content[]` entries `{ token, logprob, bytes, top_logprobs }`; the stop string
 *   that ended a choice in `stop_reason`.
 * - SGLang: `n` choices; the same `logprobs.content[]` layout; the stop string in `matched_stop`.
 * - llama.cpp (llama-server): one choice; `logprobs.content[]` entries carry the token id as `id`.
 * - Ollama: one choice; `logprobs.content[]` without ids (recent versions), or no log-probs at all.
 */
import type { Completion } from '@troupe/kernel';

/** One `logprobs.content[]` entry as the servers above write it. */
export interface RawTokenLogprob {
  readonly token?: string;
  readonly logprob?: number;
  /** llama.cpp's token id. */
  readonly id?: number;
}

/** One choice of a chat-completion response (the fields Troupe reads). */
export interface RawChoice {
  readonly index?: number;
  readonly message?: { readonly content?: string | null } | null;
  readonly finish_reason?: string | null;
  readonly logprobs?: { readonly content?: readonly RawTokenLogprob[] | null } | null;
  /** vLLM (`return_token_ids`). */
  readonly token_ids?: readonly number[] | null;
  /** Some vLLM versions put the prompt's ids on the choice. */
  readonly prompt_token_ids?: readonly number[] | null;
  /** vLLM: the stop string (or token id) that ended the choice. */
  readonly stop_reason?: string | number | null;
  /** SGLang: the stop string (or token id) that ended the choice. */
  readonly matched_stop?: string | number | null;
}

/** A chat-completion response (the fields Troupe reads). */
export interface RawChatResponse {
  readonly choices?: readonly RawChoice[];
  /** vLLM (`return_token_ids`). */
  readonly prompt_token_ids?: readonly number[] | null;
  readonly usage?: { readonly prompt_tokens?: number; readonly completion_tokens?: number } | null;
}

function intArray(v: unknown): number[] | undefined {
  return Array.isArray(v) && v.every((x) => Number.isInteger(x)) ? [...(v as number[])] : undefined;
}

/**
 * The completion of one choice. Token ids come from vLLM's `token_ids`, else from llama.cpp's `logprobs.content[].id`;
 * log-probs from `logprobs.content[].logprob` when there is one per token id (otherwise none: a completion's log-probs
 * are empty or as long as its token ids). Stop strings are kept in the text, as every Troupe policy does: a server
 * that names the stop string it matched (vLLM, SGLang) gets it appended back.
 */
export function completionOfChoice(
  response: RawChatResponse,
  choice: RawChoice,
  stop: readonly string[] | undefined,
): Completion {
  let text = choice.message?.content ?? '';
  const finishReason = choice.finish_reason === 'length' ? 'length' : 'stop';
  const matched =
    typeof choice.stop_reason === 'string'
      ? choice.stop_reason
      : typeof choice.matched_stop === 'string'
        ? choice.matched_stop
        : undefined;
  if (finishReason === 'stop' && matched !== undefined && stop?.includes(matched) && !text.endsWith(matched))
    text += matched;
  const entries = choice.logprobs?.content ?? [];
  const tokenIds =
    intArray(choice.token_ids) ?? (entries.length > 0 ? intArray(entries.map((e) => e.id)) : undefined) ?? [];
  const values = entries.map((e) => e.logprob);
  const logprobs =
    tokenIds.length > 0 &&
    values.length === tokenIds.length &&
    values.every((x) => typeof x === 'number' && !Number.isNaN(x))
      ? (values as number[])
      : [];
  const promptIds = intArray(response.prompt_token_ids) ?? intArray(choice.prompt_token_ids) ?? [];
  return { text, promptIds, tokenIds, logprobs, finishReason };
}

/** The choices of a response in index order. */
export function choicesOf(response: RawChatResponse): RawChoice[] {
  return [...(response.choices ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
}
