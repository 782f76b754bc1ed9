/**
 * Reading the final answer out of a WHOLE model response (and the reference out of a dataset's answer field). One
 * extraction step, shared by the math environment and `troupe verify math`:
 *
 * 1. `<think>…</think>` blocks are dropped (a reasoning model's scratch work is never its answer);
 * 2. the last `\boxed{}` (or `\fbox{}`);
 * 3. (lenient) the last "final answer" phrasing: "The final answer is $x$", "Answer: x", "#### x";
 * 4. a bare answer: the whole text when it is one short line without prose (`x = 1/3 \approx 0.33`, `28%`);
 * 5. (lenient) the last math span: `$…$`, `$$…$$`, `\(…\)`, `\[…\]`;
 * 6. (lenient) the last number.
 *
 * `boxed` mode stops after step 4 (the model must box its answer, or answer with nothing but the answer).
 */
import { extractLastBoxed } from './extract.js';

/** How strictly answers are read: `boxed` (a `\boxed{}` or a bare answer) or `lenient` (every step). */
export type ExtractionMode = 'boxed' | 'lenient';

/** Extraction modes, for schemas and the CLI. */
export const EXTRACTION_MODES: readonly ExtractionMode[] = ['boxed', 'lenient'];

/** Which step found the answer. */
export type AnswerSource = 'boxed' | 'final-answer' | 'bare' | 'math-span' | 'last-number';

/** What {@link extractAnswer} found. */
export interface ExtractedAnswer {
  /** The answer text. */
  readonly answer: string;
  /** The step that found it. */
  readonly source: AnswerSource;
}

/** Most characters of a response that are read (its end: the answer is there); longer responses are cut at the front. */
export const MAX_RESPONSE_CHARS = 200_000;
/** The phrasing, math-span and number steps look at the last this-many characters only. */
const TAIL_CHARS = 4000;
/** Longest bare answer (step 4). */
const MAX_BARE_CHARS = 200;

/**
 * The response without reasoning: every `<think>…</think>` block removed; an unmatched `</think>` drops everything
 * before it; an unclosed `<think>` drops everything after it (the model never finished thinking).
 */
export function stripThinking(text: string): string {
  let s = text.replace(/<think>[\s\S]*?<\/think>/gi, ' ');
  const close = s.toLowerCase().lastIndexOf('</think>');
  if (close >= 0) s = s.slice(close + '</think>'.length);
  const open = s.toLowerCase().indexOf('<think>');
  if (open >= 0) s = s.slice(0, open);
  return s;
}

/** Trims markdown emphasis, surrounding math delimiters and a final period from a phrase-extracted answer. */
function cleanPhrase(raw: string): string {
  let s = raw
    .trim()
    .replace(/^\*+|\*+$/g, '')
    .trim();
  const span = lastMathSpan(s);
  if (span !== undefined && s.replace(/\s/g, '').length <= span.length + 6) return span.trim();
  s = s
    .replace(/^[:\s]+/, '')
    .replace(/[.;,!]+\s*$/, '')
    .replace(/^\*+|\*+$/g, '')
    .trim();
  return s;
}

/** "final answer" phrasings, the last occurrence wins. The value runs to the end of its sentence or line. */
const PHRASES: readonly RegExp[] = [
  /(?:final answer|the answer|answer)\s*(?:is|:|=|would be|will be)\s*:?\s*([^\n]*)/gi,
  /####\s*([^\n]+)/g,
];

/** The answer of the last "final answer" phrasing, or undefined. */
function phraseAnswer(text: string): string | undefined {
  let best: { index: number; value: string } | undefined;
  for (const re of PHRASES) {
    for (const m of text.matchAll(re)) {
      if (!best || m.index! >= best.index) best = { index: m.index!, value: m[1]! };
    }
  }
  if (!best) return undefined;
  // "Final Answer: The final answer is 25." nests one phrasing in another: the innermost holds the answer.
  const inner = phraseAnswer(best.value);
  if (inner !== undefined) return inner;
  // The value ends at the end of the sentence: ". " followed by a capital letter ("... is $5$. I hope it is correct.").
  const sentence = best.value.split(/\.\s+(?=[A-Z])/)[0]!;
  const value = cleanPhrase(sentence);
  return value === '' ? undefined : value;
}

/** The content of the last math span (`$$…$$`, `\[…\]`, `\(…\)`, `$…$`), or undefined. */
export function lastMathSpan(text: string): string | undefined {
  const re = /\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\]|\\\(([\s\S]+?)\\\)|(?<!\\)\$((?:[^$\\]|\\[\s\S])+?)\$/g;
  let last: string | undefined;
  for (const m of text.matchAll(re)) last = m[1] ?? m[2] ?? m[3] ?? m[4];
  return last?.trim() === '' ? undefined : last?.trim();
}

/** The last number (`-12`, `1,234.5`, `3/4`), or undefined. */
function lastNumber(text: string): string | undefined {
  let last: string | undefined;
  for (const m of text.matchAll(/-?\d[\d,]*(?:\.\d+)?(?:\s*\/\s*\d+)?/g)) last = m[0];
  return last?.replace(/,$/, '');
}

/** Whether `text` is a bare answer: one short line, no sentence (at most three plain words). */
export function isBareAnswer(text: string): boolean {
  const s = text.trim();
  if (s === '' || s.length > MAX_BARE_CHARS || /\n/.test(s)) return false;
  if (/[.!?]\s+[A-Z]/.test(s)) return false;
  const wordsOf = (t: string): string[] => t.replace(/\\[A-Za-z]+(\{[^}]*\})?/g, ' ').match(/[A-Za-z]{2,}/g) ?? [];
  // Math written inside delimiters with words around it ("Therefore $x = 5$.") is a sentence: its span is the answer.
  const outside = s.replace(
    /\$\$[\s\S]*?\$\$|\\\[[\s\S]*?\\\]|\\\([\s\S]*?\\\)|(?<!\\)\$(?:[^$\\]|\\[\s\S])*?\$/g,
    ' ',
  );
  if (outside !== s && wordsOf(outside).length > 0) return false;
  // `28 percent`, `12 square units`, `no solution`, `Monday`; not `The total is 5` (a sentence starts with a word).
  return wordsOf(s).length <= (/^[A-Za-z]/.test(s) ? 2 : 3);
}

/**
 * The final answer in a model response, with the step that found it; undefined when `mode` finds none. See the
 * module comment for the steps.
 */
export function extractAnswer(response: string, mode: ExtractionMode = 'lenient'): ExtractedAnswer | undefined {
  let text = String(response);
  if (text.length > MAX_RESPONSE_CHARS) text = text.slice(text.length - MAX_RESPONSE_CHARS);
  text = stripThinking(text);
  const boxed = extractLastBoxed(text);
  if (boxed !== undefined && boxed.trim() !== '') return { answer: boxed, source: 'boxed' };
  const tail = text.length > TAIL_CHARS ? text.slice(text.length - TAIL_CHARS) : text;
  if (mode === 'lenient') {
    const phrase = phraseAnswer(tail);
    if (phrase !== undefined) return { answer: phrase, source: 'final-answer' };
  }
  if (isBareAnswer(text)) return { answer: text.trim(), source: 'bare' };
  if (mode === 'boxed') return undefined;
  const span = lastMathSpan(tail);
  if (span !== undefined) return { answer: span, source: 'math-span' };
  const number = lastNumber(tail);
  return number !== undefined ? { answer: number, source: 'last-number' } : undefined;
}

/**
 * The reference answer in a dataset's answer field or a `--reference` text: a GSM8K solution's `#### n`, a MATH
 * solution's last `\boxed{}`, an OlympiadBench `final_answer` list, or the text itself. A list of one answer is that
 * answer (`["$4$"]` → `4`); a list of several is one answer listing them all (`["$2$", "$3$"]` → `2, 3`: a response
 * must give every one, in any order, as OlympiadBench grades multi-answer problems). JSON and Python list text count
 * as lists.
 */
export function extractReference(reference: string | readonly unknown[]): string {
  if (Array.isArray(reference)) return referenceList(reference);
  const text = String(reference).trim();
  if (text.startsWith('[') && text.endsWith(']')) {
    try {
      const list: unknown = JSON.parse(text);
      // A list of strings; `[0, 1]` (numbers) is an interval, not a list of answers.
      if (Array.isArray(list) && list.length > 0 && list.every((x) => typeof x === 'string'))
        return referenceList(list);
    } catch {
      // Not JSON (an interval such as [0,1], or a list typed with raw LaTeX backslashes: ["$\frac{1}{2}$"]).
      const quoted = /^\[\s*"([\s\S]*)"\s*\]$/.exec(text);
      if (quoted) return referenceList(quoted[1]!.split(/"\s*,\s*"/));
    }
    // A list written by Python (`str(row["final_answer"])` in a CSV or JSON export): ['$4$'], ['$2$', '$3$'].
    const python = /^\[\s*'([\s\S]*)'\s*\]$/.exec(text);
    if (python) return referenceList(python[1]!.split(/'\s*,\s*'/));
  }
  return gsm8kFinalAnswer(text) ?? extractLastBoxed(text) ?? text;
}

/** The final answer of a GSM8K answer field: the text after the last `####`, without thousands commas. */
export function gsm8kFinalAnswer(answer: string): string | undefined {
  const at = answer.lastIndexOf('####');
  if (at < 0) return undefined;
  const final = answer
    .slice(at + 4)
    .trim()
    .replace(/(\d),(?=\d{3}\b)/g, '$1');
  return final === '' ? undefined : final;
}

/** An OlympiadBench-style list of answers as one comma-separated answer (math delimiters dropped). */
function referenceList(list: readonly unknown[]): string {
  return list
    .map((x) =>
      String(x)
        .trim()
        .replace(/^\$+|\$+$/g, '')
        .trim(),
    )
    .filter((x) => x !== '')
    .join(', ');
}

/**
 * `answer` without a trailing `unit` (OlympiadBench names the unit apart from the answer): `3 m/s`, `3\,\text{m/s}`,
 * `3 \mathrm{m/s}` → `3`. Unchanged when it does not end with the unit.
 */
export function stripUnit(answer: string, unit: string): string {
  const u = unit
    .trim()
    .replace(/^\$+|\$+$/g, '')
    .replace(/^\\(?:text|mathrm)\{(.*)\}$/, '$1')
    .trim();
  if (u === '') return answer;
  const escaped = u.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(
    String.raw`(?:\s|\\[,;: ]|~)*(?:\\(?:text|mathrm|mbox)\{\s*${escaped}\s*\}|${escaped})\s*\$?\s*$`,
  );
  const stripped = answer.replace(re, '');
  return stripped.trim() === '' ? answer : stripped;
}
