/**
 * Extraction of fenced code blocks from model text.
 *
 * A block opens with a line of three or more backticks (or tildes) and an optional label, and closes with a line of
 * at least as many of the same character. The program is the LAST block labelled python (`python`, `py`, `python3`,
 * `py3`) or javascript (`javascript`, `js`, `node`, `nodejs`, `mjs`); when there is none, the last UNLABELLED block
 * (taken as python). Blocks with other labels (`text`, `cpp`, ...) are never programs.
 */
import type { ProgramLanguage } from '@troupe/kernel';

/** A fenced block found in a text. */
export interface FencedBlock {
  /** The label after the opening fence, lower-cased ('' when none). */
  readonly label: string;
  /** The lines between the fences, joined with newlines. */
  readonly content: string;
  /** Whether a closing fence was found. */
  readonly closed: boolean;
}

/** Languages a program can be written in (the kernel's). */
export type { ProgramLanguage };

/** Maps a block label to a program language (undefined when the label names something else). */
export function languageOfLabel(label: string): ProgramLanguage | undefined {
  const l = label.trim().toLowerCase();
  if (l === '' || l === 'python' || l === 'py' || l === 'python3' || l === 'py3') return 'python';
  if (l === 'javascript' || l === 'js' || l === 'node' || l === 'nodejs' || l === 'mjs') return 'javascript';
  return undefined;
}

/** Finds every fenced block of a text, in order (an unclosed last block is returned with `closed: false`). */
export function fencedBlocks(text: string): FencedBlock[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const blocks: FencedBlock[] = [];
  let open: { fence: string; label: string; body: string[] } | null = null;
  for (const line of lines) {
    if (open === null) {
      const m = /^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$/.exec(line);
      if (m) open = { fence: m[1]!, label: m[2]!.toLowerCase(), body: [] };
      continue;
    }
    const close = /^[ \t]{0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
    if (close && close[1]![0] === open.fence[0] && close[1]!.length >= open.fence.length) {
      blocks.push({ label: open.label, content: open.body.join('\n'), closed: true });
      open = null;
    } else {
      open.body.push(line);
    }
  }
  if (open) blocks.push({ label: open.label, content: open.body.join('\n'), closed: false });
  return blocks;
}

/** The program found in a text, or why there is none. */
export type ExtractResult =
  | { readonly ok: true; readonly language: ProgramLanguage; readonly source: string }
  | { readonly ok: false; readonly error: string };

/** Longest program accepted, in characters. */
export const MAX_PROGRAM_CHARS = 100_000;

/**
 * Extracts the program of a reply (see the module comment for the rule). The source ends with exactly one newline.
 */
export function extractProgram(text: string): ExtractResult {
  if (typeof text !== 'string') return { ok: false, error: 'the reply is not text' };
  const blocks = fencedBlocks(text);
  const closed = blocks.filter((b) => b.closed);
  const labelled = closed.filter((b) => b.label !== '' && languageOfLabel(b.label) !== undefined);
  const chosen = labelled.at(-1) ?? closed.filter((b) => b.label === '').at(-1);
  if (!chosen) {
    if (closed.length > 0) {
      return {
        ok: false,
        error: `no python or javascript code block: the code blocks are labelled ${[...new Set(closed.map((b) => b.label))].map((l) => `\`\`\`${l}`).join(', ')}; write the program in a \`\`\`python block`,
      };
    }
    if (blocks.length > 0)
      return { ok: false, error: 'the code block is not closed: end the program with a line of three backticks (```)' };
    return { ok: false, error: 'no fenced code block found: put the whole program between ```python and ``` lines' };
  }
  const source = chosen.content.replace(/\s+$/, '');
  if (source.trim() === '') return { ok: false, error: 'the code block is empty' };
  if (source.length > MAX_PROGRAM_CHARS)
    return { ok: false, error: `the program is longer than ${MAX_PROGRAM_CHARS} characters` };
  return { ok: true, language: languageOfLabel(chosen.label)!, source: `${source}\n` };
}
