/**
 * Reading a role's answer line: the game roles end their reply with one `#### …` line, and the LAST such line is the
 * answer (a model may think aloud first, or correct itself).
 */

/** A piece of untrusted text quoted for an error message: JSON-escaped, cut after `max` characters. */
export function quoteExcerpt(text: string, max = 40): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
}

/** A parse error of an answer: the `format` it should have, and what was `found` instead. */
export function answerMismatch(format: string, found: string): { readonly ok: false; readonly error: string } {
  return { ok: false, error: `expected "${format}", found ${found}` };
}

/** The result of {@link findAnswerLine}. */
export type AnswerLine = { readonly ok: true; readonly line: string } | { readonly ok: false; readonly error: string };

/**
 * The last line of `text` that starts with `####` (trimmed), or an error quoting the expected `format` and what was
 * found instead (an empty answer, or the last non-empty line). Never throws, whatever `text` is.
 */
export function findAnswerLine(text: string, format: string): AnswerLine {
  const lines = (typeof text === 'string' ? text : String(text)).split(/\r?\n/);
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i]!.trim();
    if (l.startsWith('####')) return { ok: true, line: l };
  }
  const last = lines
    .map((l) => l.trim())
    .filter((l) => l.length > 0)
    .at(-1);
  return answerMismatch(
    format,
    last === undefined ? 'an empty answer' : `no "####" line (last line ${quoteExcerpt(last)})`,
  );
}
