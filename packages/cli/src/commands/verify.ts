import type { Command } from 'commander';
import { finiteNumber, printJson, UsageError } from '../errors.js';

interface VerifyMathOptions {
  answer?: string;
  reference?: string;
  tolerance?: number;
  orderedLists?: boolean;
  json?: boolean;
}

/**
 * `troupe verify math --answer A --reference B [--json]`: runs the math environment's layered answer checker
 * (normalised string → exact rational → symbolic → numeric sampling) and prints `{ equivalent, layer, details }`.
 * Exit code 0 when equivalent, 1 when not, 2 on usage errors.
 */
export function register(program: Command): void {
  const verify = program.command('verify').description('check answers with an environment\'s verifier');
  verify
    .command('math')
    .description('is ANSWER equivalent to REFERENCE? (layers: normalized-string, rational, symbolic, numeric)')
    .requiredOption('--answer <text>', 'the answer to check (plain or LaTeX; a \\boxed{} wrapper is accepted)')
    .requiredOption('--reference <text>', 'the reference answer')
    .option('--tolerance <x>', 'relative tolerance of the numeric layer (default 1e-9)', finiteNumber('--tolerance'))
    .option('--ordered-lists', 'compare bare comma-separated lists in order (default: as multisets)')
    .option('--json', 'print { equivalent, layer, details } as one JSON document')
    .action(async (opts: VerifyMathOptions) => {
      const { checkEquivalence } = await import('@troupe/env-math'); // mathjs loads only for this command
      if (opts.tolerance !== undefined && !(opts.tolerance > 0)) throw new UsageError(`--tolerance must be positive, got ${opts.tolerance}`);
      const result = checkEquivalence(opts.answer!, opts.reference!, {
        ...(opts.tolerance !== undefined ? { tolerance: opts.tolerance } : {}),
        ...(opts.orderedLists ? { orderedLists: true } : {}),
      });
      if (opts.json) printJson(result);
      else process.stdout.write(`${result.equivalent ? 'equivalent' : 'not equivalent'} (layer: ${result.layer}): ${result.details}\n`);
      process.exitCode = result.equivalent ? 0 : 1;
    });
}
