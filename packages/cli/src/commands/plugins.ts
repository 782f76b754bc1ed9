import type { Command } from 'commander';
import { defaultBaseDirs, discoverPlugins, kernelVersion } from '@troupe/kernel';
import { printJson } from '../errors.js';

/** `troupe plugins ls`: every installed plugin, from manifests only (no plugin code runs). */
export function register(program: Command): void {
  const plugins = program.command('plugins').description('inspect installed Troupe plugins');
  plugins
    .command('ls')
    .description('list installed plugins and what they contribute (reads package.json manifests only)')
    .option('--json', 'print one JSON document')
    .option('--dir <dir>', 'look for plugins from this folder (default: the current folder)')
    .action((opts: { json?: boolean; dir?: string }) => {
      const found = discoverPlugins(defaultBaseDirs(opts.dir));
      const rows = found.map((p) => ({
        name: p.name,
        version: p.version,
        origin: p.origin,
        workspace: p.workspace,
        shadowed: p.shadowed,
        dir: p.dir,
        foundIn: p.foundIn,
        kernelRange: p.manifest?.kernel ?? null,
        contributes: p.manifest
          ? Object.fromEntries(
              Object.entries(p.manifest.contributes).map(([kind, list]) => [kind, (list ?? []).map((c) => c.id)]),
            )
          : {},
        problem: p.problem ? p.problem.message : null,
      }));
      if (opts.json) {
        printJson({ kernel: kernelVersion(), plugins: rows });
        return;
      }
      if (rows.length === 0) {
        process.stdout.write('no Troupe plugins found (packages with a "troupe" field in package.json)\n');
        return;
      }
      for (const r of rows) {
        const ids = Object.entries(r.contributes)
          .map(([k, ids]) => `${k}: ${(ids as string[]).join(', ')}`)
          .join('; ');
        const where = r.workspace ? 'workspace' : r.foundIn;
        process.stdout.write(
          `${r.name}@${r.version}  [${r.origin}${r.shadowed ? ', shadowed' : ''}]  ${ids || '(nothing)'}\n    from ${where} (${r.dir})\n`,
        );
        if (r.problem) process.stdout.write(`    PROBLEM: ${r.problem.split('\n').join('\n    ')}\n`);
      }
    });
}
