import type { Command } from 'commander';
import {
  checkTeamAgainstPlugins,
  createHostFor,
  formatIssue,
  loadTeamSpec,
  resolveTrainerConfig,
  specIssue,
  SpecError,
  TrainerConfigError,
  type SpecIssue,
  type TeamSpec,
} from '@troupe/kernel';
import { printJson } from '../errors.js';

interface FileVerdict {
  file: string;
  ok: boolean;
  issues: SpecIssue[];
  /** Not problems, but worth a look: e.g. an environment allowed to run programs without isolation. */
  warnings: SpecIssue[];
}

/** A warning when the environment's sandbox may run the model's programs unisolated (the spec stays valid). */
function unisolatedWarnings(spec: TeamSpec): SpecIssue[] {
  const sandbox = spec.environment.config['sandbox'] as { allowUnisolated?: unknown; isolation?: unknown } | undefined;
  if (sandbox?.allowUnisolated !== true) return [];
  const what = sandbox.isolation === 'none' ? 'isolation "none": every program' : 'where no isolation works, programs';
  const message = `allowUnisolated: ${what} the model writes will run WITHOUT isolation (able to read files and reach the network)`;
  return [
    specIssue(
      spec,
      ['environment', 'config', 'sandbox', 'allowUnisolated'],
      message,
      'remove it and install bubblewrap: apt-get install -y bubblewrap',
    ),
  ];
}

/** The problems `troupe train` would report in the spec's `algorithm` block, located in the YAML. */
function trainingIssues(spec: TeamSpec): SpecIssue[] {
  try {
    resolveTrainerConfig(spec);
    return [];
  } catch (err) {
    if (!(err instanceof TrainerConfigError)) throw err;
    return err.issues.map((i) => specIssue(spec, i.path, i.message, i.hint, { key: i.unknownKey === true }));
  }
}

/**
 * Validates one spec file: schema, cross references, the plugins it names (manifests, configs, seats), then the
 * training settings (`algorithm`) as the trainer reads them.
 */
export async function validateSpecFile(file: string): Promise<FileVerdict> {
  try {
    const spec = loadTeamSpec(file);
    const issues = [...(await checkTeamAgainstPlugins(spec, createHostFor(spec.file))), ...trainingIssues(spec)];
    return { file, ok: issues.length === 0, issues, warnings: unisolatedWarnings(spec) };
  } catch (err) {
    if (err instanceof SpecError) return { file, ok: false, issues: [...err.issues], warnings: [] };
    throw err;
  }
}

/** `troupe validate SPEC...`: checks team specs without running anything but the plugins' manifests and factories. */
export function register(program: Command): void {
  program
    .command('validate')
    .description('check team specs: schema, references, plugins, configs, seats and action types, training settings')
    .argument('<spec...>', 'team spec files (YAML)')
    .option('--json', 'print one JSON document')
    .action(async (files: string[], opts: { json?: boolean }) => {
      const verdicts: FileVerdict[] = [];
      for (const file of files) verdicts.push(await validateSpecFile(file));
      const ok = verdicts.every((v) => v.ok);
      if (opts.json) {
        printJson({ ok, files: verdicts });
      } else {
        for (const v of verdicts) {
          if (v.ok)
            process.stdout.write(
              `${v.file}: ok${v.warnings.length ? `, ${v.warnings.length} warning${v.warnings.length === 1 ? '' : 's'}` : ''}\n`,
            );
          else {
            process.stdout.write(`${v.file}: ${v.issues.length} problem${v.issues.length === 1 ? '' : 's'}\n`);
            for (const issue of v.issues) process.stdout.write(`  ${formatIssue(issue)}\n`);
          }
          for (const w of v.warnings) process.stdout.write(`  warning: ${formatIssue(w)}\n`);
        }
      }
      process.exitCode = ok ? 0 : 1;
    });
}
