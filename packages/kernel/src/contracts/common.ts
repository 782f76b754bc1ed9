/**
 * Shared value types of the four contracts (environment, role, reward, policy).
 * Everything here is plain data: JSON-serialisable so it can travel to worker threads and into traces.
 */

/** The dataset splits every environment generates. Instances of different splits never share content. */
export type Split = 'train' | 'validation' | 'test';

/** All splits, in canonical order. */
export const SPLITS: readonly Split[] = ['train', 'validation', 'test'];

/** A JSON Schema document (draft 2020-12 or draft-07), as accepted by ajv. */
export type JsonSchema = Record<string, unknown>;

/** One chat message, in the OpenAI / Hugging Face chat-template shape. */
export interface ChatMessage {
  /** Who speaks. */
  readonly role: 'system' | 'user' | 'assistant';
  /** The text of the message. */
  readonly content: string;
}

/** A deterministic source of randomness (see `createRng` in `util/rng`). */
export interface Rng {
  /** A float uniformly drawn from [0, 1). */
  next(): number;
  /** An integer uniformly drawn from [0, n). */
  int(n: number): number;
  /** The internal state, to checkpoint and restore the stream exactly. */
  state(): number[];
}

/**
 * What a seat did, as the environment receives it: either a typed action that the role extracted from the model's
 * text, or the reason the text could not be parsed. The environment decides what an invalid move costs.
 */
export type Move<A = unknown> =
  | {
      readonly kind: 'action';
      /** The typed action. */ readonly action: A;
      /** The raw text it came from. */ readonly text: string;
      /** Extra details the role produced while parsing (e.g. the program and its output for a coder). */ readonly details?: Readonly<
        Record<string, unknown>
      >;
    }
  | {
      readonly kind: 'invalid';
      /** Why the text did not parse, for humans and traces. */ readonly error: string;
      /** The raw text. */ readonly text: string;
      readonly details?: Readonly<Record<string, unknown>>;
    };

/** A language the sandbox runs programs in (the coder's programs, the environments' oracle programs). */
export type ProgramLanguage = 'python' | 'javascript';
