import type { Command } from 'commander';
import { finiteNumber, positiveInt, printJson, UsageError } from '../errors.js';
import { importPluginApi } from '../plugin-api.js';

/** What `troupe verify math` uses of the math environment's package (its answer checker), loaded when it runs. */
interface MathChecker {
  extractAnswer(
    response: string,
    mode: 'lenient' | 'boxed',
  ): { readonly answer: string; readonly source: string } | undefined;
  extractReference(reference: string): string;
  stripUnit(answer: string, unit: string): string;
  sharedVerifier(): {
    check(
      answer: string,
      reference: string,
      options: { tolerance?: number; orderedLists?: boolean; budgetMs?: number },
    ): Promise<{
      readonly equivalent: boolean;
      readonly verdict: string;
      readonly layer: string;
      readonly details: string;
      readonly elapsedMs: number;
      readonly thread?: unknown;
    }>;
  };
}

interface VerifyMathOptions {
  answer?: string;
  reference?: string;
  tolerance?: number;
  orderedLists?: boolean;
  budgetMs?: number;
  extraction?: string;
  unit?: string;
  json?: boolean;
}

/** Most milliseconds `--budget-ms` accepts (one minute). */
const MAX_BUDGET_MS = 60_000;

/**
 * `troupe verify math --answer RESPONSE --reference GOLD [--json]`: reads the final answer out of a whole model
 * response (the math environment's extraction step: `<think>` dropped, last `\boxed{}`, "final answer" phrasings, a
 * bare answer, the last math span, the last number), reads the reference (a GSM8K `#### n`, a MATH solution's
 * `\boxed{}`, an OlympiadBench `["$4$"]` list, or a plain answer) and runs the layered checker under its time budget
 * (normalised string → exact rational → symbolic → numeric sampling; the expensive layers in a worker thread that is
 * replaced when it overruns). Exit code 0 when equivalent, 1 when not (or undecided), 2 on usage errors.
 */
export function register(program: Command): void {
  const verify = program.command('verify').description("check answers with an environment's verifier");
  verify
    .command('math')
    .description(
      'is the answer in RESPONSE equivalent to REFERENCE? (layers: normalized-string, rational, symbolic, numeric)',
    )
    .requiredOption('--answer <text>', 'the answer or a whole model response (its final answer is extracted)')
    .requiredOption(
      '--reference <text>',
      'the reference answer (plain or LaTeX; a GSM8K "#### n", a \\boxed{} solution or a ["$4$"] list is read)',
    )
    .option(
      '--extraction <mode>',
      'how the answer is read: lenient (boxed, "final answer", bare, math span, last number) or boxed',
      'lenient',
    )
    .option(
      '--budget-ms <n>',
      'time budget of the check in ms (default 1000); past it the verdict is undecided',
      positiveInt('--budget-ms'),
    )
    .option('--unit <text>', 'a unit the answer may end with (dropped before comparing), as OlympiadBench names it')
    .option('--tolerance <x>', 'relative tolerance of the numeric layer (default 1e-9)', finiteNumber('--tolerance'))
    .option('--ordered-lists', 'compare bare comma-separated lists in order (default: as multisets)')
    .option(
      '--json',
      'print { equivalent, verdict, layer, details, extracted, reference, elapsedMs } as one JSON document',
    )
    .action(async (opts: VerifyMathOptions) => {
      if (opts.tolerance !== undefined && !(opts.tolerance > 0))
        throw new UsageError(`--tolerance must be positive, got ${opts.tolerance}`);
      if (opts.budgetMs !== undefined && opts.budgetMs > MAX_BUDGET_MS)
        throw new UsageError(`--budget-ms must be at most ${MAX_BUDGET_MS}, got ${opts.budgetMs}`);
      if (opts.extraction !== 'lenient' && opts.extraction !== 'boxed')
        throw new UsageError(`--extraction must be lenient or boxed, got "${opts.extraction}"`);
      // the math environment (and mathjs) loads only for this command, from wherever plugins are installed
      const { extractAnswer, extractReference, stripUnit, sharedVerifier } = await importPluginApi<MathChecker>(
        'env',
        'math',
        ['extractAnswer', 'extractReference', 'stripUnit', 'sharedVerifier'],
        '`troupe verify math`',
      );
      const reference = extractReference(opts.reference!);
      const extracted = extractAnswer(opts.answer!, opts.extraction);
      if (!extracted) {
        const details = `no answer found in the response (extraction ${opts.extraction}${opts.extraction === 'boxed' ? ': no \\boxed{} and not a bare answer' : ''})`;
        if (opts.json)
          printJson({ equivalent: false, verdict: 'not-equal', layer: 'none', details, extracted: null, reference });
        else process.stdout.write(`not equivalent: ${details}\n`);
        process.exitCode = 1;
        return;
      }
      const answer = opts.unit ? stripUnit(extracted.answer, opts.unit) : extracted.answer;
      // The shared verifier's worker never keeps the process alive: nothing to close.
      const {
        elapsedMs,
        thread: _thread,
        ...result
      } = await sharedVerifier().check(answer, reference, {
        ...(opts.tolerance !== undefined ? { tolerance: opts.tolerance } : {}),
        ...(opts.orderedLists ? { orderedLists: true } : {}),
        ...(opts.budgetMs !== undefined ? { budgetMs: opts.budgetMs } : {}),
      });
      if (opts.json) printJson({ ...result, extracted, reference, elapsedMs: Math.round(elapsedMs * 10) / 10 });
      else {
        const verdict =
          result.verdict === 'equal'
            ? 'equivalent'
            : result.verdict === 'undecided'
              ? 'undecided (counted not equivalent)'
              : 'not equivalent';
        process.stdout.write(
          `${verdict} (layer: ${result.layer}): ${result.details}\n` +
            `  answer (${extracted.source}): ${extracted.answer}\n  reference: ${reference}\n`,
        );
      }
      process.exitCode = result.equivalent ? 0 : 1;
    });
}
