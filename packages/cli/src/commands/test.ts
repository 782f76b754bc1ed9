/**
 * `troupe test [PLUGIN]`: runs a plugin's own tests (`npm test`) and the conformance suite of every contribution it
 * declares. PLUGIN is a folder (default `.`) or a package name / shorthand, resolved like the kernel's loader does.
 */
import type { Command } from 'commander';
import { printJson, UsageError } from '../errors.js';
import { testPlugin, type PluginTestResult } from '../scaffold/index.js';

/** Options of `troupe test`. */
interface TestOptions {
  ownTests: boolean;
  build?: boolean;
  json?: boolean;
  config?: string;
  samplesFrom?: string;
}

/** Parses `--config`: a JSON object. */
function parseConfig(raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new UsageError(
      `--config must be a JSON object, e.g. '{"team":"executed_reward"}': ${(error as Error).message}`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError('--config must be a JSON object');
  return value as Record<string, unknown>;
}

/** Prints a human summary on stdout. */
function report(result: PluginTestResult): void {
  const lines = [`${result.plugin}@${result.version} (${result.dir})`];
  if (result.build)
    lines.push(`  build: ${result.build.exitCode === 0 ? 'ok' : `failed (exit ${result.build.exitCode})`}`);
  lines.push(
    `  own tests: ${result.ownTests.ran ? (result.ownTests.exitCode === 0 ? 'passed' : `failed (exit ${result.ownTests.exitCode})`) : result.ownTests.reason}`,
  );
  for (const suite of result.conformance) {
    const what = `${suite.kind} ${suite.id}${suite.samples ? ` (samples from ${suite.samples})` : ''}`;
    if (suite.skipped) lines.push(`  conformance ${what}: skipped: ${suite.skipped}`);
    else if (suite.failures.length === 0) lines.push(`  conformance ${what}: passed`);
    else {
      lines.push(`  conformance ${what}: ${suite.failures.length} failure${suite.failures.length === 1 ? '' : 's'}`);
      // A message's own lines (a manifest diff, a hint) stay under its bullet.
      for (const f of suite.failures.slice(0, 20))
        lines.push(`    - ${f.check}: ${f.message.replace(/\n/g, '\n      ')}`);
    }
  }
  lines.push(result.ok ? 'ok' : 'FAILED');
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** Registers `troupe test`. */
export function register(program: Command): void {
  program
    .command('test')
    .description("run a plugin's own tests and the conformance suites of its contributions")
    .argument('[plugin]', 'plugin folder, or package name / shorthand (default: the current folder)', '.')
    .option('--no-own-tests', "skip the plugin's own `npm test`")
    .option('--build', 'run `npm run build` first (default: only when the built module is missing)')
    .option('--config <json>', 'config (a JSON object) for the contributions, instead of their defaults')
    .option(
      '--samples-from <env>',
      'environment (id or shorthand) whose states and transitions feed the role and reward suites',
    )
    .option('--json', 'print one JSON document (child output goes to stderr)')
    .action(async (plugin: string, opts: TestOptions) => {
      const result = await testPlugin({
        plugin,
        ownTests: opts.ownTests,
        build: opts.build ? true : 'auto',
        output: opts.json ? 'stderr' : 'inherit',
        ...(opts.config !== undefined ? { config: parseConfig(opts.config)! } : {}),
        ...(opts.samplesFrom !== undefined ? { samplesFrom: opts.samplesFrom } : {}),
      });
      if (opts.json) printJson(result);
      else report(result);
      if (!result.ok) process.exitCode = 1;
    });
}
