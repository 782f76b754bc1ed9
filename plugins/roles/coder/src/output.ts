/**
 * Parsers that turn a program's printed output into an environment action (the coder as the games' proposer, the
 * paper's tool agent).
 *
 * - `moves`: the LAST bracketed list in the output (`[U, R, D]`, `['U','R']`), or else the last non-empty line
 *   (`U R D`, `U,R,D`, `URD`). Tokens are U/D/L/R or up/down/left/right in any case; quotes are ignored. `[]` is an
 *   empty move list.
 * - `answer`: the last non-empty line, trimmed.
 * - any other action type: the last non-empty line (or else the whole output) parsed as JSON.
 */

/** A move letter. */
export type Direction = 'U' | 'D' | 'L' | 'R';

/** Result of parsing a program's output. */
export type OutputParse<A> = { readonly ok: true; readonly action: A } | { readonly ok: false; readonly error: string };

const WORDS: Record<string, Direction> = { u: 'U', up: 'U', d: 'D', down: 'D', l: 'L', left: 'L', r: 'R', right: 'R' };

/** Longest output line shown inside an error message. */
const SHOWN = 80;

function lastLine(stdout: string): string | undefined {
  return stdout
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .at(-1);
}

function shown(text: string): string {
  return JSON.stringify(text.length > SHOWN ? `${text.slice(0, SHOWN)}…` : text);
}

/** Parses a move list from a program's output (see the module comment). */
export function parseMovesOutput(stdout: string): OutputParse<Direction[]> {
  const text = stdout.trim();
  if (text === '') return { ok: false, error: 'the program printed nothing; print the moves, e.g. [U, R, D]' };
  const lists = [...text.matchAll(/\[([^[\]]*)\]/g)];
  const candidate = lists.length > 0 ? lists.at(-1)![1]! : lastLine(text)!;
  let tokens = candidate
    .split(/[\s,;]+/)
    .map((t) => t.replace(/^["'`]+|["'`]+$/g, ''))
    .filter((t) => t !== '');
  if (tokens.length === 1 && tokens[0]!.length > 1 && /^[UDLR]+$/.test(tokens[0]!)) tokens = [...tokens[0]!];
  const moves: Direction[] = [];
  for (const token of tokens) {
    const move = WORDS[token.toLowerCase()];
    if (!move)
      return {
        ok: false,
        error: `cannot read ${shown(token)} as a move (use U, D, L or R) in the printed output ${shown(candidate)}`,
      };
    moves.push(move);
  }
  return { ok: true, action: moves };
}

/** Parses an answer: the last non-empty printed line. */
export function parseAnswerOutput(stdout: string): OutputParse<string> {
  const line = lastLine(stdout);
  if (line === undefined)
    return { ok: false, error: 'the program printed nothing; print the final answer on the last line' };
  return { ok: true, action: line };
}

/** Parses a JSON action: the last non-empty line, or else the whole output. */
export function parseJsonOutput(stdout: string): OutputParse<unknown> {
  const line = lastLine(stdout);
  if (line === undefined)
    return { ok: false, error: 'the program printed nothing; print the action as JSON on the last line' };
  for (const candidate of [line, stdout.trim()]) {
    try {
      return { ok: true, action: JSON.parse(candidate) as unknown };
    } catch {
      // try the next candidate
    }
  }
  return { ok: false, error: `the last printed line ${shown(line)} is not valid JSON` };
}

/** The output parser for an action type. */
export function outputParserFor(actionType: string): (stdout: string) => OutputParse<unknown> {
  if (actionType === 'moves') return parseMovesOutput;
  if (actionType === 'answer') return parseAnswerOutput;
  return parseJsonOutput;
}

/** Python source of a program that prints `action` in the format its parser reads (for render and warm starts). */
export function programPrinting(actionType: string, action: unknown): string {
  if (actionType === 'moves') return `moves = ${JSON.stringify(action)}\nprint("[" + ", ".join(moves) + "]")\n`;
  if (actionType === 'answer') return `print(${JSON.stringify(String(action))})\n`;
  return `import json\nprint(json.dumps(json.loads(${JSON.stringify(JSON.stringify(action))})))\n`;
}
