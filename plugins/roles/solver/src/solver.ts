/**
 * `solver-v0`: a role whose seat reasons and gives its final answer in `\boxed{}` (the action type `answer`).
 */
import type {
  ChatMessage,
  JsonSchema,
  Move,
  Observation,
  OutputGrammar,
  Role,
  RoleContribution,
  SeatContext,
} from '@troupe/kernel';
import { injectable, readConfigSchema } from '@troupe/kernel';

/** The contribution id. */
export const SOLVER_ID = 'solver-v0';

/** The solver's action: its final answer, the content of its last `\boxed{}`. */
export interface SolverAnswer {
  /** The answer text (LaTeX or plain), trimmed. */
  readonly answer: string;
}

/** Output grammars the solver can ask a constrained decoder to enforce. */
export type SolverGrammar = 'none' | 'integer' | 'number';

/** The validated config of the solver. */
export interface SolverConfig {
  /** Longest accepted answer, in characters. Default 200. */
  readonly maxAnswerChars: number;
  /**
   * Grammar for constrained decoding: `none` (default, free-form reasoning), `integer` (the whole completion is
   * `\boxed{-?digits}`) or `number` (also `a/b` and decimals). Useful for small models on the generated problem set.
   */
  readonly grammar: SolverGrammar;
  /** Replacement system prompt (`{seat}` substituted). */
  readonly systemPrompt?: string;
}

/** The default config. */
export const DEFAULT_SOLVER_CONFIG: SolverConfig = Object.freeze({ maxAnswerChars: 200, grammar: 'none' });

/** The instruction that ends every prompt. */
export const SOLVER_INSTRUCTION = 'Reason step by step, then put your final answer in \\boxed{}.';

/** The built-in system prompt; `{seat}` is substituted. */
export const SOLVER_SYSTEM_PROMPT = [
  'You are the {seat} of a team that solves math problems.',
  'Read the problem, the current state and what your teammates did (a program and its output may be shown; they can be wrong).',
  'Reason carefully, then end your reply with your final answer in \\boxed{}, e.g. \\boxed{42} or \\boxed{\\frac{3}{4}}.',
  'The last \\boxed{} in your reply is your answer.',
].join('\n');

/** Index of the `}` closing the `{` at `open` (escaped braces ignored), or −1. */
function matchBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return i;
  }
  return -1;
}

/**
 * The content of the last well-formed `\boxed{...}` / `\fbox{...}` / `\boxed x` in `text`, trimmed; undefined when
 * there is none. (The same rules as `@troupe/env-math`'s `extractLastBoxed`; the role keeps its own copy so that it
 * depends on no environment.)
 */
export function lastBoxed(text: string): string | undefined {
  const re = /\\(boxed|fbox)(?![A-Za-z])/g;
  const starts: number[] = [];
  const lengths: number[] = [];
  for (let m = re.exec(text); m; m = re.exec(text)) {
    starts.push(m.index);
    lengths.push(m[0].length);
  }
  for (let k = starts.length - 1; k >= 0; k--) {
    let i = starts[k]! + lengths[k]!;
    const afterCommand = i;
    while (text[i] === ' ' || text[i] === '\t') i++;
    if (i >= text.length) continue;
    if (text[i] === '{') {
      const close = matchBrace(text, i);
      if (close >= 0) return text.slice(i + 1, close).trim();
      continue;
    }
    if (i === afterCommand) continue;
    const m = /^[^\s$]+/.exec(text.slice(i));
    if (m) return m[0].replace(/[.,;]+$/, '');
  }
  return undefined;
}

/** A printable excerpt of a piece of text for error messages. */
function quote(text: string, max = 40): string {
  return JSON.stringify(text.length > max ? `…${text.slice(text.length - max)}` : text);
}

function resolveConfig(raw: Record<string, unknown>): SolverConfig {
  const known = ['maxAnswerChars', 'grammar', 'systemPrompt'];
  for (const key of Object.keys(raw)) {
    if (!known.includes(key))
      throw new Error(`${SOLVER_ID}: roleConfig.${key} is not a known key; known keys: ${known.join(', ')}`);
  }
  const c = { ...DEFAULT_SOLVER_CONFIG, ...raw } as Record<string, unknown>;
  if (typeof c.maxAnswerChars !== 'number' || !Number.isInteger(c.maxAnswerChars) || c.maxAnswerChars < 1) {
    throw new Error(
      `${SOLVER_ID}: roleConfig.maxAnswerChars must be a positive integer, got ${JSON.stringify(c.maxAnswerChars)}`,
    );
  }
  if (c.grammar !== 'none' && c.grammar !== 'integer' && c.grammar !== 'number') {
    throw new Error(
      `${SOLVER_ID}: roleConfig.grammar must be "none", "integer" or "number", got ${JSON.stringify(c.grammar)}`,
    );
  }
  if (c.systemPrompt !== undefined && typeof c.systemPrompt !== 'string') {
    throw new Error(`${SOLVER_ID}: roleConfig.systemPrompt must be a string, got ${JSON.stringify(c.systemPrompt)}`);
  }
  return Object.freeze({
    maxAnswerChars: c.maxAnswerChars,
    grammar: c.grammar as SolverGrammar,
    ...(c.systemPrompt === undefined ? {} : { systemPrompt: c.systemPrompt as string }),
  });
}

/** Joins the observation into the user message: task, current state, each context block, then the instruction. */
export function renderSolverObservation(observation: Observation): string {
  const parts = [observation.task.trim(), `Current state:\n${observation.state}`];
  for (const c of observation.context) parts.push(`### ${c.label}\n${c.text}`);
  parts.push(SOLVER_INSTRUCTION);
  return parts.join('\n\n');
}

/** The solver role for one config. */
export class SolverRole implements Role<SolverAnswer> {
  /** {@inheritDoc Role.id} */
  readonly id = SOLVER_ID;
  /** {@inheritDoc Role.produces} */
  readonly produces = Object.freeze(['answer']);
  /** The resolved config. */
  readonly config: SolverConfig;

  /** Builds the role; `config` is filled with defaults and checked. */
  constructor(config: Record<string, unknown> = {}) {
    this.config = resolveConfig(config);
  }

  /** The system prompt for a seat. */
  systemPrompt(seat: SeatContext): string {
    return (this.config.systemPrompt ?? SOLVER_SYSTEM_PROMPT).replaceAll('{seat}', seat.seat);
  }

  /** {@inheritDoc Role.prompt} */
  prompt(observation: Observation, seat: SeatContext): ChatMessage[] {
    return [
      { role: 'system', content: this.systemPrompt(seat) },
      { role: 'user', content: renderSolverObservation(observation) },
    ];
  }

  /** {@inheritDoc Role.parse} The last `\boxed{}`; invalid (with the reason) when there is none, it is empty or too long. */
  parse(text: string, _seat: SeatContext): Move<SolverAnswer> {
    const s = typeof text === 'string' ? text : String(text);
    const answer = lastBoxed(s);
    if (answer === undefined) {
      const unclosed = /\\(boxed|fbox)\s*\{/.test(s);
      const last = s
        .trim()
        .split(/\r?\n/)
        .filter((l) => l.trim())
        .at(-1);
      return {
        kind: 'invalid',
        text: s,
        error: unclosed
          ? 'the \\boxed{ answer is never closed: write \\boxed{ANSWER} with balanced braces'
          : `no \\boxed{} answer found${last === undefined ? ' (empty reply)' : ` (reply ends ${quote(last.trim())})`}: end the reply with \\boxed{ANSWER}`,
      };
    }
    if (answer === '') return { kind: 'invalid', text: s, error: 'the \\boxed{} answer is empty' };
    if (answer.length > this.config.maxAnswerChars) {
      return {
        kind: 'invalid',
        text: s,
        error: `the \\boxed{} answer has ${answer.length} characters, more than maxAnswerChars ${this.config.maxAnswerChars}`,
      };
    }
    return { kind: 'action', action: { answer }, text: s };
  }

  /** {@inheritDoc Role.render} `The final answer is \boxed{A}.` */
  render(action: SolverAnswer, _seat: SeatContext): string {
    return `The final answer is \\boxed{${action.answer}}.`;
  }

  /** {@inheritDoc Role.grammar} Only with `grammar: integer | number`: the whole completion is one `\boxed{}`. */
  grammar(_seat: SeatContext): OutputGrammar | undefined {
    if (this.config.grammar === 'integer') return { kind: 'regex', pattern: '\\\\boxed\\{-?\\d{1,12}\\}' };
    if (this.config.grammar === 'number')
      return { kind: 'regex', pattern: '\\\\boxed\\{-?\\d{1,12}(?:/\\d{1,12}|\\.\\d{1,12})?\\}' };
    return undefined;
  }
}

/** The config schema (schemas/solver.config.json). */
export const SOLVER_CONFIG_SCHEMA: JsonSchema = readConfigSchema(
  new URL('../schemas/solver.config.json', import.meta.url),
);

/** The `solver-v0` contribution. */
@injectable()
export class SolverContribution implements RoleContribution {
  /** {@inheritDoc RoleContribution.id} */
  readonly id = SOLVER_ID;
  /** {@inheritDoc RoleContribution.description} */
  readonly description = 'Solver: reasons and gives the final answer in \\boxed{}';
  /** {@inheritDoc RoleContribution.produces} */
  readonly produces = Object.freeze(['answer']);
  /** {@inheritDoc RoleContribution.configSchema} */
  readonly configSchema = SOLVER_CONFIG_SCHEMA;
  /** {@inheritDoc RoleContribution.create} */
  create(config: Record<string, unknown>): SolverRole {
    return new SolverRole(config);
  }
}
