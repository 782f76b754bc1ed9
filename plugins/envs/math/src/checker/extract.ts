/**
 * Answer extraction: the content of the last `\boxed{...}` (or `\fbox{...}`, or `\boxed x`) in a model's text, and
 * the last printed line of a program's output.
 */

/** The commands whose argument is a final answer. */
const BOX_COMMANDS = ['\\boxed', '\\fbox'] as const;

/**
 * Scans a balanced `{...}` group that starts at `open` (which must index a `{`). Escaped braces (`\{`, `\}`) do not
 * count. Returns the index of the matching `}`, or -1 when the group never closes.
 */
export function matchBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === '{') depth++;
    else if (ch === '}') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/** The argument of a box command that starts at `start` (the index of its backslash), or undefined if malformed. */
function boxArgument(text: string, start: number, command: string): string | undefined {
  let i = start + command.length;
  // `\boxedx` is another command name, not a box.
  if (i < text.length && /[A-Za-z]/.test(text[i]!)) return undefined;
  while (i < text.length && (text[i] === ' ' || text[i] === '\t')) i++;
  if (i >= text.length) return undefined;
  if (text[i] === '{') {
    const close = matchBrace(text, i);
    if (close < 0) return undefined;
    return text.slice(i + 1, close).trim();
  }
  if (i === start + command.length) return undefined; // `\boxed5` without a space is not LaTeX for a box
  // `\boxed 5`: the argument runs to the next whitespace or `$`.
  const m = /^[^\s$]+/.exec(text.slice(i));
  return m ? m[0].replace(/[.,;]+$/, '') : undefined;
}

/**
 * The content of the LAST well-formed `\boxed{...}`, `\fbox{...}` or `\boxed x` in `text` (balanced braces, escaped
 * braces ignored), trimmed. Undefined when there is none. A later malformed box (never closed) is skipped in favour of
 * the last well-formed one.
 */
export function extractLastBoxed(text: string): string | undefined {
  const starts: { index: number; command: string }[] = [];
  for (const command of BOX_COMMANDS) {
    let from = 0;
    for (;;) {
      const index = text.indexOf(command, from);
      if (index < 0) break;
      starts.push({ index, command });
      from = index + command.length;
    }
  }
  starts.sort((x, y) => y.index - x.index);
  for (const { index, command } of starts) {
    const arg = boxArgument(text, index, command);
    if (arg !== undefined) return arg;
  }
  return undefined;
}

/**
 * The last non-empty printed line of a program's stdout, trimmed (CRLF and trailing blank lines tolerated).
 * Undefined when the program printed nothing but whitespace.
 */
export function lastPrintedLine(stdout: string): string | undefined {
  const lines = stdout
    .split(/\r?\n|\r/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  return lines.length > 0 ? lines[lines.length - 1] : undefined;
}

/**
 * The answer a program printed: its last printed line; when that line holds a `\boxed{}`, its content.
 * Undefined when the program printed nothing.
 */
export function extractProgramAnswer(stdout: string): string | undefined {
  const line = lastPrintedLine(stdout);
  if (line === undefined) return undefined;
  return extractLastBoxed(line) ?? line;
}
