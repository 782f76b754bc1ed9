/**
 * `troupe manifest [PLUGIN] [--write]`: derives a plugin's `troupe.contributes` (ids, descriptions, config schema
 * files) from its code, prints it, and with `--write` puts it into package.json. The code states each fact once;
 * the manifest is its copy for reading without running code, and `troupe test` fails when the two disagree.
 */
import type { Command } from 'commander';
import { deriveManifest, diffManifest, writeManifest } from '@troupe/kernel';
import { printJson } from '../errors.js';
import { locatePlugin } from '../scaffold/index.js';

/** Options of `troupe manifest`. */
interface ManifestOptions {
  write?: boolean;
  check?: boolean;
  json?: boolean;
}

/** Registers `troupe manifest`. */
export function register(program: Command): void {
  program
    .command('manifest')
    .description("derive a plugin's manifest (troupe.contributes in package.json) from its code; --write updates it")
    .argument('[plugin]', 'plugin folder, or package name / shorthand (default: the current folder)', '.')
    .option('--write', 'write the derived manifest (and schema files the code builds) into the package')
    .option('--check', 'exit 1, printing the differences, when package.json does not match the code')
    .option('--json', 'print the derived troupe.contributes as JSON only')
    .action(async (plugin: string, opts: ManifestOptions) => {
      const dir = locatePlugin(plugin, process.cwd(), 'troupe manifest');
      const derived = await deriveManifest(dir);
      const diff = diffManifest(derived);
      if (opts.json) {
        printJson(derived.derived);
      } else if (diff.length === 0) {
        process.stdout.write(`${derived.plugin}: package.json troupe.contributes matches the code\n`);
      } else {
        const verb = opts.write ? 'updated' : 'differs from the code';
        process.stdout.write(
          `${derived.plugin}: package.json troupe.contributes ${verb} (- package.json, + code):\n${diff.map((l) => `  ${l}`).join('\n')}\n`,
        );
      }
      if (opts.write && diff.length > 0) writeManifest(derived);
      else if (!opts.write && diff.length > 0 && !opts.json) {
        process.stdout.write(`write it with: troupe manifest ${dir} --write\n`);
        if (opts.check) process.exitCode = 1;
      }
    });
}
