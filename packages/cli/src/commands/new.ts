/**
 * `troupe new env|role|reward|team NAME`: creates a plugin package (or a team project) from a template. Every choice
 * is a flag; there are no prompts.
 */
import type { Command } from 'commander';
import { printJson, UsageError } from '../errors.js';
import { scaffold, TEMPLATE_KINDS, type ScaffoldResult, type TemplateKind } from '../scaffold/index.js';

/** Options of `troupe new`. */
interface NewOptions {
  dir?: string;
  scope?: string;
  packageName?: string;
  kernelRange?: string;
  force?: boolean;
  json?: boolean;
  env?: string;
  role?: string;
  reward?: string;
  seats?: string;
}

/** Prints what was created and what to do next. */
function report(result: ScaffoldResult): void {
  const lines = [
    `created ${result.kind === 'team' ? 'team' : `${result.kind} plugin`} ${result.packageName} in ${result.dir}`,
  ];
  if (result.id)
    lines.push(`  contribution id: ${result.id}   shorthand: ${result.shorthand}   kernel: ${result.kernelRange}`);
  for (const warning of result.warnings) lines.push(`  warning: ${warning}`);
  lines.push('', 'next steps:', ...result.nextSteps.map((s) => `  ${s}`));
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** Registers `troupe new`. */
export function register(program: Command): void {
  program
    .command('new')
    .description('create a plugin package (env, role, reward) or a team project from a template')
    .argument('<kind>', `what to create: ${TEMPLATE_KINDS.join(', ')}`)
    .argument(
      '<name>',
      'lowercase name (letters, digits, dashes); a plugin gets the id NAME-v0 and the package troupe-KIND-NAME',
    )
    .option('--dir <dir>', 'folder to create (default: ./<package name without scope>)')
    .option('--scope <scope>', 'npm scope: @acme gives @acme/troupe-KIND-NAME (@troupe gives @troupe/KIND-NAME)')
    .option('--package-name <name>', 'package name, instead of the derived one')
    .option('--kernel-range <range>', 'semver range of @troupe/kernel the plugin supports (default ^<running kernel>)')
    .option('--force', 'write into a non-empty folder (template files are overwritten, others kept)')
    .option('--env <env>', 'team: environment id or shorthand')
    .option('--role <role>', 'team: role of every seat (id or shorthand)')
    .option('--reward <reward>', 'team: reward id or shorthand')
    .option('--seats <seats>', "team: comma-separated seat names, in turn order (the environment's seats)")
    .option('--json', 'print one JSON document')
    .action(async (kind: string, name: string, opts: NewOptions) => {
      if (!(TEMPLATE_KINDS as readonly string[]).includes(kind)) {
        throw new UsageError(`unknown kind "${kind}"; use one of: ${TEMPLATE_KINDS.join(', ')}`);
      }
      const teamFlags = [opts.env, opts.role, opts.reward, opts.seats].some((v) => v !== undefined);
      if (kind !== 'team' && teamFlags)
        throw new UsageError('--env, --role, --reward and --seats apply to `troupe new team` only');
      const seats = opts.seats
        ?.split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      if (opts.seats !== undefined && (!seats || seats.length === 0))
        throw new UsageError('--seats needs at least one seat name');
      const result = await scaffold({
        kind: kind as TemplateKind,
        name,
        ...(opts.dir !== undefined ? { dir: opts.dir } : {}),
        ...(opts.scope !== undefined ? { scope: opts.scope } : {}),
        ...(opts.packageName !== undefined ? { packageName: opts.packageName } : {}),
        ...(opts.kernelRange !== undefined ? { kernelRange: opts.kernelRange } : {}),
        ...(opts.force ? { force: true } : {}),
        ...(kind === 'team'
          ? {
              team: {
                ...(opts.env ? { env: opts.env } : {}),
                ...(opts.role ? { role: opts.role } : {}),
                ...(opts.reward ? { reward: opts.reward } : {}),
                ...(seats ? { seats } : {}),
              },
            }
          : {}),
      });
      if (opts.json) printJson(result);
      else report(result);
    });
}
