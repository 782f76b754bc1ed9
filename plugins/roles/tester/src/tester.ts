/**
 * The tester role (`tester-v0`, action type `unit-tests`): writes unit tests for a stdin/stdout problem.
 *
 * Output format, one or more of:
 *
 * ````
 * **Test Input:**
 * ```
 * 1 2
 * ```
 * **Test Output:**
 * ```
 * 3
 * ```
 * ````
 *
 * Parsing is lenient about the header: bold/italic/heading markers, a test number, `Input`/`Test Input`/
 * `Test Case 2 Input`, `Output`/`Expected Output`/`Test Output`, with or without a colon. Each header must be
 * followed by a fenced block (any label, any fence length), or carry a one-line value after its colon
 * (`**Test Input:** 1 2`); text between header and block is ignored. An input block
 * is paired with the next output block; an input without an output is dropped. Block contents become the test's
 * input and output with exactly one trailing newline. Empty replies, replies without a complete pair, and garbage are
 * invalid moves with an error that states the format.
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

/** One unit test. */
export interface UnitTest {
  /** Fed to standard input. */
  readonly input: string;
  /** The exact expected standard output. */
  readonly output: string;
}

/** The `unit-tests` action. */
export interface UnitTestsAction {
  /** The tests, in reply order. */
  readonly tests: readonly UnitTest[];
}

/** The tester's config. */
export interface TesterConfig {
  /** Tests kept from one reply (more are ignored; default 16). */
  readonly maxTests: number;
  /** How many tests the prompt asks for (default "3 to 5"). */
  readonly askFor: string;
}

/** Longest test input or output kept (characters); longer tests are dropped. */
export const MAX_TEST_CHARS = 20_000;

/** JSON schema of the tester's config (also in schemas/tester.config.json). */
export const TESTER_CONFIG_SCHEMA: JsonSchema = readConfigSchema(
  new URL('../schemas/tester.config.json', import.meta.url),
);

const FORMAT_HELP =
  'write each test as a line **Test Input:** followed by a fenced ``` block, then a line **Test Output:** followed by a fenced ``` block';

type Token = { kind: 'header'; which: 'input' | 'output' } | { kind: 'block'; content: string; closed: boolean };

/** Classifies a line as an input/output header, or returns undefined. */
export function headerKind(line: string): 'input' | 'output' | undefined {
  const bare = line
    .replace(/[*_#>`]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
  if (bare.length > 40) return undefined;
  const m =
    /^(?:(?:unit )?test(?: case)?(?: #?\d+)? )?(?:#?\d+[.)]? )?(input|expected output|output)(?: #?\d+)? ?:?$/.exec(
      bare,
    );
  if (!m) return undefined;
  return m[1] === 'input' ? 'input' : 'output';
}

/**
 * A header with its value on the same line (`**Test Input:** 1 2`, `Output: 3`, `Input: \`5\``): the value after the
 * colon is a one-line block. Returns undefined for anything else.
 */
export function inlineHeader(line: string): { which: 'input' | 'output'; value: string } | undefined {
  const m =
    /^\s*(?:#+\s*)?(?:[*_]{1,2})?\s*((?:unit\s+)?test(?:\s+case)?(?:\s*#?\d+)?\s+)?(input|expected\s+output|output)(?:\s*#?\d+)?\s*:\s*(?:[*_]{1,2}(?=\s|$))?\s*(.*?)\s*$/i.exec(
      line,
    );
  if (!m || m[3] === undefined || m[3] === '' || m[3].startsWith('```') || m[3].startsWith('~~~')) return undefined;
  const value = m[3].replace(/^`([^`]*)`$/, '$1');
  if (value.trim() === '') return undefined;
  return { which: /input/i.test(m[2]!) ? 'input' : 'output', value };
}

function tokenize(text: string): Token[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const tokens: Token[] = [];
  let open: { fence: string; body: string[] } | null = null;
  for (const line of lines) {
    if (open) {
      const close = /^[ \t]{0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
      if (close && close[1]![0] === open.fence[0] && close[1]!.length >= open.fence.length) {
        tokens.push({ kind: 'block', content: open.body.join('\n'), closed: true });
        open = null;
      } else {
        open.body.push(line);
      }
      continue;
    }
    const fence = /^[ \t]{0,3}(`{3,}|~{3,})[ \t]*[^\s`]*[^`]*$/.exec(line);
    if (fence) {
      open = { fence: fence[1]!, body: [] };
      continue;
    }
    const which = headerKind(line);
    if (which) {
      tokens.push({ kind: 'header', which });
      continue;
    }
    const inline = inlineHeader(line);
    if (inline)
      tokens.push({ kind: 'header', which: inline.which }, { kind: 'block', content: inline.value, closed: true });
  }
  if (open) tokens.push({ kind: 'block', content: open.body.join('\n'), closed: false });
  return tokens;
}

function withNewline(content: string): string {
  return `${content.replace(/\n+$/, '')}\n`;
}

/**
 * Parses unit tests from a reply (see the module comment).
 * @returns the tests, or an error when there is no complete test
 */
export function parseUnitTests(
  text: string,
  maxTests = 16,
): { ok: true; tests: UnitTest[]; dropped: number } | { ok: false; error: string } {
  if (typeof text !== 'string' || text.trim() === '') return { ok: false, error: `the reply is empty; ${FORMAT_HELP}` };
  const tokens = tokenize(text);
  const tests: UnitTest[] = [];
  let expect: 'input' | 'output' | null = null;
  let input: string | null = null;
  let dropped = 0;
  let unclosed = false;
  for (const t of tokens) {
    if (t.kind === 'header') {
      if (t.which === 'input' && input !== null) dropped++; // an input that never got an output
      if (t.which === 'input') input = null;
      expect = t.which;
      continue;
    }
    if (!t.closed) {
      unclosed = true;
      continue;
    }
    if (expect === 'input') {
      input = withNewline(t.content);
    } else if (expect === 'output' && input !== null) {
      const output = withNewline(t.content);
      if (input.length > MAX_TEST_CHARS || output.length > MAX_TEST_CHARS) dropped++;
      else tests.push({ input, output });
      input = null;
    }
    expect = null;
  }
  if (input !== null) dropped++;
  if (tests.length === 0) {
    const why = unclosed
      ? 'a code block is not closed'
      : tokens.some((t) => t.kind === 'header')
        ? 'no test has both an input block and an output block'
        : 'no test found';
    return { ok: false, error: `${why}; ${FORMAT_HELP}` };
  }
  if (tests.length > maxTests) dropped += tests.length - maxTests;
  return { ok: true, tests: tests.slice(0, maxTests), dropped };
}

/** Renders tests in the exact output format. */
export function renderUnitTests(tests: readonly UnitTest[]): string {
  const strip = (s: string): string => (s.endsWith('\n') ? s.slice(0, -1) : s);
  return tests
    .map(
      (t) => `**Test Input:**\n\`\`\`\n${strip(t.input)}\n\`\`\`\n**Test Output:**\n\`\`\`\n${strip(t.output)}\n\`\`\``,
    )
    .join('\n\n');
}

/** Renders an observation as the user message: task, current state, then each context block under its label. */
export function renderObservation(observation: Observation): string {
  const parts = [observation.task.trim(), `## Current state\n${observation.state}`];
  for (const c of observation.context) parts.push(`## ${c.label}\n${c.text}`);
  return parts.join('\n\n');
}

/** The tester role. */
export class TesterRole implements Role<UnitTestsAction> {
  /** @inheritdoc */
  readonly id = 'tester-v0';
  /** @inheritdoc */
  readonly produces: readonly string[] = Object.freeze(['unit-tests']);
  /** The resolved config. */
  readonly config: TesterConfig;

  /** @param config raw role config */
  constructor(config: Record<string, unknown> = {}) {
    const maxTests = config['maxTests'] ?? 16;
    if (typeof maxTests !== 'number' || !Number.isInteger(maxTests) || maxTests < 1) {
      throw new Error(`tester role config maxTests: must be a positive integer, got ${JSON.stringify(maxTests)}`);
    }
    this.config = { maxTests, askFor: typeof config['askFor'] === 'string' ? config['askFor'] : '3 to 5' };
  }

  /** @inheritdoc */
  prompt(observation: Observation, seat: SeatContext): ChatMessage[] {
    const system =
      `You are the ${seat.seat} of a team that solves programming problems. Write unit tests for the problem: each test ` +
      'is an input given on standard input and the EXACT output a correct program prints. Work out every expected output ' +
      `carefully from the problem statement; a wrong expected output is a wrong test. Write ${this.config.askFor} tests, small ` +
      'ones and edge cases, that would catch a wrong program.\n\nUse exactly this format for every test:\n' +
      '**Test Input:**\n```\n<input>\n```\n**Test Output:**\n```\n<expected output>\n```';
    return [
      { role: 'system', content: system },
      { role: 'user', content: `${renderObservation(observation)}\n\nWrite your unit tests in the format above.` },
    ];
  }

  /** @inheritdoc */
  parse(text: string, _seat: SeatContext): Move<UnitTestsAction> {
    const parsed = parseUnitTests(text, this.config.maxTests);
    if (!parsed.ok) return { kind: 'invalid', error: parsed.error, text };
    return {
      kind: 'action',
      action: { tests: parsed.tests },
      text,
      ...(parsed.dropped > 0 ? { details: { droppedTests: parsed.dropped } } : {}),
    };
  }

  /** @inheritdoc */
  render(action: UnitTestsAction, _seat: SeatContext): string {
    return renderUnitTests(action.tests);
  }

  /** @inheritdoc */
  grammar(_seat: SeatContext): OutputGrammar {
    const one = '\\*\\*Test Input:\\*\\*\\n```\\n[^`]*\\n```\\n\\*\\*Test Output:\\*\\*\\n```\\n[^`]*\\n```';
    return { kind: 'regex', pattern: `${one}(?:\\n\\n${one})*` };
  }
}

/** `tester-v0`. */
@injectable()
export class TesterRoleContribution implements RoleContribution {
  /** @inheritdoc */
  readonly id = 'tester-v0';
  /** @inheritdoc */
  readonly description = 'Tester: writes unit tests as **Test Input:** / **Test Output:** fenced blocks';
  /** @inheritdoc */
  readonly produces: readonly string[] = Object.freeze(['unit-tests']);
  /** @inheritdoc */
  readonly configSchema = TESTER_CONFIG_SCHEMA;

  /** @inheritdoc */
  create(config: Record<string, unknown>): TesterRole {
    return new TesterRole(config);
  }
}
