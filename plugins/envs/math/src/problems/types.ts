/** A math problem with a reference answer: what `math-v0` instances are. Plain JSON. */
export interface MathProblem {
  /** The problem statement shown to the seats. */
  readonly question: string;
  /** The reference answer (plain or LaTeX; compared with the layered checker). */
  readonly answer: string;
  /** Where it came from: `generated`, or the dataset format (`gsm8k`, `aime`, `polaris`, `math`, ...). */
  readonly source: string;
  /** Generator family (generated problems only), e.g. `arithmetic`, `quadratic`. */
  readonly family?: string;
  /** A Python program that computes the answer from the problem's numbers (generated problems only). */
  readonly program?: string;
  /** The unit the answer is given in (OlympiadBench's `unit`): dropped from an answer that ends with it. */
  readonly unit?: string;
  /** Where a loaded problem came from: `file:line` (JSONL) or `file#row` (Parquet). */
  readonly origin?: string;
}

/** The generator families of the procedural problem set. */
export const FAMILIES = ['arithmetic', 'fractions', 'linear', 'quadratic', 'counting', 'modular', 'sequences'] as const;

/** One generator family. */
export type Family = (typeof FAMILIES)[number];
