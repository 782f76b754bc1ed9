/**
 * Grammar mask cost per decoding step, small vocabulary against Qwen3-sized ones:
 *
 *   cd packages/lm && npx tsx --conditions=troupe:source bench/grammar.ts [--steps 32] [--repeat 5] [--json]
 *
 * For each grammar (the project's role grammars and `[\s\S]*`, whose mask is the whole vocabulary) and vocabulary
 * (the tiny byte tokenizer, 259 texts; a synthetic one of 151,669 texts; the real Qwen3 tokenizer's 151,669), one
 * seeded walk of `--steps` tokens, each step `cursor.allowed(budget)` plus `advance`: timed on a fresh grammar (first
 * visits: every new state walks the vocabulary trie) and again on the same grammar (steady state: the kept masks),
 * best of `--repeat`. Prints milliseconds per step and the machine's load (`uptime`) before and after.
 */
import { execFileSync } from 'node:child_process';
import { createRng } from '@troupe/kernel';
import { compileGrammar, GrammarCursor, loadTokenizer, qwen3TokenizerDir, tinyTokenizerDir } from '@troupe/lm';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const STEPS = arg('--steps', 32),
  REPEAT = arg('--repeat', 5);
const json = process.argv.includes('--json');

const GRAMMARS: Record<string, string> = {
  'solver \\boxed{int}': '\\\\boxed\\{-?\\d{1,12}\\}',
  'planner moves': '#### \\[(U|D|L|R)\\d?(,(U|D|L|R)\\d?){0,11}\\]',
  'template MOVES:': 'MOVES:( [UDLR]){1,20}',
  'coder fence': '```(?:python|javascript)\\n[\\s\\S]*\\S[\\s\\S]*\\n```',
  'anything [\\s\\S]*': '[\\s\\S]*',
};

/** 151,669 distinct texts shaped like a BPE vocabulary: bytes, words with and without a leading space, digits, code. */
function syntheticVocab(size: number): string[] {
  const rng = createRng('synthetic-vocab');
  const seen = new Set<string>();
  const out: string[] = [];
  const add = (t: string): void => {
    if (!seen.has(t)) {
      seen.add(t);
      out.push(t);
    }
  };
  for (let c = 32; c < 127; c++) add(String.fromCharCode(c));
  for (const t of ['\n', '\n\n', '\t', '  ', '    ', '```', '\\', '{', '}', '[', ']']) add(t);
  for (let d = 0; d < 1000; d++) add(String(d));
  const letters = 'etaoinshrdlcumwfgypbvkjxqz';
  const punct = ['(', ')', '):', '();', '.', ',', '=', ' =', '==', '->', '::', '//', '#', '"', "'"];
  while (out.length < size) {
    const r = rng.next();
    if (r < 0.05) add(punct[rng.int(punct.length)]! + punct[rng.int(punct.length)]!);
    else if (r < 0.1) add(String.fromCharCode(0x4e00 + rng.int(0x5000)));
    else {
      const len = 2 + Math.floor(-Math.log(1 - rng.next()) * 4);
      let w = r < 0.6 ? ' ' : '';
      for (let i = 0; i < len; i++) w += letters[Math.min(25, Math.floor(-Math.log(1 - rng.next()) * 6))]!;
      add(rng.next() < 0.1 ? w[0]!.toUpperCase() + w.slice(1) : w);
    }
  }
  return out;
}

const load = (): string =>
  execFileSync('uptime', { encoding: 'utf8' })
    .trim()
    .replace(/^.*load average: /, '');

/** Milliseconds per step of one seeded walk (`allowed(budget)` + `advance`), on `cursor`. */
function walk(cursor: GrammarCursor, seed: number): { ms: number; steps: number } {
  const rng = createRng(seed);
  let steps = 0;
  const t0 = performance.now();
  for (let left = STEPS; left > 0; left--) {
    const ids = cursor.allowed(left);
    steps++;
    if (ids.length === 0) break;
    cursor.advance(ids[rng.int(ids.length)]!);
  }
  return { ms: (performance.now() - t0) / steps, steps };
}

const loadBefore = load();
const vocabs: [string, readonly string[]][] = [
  ['tiny (259)', (await loadTokenizer(tinyTokenizerDir())).tokenTexts()],
  ['synthetic (151,669)', syntheticVocab(151_669)],
  ['Qwen3 (151,669)', (await loadTokenizer(qwen3TokenizerDir())).tokenTexts()],
];
const rows: Record<string, unknown>[] = [];
for (const [vocab, texts] of vocabs)
  for (const [grammar, pattern] of Object.entries(GRAMMARS)) {
    let first = Infinity,
      steady = Infinity,
      steps = 0,
      maskSize = 0;
    for (let r = 0; r < REPEAT; r++) {
      const nfa = compileGrammar({ kind: 'regex', pattern });
      const cold = walk(new GrammarCursor(nfa, texts), r);
      first = Math.min(first, cold.ms);
      steps = cold.steps;
      const warm = walk(new GrammarCursor(nfa, texts), r);
      steady = Math.min(steady, warm.ms);
      maskSize = new GrammarCursor(nfa, texts).allowed().length;
    }
    rows.push({
      vocab,
      grammar,
      steps,
      first_mask_tokens: maskSize,
      first_visit_ms_per_step: Number(first.toFixed(4)),
      steady_ms_per_step: Number(steady.toFixed(4)),
    });
  }
const loadAfter = load();
if (json)
  console.log(JSON.stringify({ steps: STEPS, repeat: REPEAT, load_before: loadBefore, load_after: loadAfter, rows }));
else {
  console.log(`grammar mask per step, ${STEPS}-token walks, best of ${REPEAT}; load average before ${loadBefore}`);
  console.log(
    `${'vocabulary'.padEnd(20)} ${'grammar'.padEnd(20)} ${'1st mask'.padStart(9)} ${'first visit ms'.padStart(15)} ${'steady ms'.padStart(10)}`,
  );
  for (const r of rows)
    console.log(
      `${String(r.vocab).padEnd(20)} ${String(r.grammar).padEnd(20)} ${String(r.first_mask_tokens).padStart(9)} ${String(r.first_visit_ms_per_step).padStart(15)} ${String(r.steady_ms_per_step).padStart(10)}`,
    );
  console.log(`load average after ${loadAfter}`);
}
