/**
 * What a game role answering with one `#### …` line shares (see `findAnswerLine`): the config keys `includeTask`,
 * `terse` and `systemPrompt`, the system prompt with its names substituted, the user message, parsing into a move, and
 * the grammar of a canonical answer. A role states its prompt, its format and how it reads and writes an answer.
 */
import type { ChatMessage, Move, Observation, OutputGrammar, Role, SeatContext } from '@troupe/kernel';
import { ConfigReader } from './config.js';
import { renderUserMessage } from './user-message.js';

/** The config keys every answer-line role has. */
export interface AnswerRoleConfig {
  /** Include the task statement in the user message. Default true. */
  readonly includeTask: boolean;
  /**
   * The user message is only the state and `label: text` context lines: no task, headings or answer-format line (for
   * tiny byte-level models, where every character is a token). Default false.
   */
  readonly terse: boolean;
  /** Replacement system prompt (`{seat}` and the role's own names substituted). */
  readonly systemPrompt?: string;
}

/** The defaults of {@link AnswerRoleConfig} (`systemPrompt` absent: the role's built-in prompt). */
export const ANSWER_ROLE_DEFAULTS = Object.freeze({ includeTask: true, terse: false, systemPrompt: undefined });

/** A reader of a role's config (`ID: roleConfig.KEY …` errors) over `defaults`, which must hold the {@link ANSWER_ROLE_DEFAULTS} keys. */
export function roleConfigReader(id: string, defaults: object, raw: Record<string, unknown> = {}): ConfigReader {
  return new ConfigReader(id, defaults, raw, 'roleConfig');
}

/** The {@link AnswerRoleConfig} keys, checked. */
export function readAnswerRoleConfig(r: ConfigReader): AnswerRoleConfig {
  return { includeTask: r.boolean('includeTask'), terse: r.boolean('terse'), ...r.optionalString('systemPrompt') };
}

/** A role answering with one `#### …` line: it states its prompt, its answer format and how it reads and writes answers. */
export abstract class AnswerLineRole<A, C extends AnswerRoleConfig> implements Role<A> {
  constructor(
    readonly id: string,
    readonly produces: readonly string[],
    readonly config: C,
  ) {}

  /** The built-in system prompt for a seat, before substitution. */
  protected abstract builtInPrompt(seat: SeatContext): string;
  /** The names substituted in the system prompt besides `{seat}` (e.g. `{ size: 4 }`). */
  protected abstract substitutions(): Readonly<Record<string, string | number>>;
  /** The answer format for a seat, quoted in the user message and in every parse error. */
  protected abstract format(seat: SeatContext): string;
  /** Reads an answer (never throws): the action, or why the text is not one. */
  protected abstract read(
    text: string,
    seat: SeatContext,
  ): { readonly ok: true; readonly action: A } | { readonly ok: false; readonly error: string };
  /** The regex (whole completion) of a canonical answer for a seat. */
  protected abstract pattern(seat: SeatContext): string;
  /** {@inheritDoc Role.render} */
  abstract render(action: A, seat: SeatContext): string;

  /** The system prompt for a seat: the config's or the built-in one, with `{seat}` and the role's names substituted. */
  systemPrompt(seat: SeatContext): string {
    let text = (this.config.systemPrompt ?? this.builtInPrompt(seat)).replaceAll('{seat}', seat.seat);
    for (const [name, value] of Object.entries(this.substitutions()))
      text = text.replaceAll(`{${name}}`, String(value));
    return text;
  }

  /** {@inheritDoc Role.prompt} */
  prompt(observation: Observation, seat: SeatContext): ChatMessage[] {
    const { includeTask, terse } = this.config;
    return [
      { role: 'system', content: this.systemPrompt(seat) },
      { role: 'user', content: renderUserMessage(observation, { includeTask, terse, format: this.format(seat) }) },
    ];
  }

  /** {@inheritDoc Role.parse} */
  parse(text: string, seat: SeatContext): Move<A> {
    const read = this.read(text, seat);
    return read.ok ? { kind: 'action', action: read.action, text } : { kind: 'invalid', error: read.error, text };
  }

  /** {@inheritDoc Role.grammar} */
  grammar(seat: SeatContext): OutputGrammar {
    return { kind: 'regex', pattern: this.pattern(seat) };
  }
}
