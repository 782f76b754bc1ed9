#!/usr/bin/env node
// Release check: is every workspace package ready for `npm publish`, and do the docs stay inside the repository?
//
//   node scripts/release-check.mjs [--fix] [--json] [--root DIR] [--package FOLDER ...]
//
// For each workspace package that is not private it checks: LICENSE (the root's Apache-2.0 text), README.md and
// CHANGELOG.md are there; package.json has license, repository (with its directory), homepage, bugs, files and
// publishConfig.access; and what `npm pack --dry-run` would put in the tarball holds package.json, README.md,
// LICENSE and every file that main/types/bin/exports name, and no tests, fixtures, tsbuildinfo, packed tarballs,
// logs, or build outputs whose source is gone. At the root: LICENSE, CONTRIBUTING.md, the changesets config (every
// package in one fixed group, so the packages are released together), and the relative links of the docs.
//
// --fix adds what can be added without judgement: it copies LICENSE, writes the repository/homepage/bugs/license/
// publishConfig fields, starts a CHANGELOG.md and removes stale build outputs. It never edits `files`, sources or
// docs. --package limits the package checks (and --fix) to those workspace folders. Exit status: 0 when nothing is
// left to fix, 1 otherwise, 2 on bad usage.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The canonical repository (CONTRIBUTING.md says so); every package's repository/homepage/bugs point into it. */
export const REPOSITORY = 'https://github.com/troupe-sdk/troupe';
const LICENSE_ID = 'Apache-2.0';

/** Paths a tarball must not hold: tests, fixtures, TypeScript build info, packed tarballs, logs, editor droppings. */
const STRAY = [
  [/(^|\/)(test|tests|__tests__|fixtures?)\//, 'a test or fixture file'],
  [/\.(test|spec)\.[cm]?[jt]sx?$/, 'a test file'],
  [/\.tsbuildinfo$/, 'TypeScript build info'],
  [/\.tgz$/, 'a packed tarball'],
  [/(^|\/)[^/]*\.log$/, 'a log file'],
  [/(^|\/)(\.DS_Store|\.nyc_output|coverage)(\/|$)/, 'a stray file'],
];
/** Folders a package ships as data copied into the user's project (the CLI's `troupe new` templates hold tests). */
const SHIPPED_VERBATIM = ['templates/'];
const USAGE = 'usage: node scripts/release-check.mjs [--fix] [--json] [--root DIR] [--package FOLDER ...]';

function usage(message) {
  process.stderr.write(`release-check: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const options = { fix: false, json: false, root: resolve(dirname(fileURLToPath(import.meta.url)), '..'), only: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--fix') options.fix = true;
    else if (arg === '--json') options.json = true;
    else if (arg === '--root') {
      if (!argv[i + 1]) usage('--root needs a folder');
      options.root = resolve(argv[++i]);
    } else if (arg === '--package') {
      if (!argv[i + 1]) usage('--package needs a workspace folder, e.g. packages/kernel');
      options.only.push(argv[++i].replace(/\/+$/, ''));
    } else if (arg === '-h' || arg === '--help') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else usage(`unknown argument '${arg}'`);
  }
  return options;
}

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`${file}: ${error.code === 'ENOENT' ? 'not found' : `not valid JSON (${error.message})`}`, {
      cause: error,
    });
  }
}

/** Writes package.json back the way npm does: two-space indent, a final newline. */
function writeJson(file, value) {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** Expands the root's `workspaces` patterns (folder paths whose segments may be `*`) to package folders. */
export function workspaceFolders(root, patterns) {
  const folders = [];
  for (const pattern of patterns) {
    let current = [''];
    for (const segment of pattern.split('/').filter(Boolean)) {
      const next = [];
      for (const base of current) {
        if (segment === '*') {
          const dir = join(root, base);
          if (!existsSync(dir)) continue;
          for (const entry of readdirSync(dir, { withFileTypes: true })) {
            if (entry.isDirectory() && !entry.name.startsWith('.'))
              next.push(base ? `${base}/${entry.name}` : entry.name);
          }
        } else if (segment.includes('*')) {
          throw new Error(
            `package.json workspaces: pattern '${pattern}' is not supported (use whole folder names or '*')`,
          );
        } else next.push(base ? `${base}/${segment}` : segment);
      }
      current = next;
    }
    folders.push(...current.filter((folder) => existsSync(join(root, folder, 'package.json'))));
  }
  return [...new Set(folders)].sort();
}

/** The fields every package gets, for its folder in the repository. */
export function expectedFields(folder) {
  return {
    license: LICENSE_ID,
    repository: { type: 'git', url: `git+${REPOSITORY}.git`, directory: folder },
    homepage: `${REPOSITORY}/tree/main/${folder}#readme`,
    bugs: { url: `${REPOSITORY}/issues` },
  };
}

const sameJson = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** Sets `key` after `after` (or at the end), keeping the other keys' order: diffs of package.json stay small. */
function setAfter(object, after, key, value) {
  if (key in object) {
    object[key] = value;
    return object;
  }
  const out = {};
  let placed = false;
  for (const [k, v] of Object.entries(object)) {
    out[k] = v;
    if (k === after) {
      out[key] = value;
      placed = true;
    }
  }
  if (!placed) out[key] = value;
  return out;
}

/** Every file path a package.json entry point names (main, types, bin, exports), relative, without './'. */
export function entryPoints(pkg) {
  const paths = new Set();
  const add = (value) => {
    if (typeof value === 'string' && !value.includes('*')) paths.add(value.replace(/^\.\//, ''));
  };
  const walk = (value, key) => {
    if (typeof value === 'string') {
      // `troupe:source` points into src/ for the repository's own tests; a published install never asks for it.
      if (key !== 'troupe:source') add(value);
    } else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(v, k);
  };
  add(pkg.main);
  add(pkg.types);
  add(pkg.typings);
  if (typeof pkg.bin === 'string') add(pkg.bin);
  else walk(pkg.bin);
  walk(pkg.exports);
  return [...paths];
}

/**
 * What `npm pack --dry-run` would put in each package's tarball, by package name: one npm call for every workspace.
 * Scripts are not run (a prepack that copies files in has run before when those files are there).
 */
function packListings(root, folders) {
  if (folders.length === 0) return new Map();
  const args = ['pack', '--dry-run', '--json', '--ignore-scripts', ...folders.flatMap((f) => ['--workspace', f])];
  let out;
  try {
    // Without the npm_* variables of an outer `npm run` (its workspace or dry-run settings would apply here too).
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith('npm_')),
    );
    out = execFileSync('npm', args, {
      cwd: root,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 256 << 20,
    });
  } catch (error) {
    const stderr = String(error.stderr ?? '')
      .trim()
      .split('\n')
      .filter((l) => !/npm warn/i.test(l))
      .slice(-5)
      .join('\n');
    throw new Error(`npm pack --dry-run failed in ${root}:\n${stderr || error.message}`, { cause: error });
  }
  const listings = new Map();
  for (const entry of JSON.parse(out))
    listings.set(
      entry.name,
      entry.files.map((f) => f.path),
    );
  return listings;
}

/** Build outputs in the tarball whose source map names only sources that no longer exist (a moved or deleted file). */
function staleOutputs(dir, files) {
  const stale = new Set();
  const present = new Set(files);
  for (const file of files) {
    if (!file.endsWith('.map')) continue;
    let sources;
    try {
      sources = JSON.parse(readFileSync(join(dir, file), 'utf8')).sources;
    } catch {
      continue;
    }
    if (!Array.isArray(sources) || sources.length === 0) continue;
    const base = dirname(join(dir, file));
    if (sources.some((s) => existsSync(resolve(base, s)))) continue;
    const output = file.slice(0, -'.map'.length);
    stale.add(file);
    if (present.has(output)) stale.add(output);
  }
  return [...stale].sort();
}

function firstChangelog(pkg) {
  const description = pkg.description ? ` ${pkg.description.trim().replace(/\.?$/, '.')}` : '';
  return `# ${pkg.name}\n\n## ${pkg.version}\n\n- First release.${description}\n`;
}

/** Build outputs on disk whose source map names only sources that no longer exist, relative to the package folder. */
function staleOnDisk(dir) {
  const files = [];
  const walk = (sub) => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const path = `${sub}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else files.push(path);
    }
  };
  if (existsSync(join(dir, 'dist'))) walk('dist');
  return staleOutputs(dir, files);
}

/** Removes `folder` (relative to `dir`) and the folders above it, up to dist/, while they are empty. */
function removeEmptyFolders(dir, folder) {
  for (let current = folder; current !== '.' && current !== 'dist'; current = dirname(current)) {
    const path = join(dir, current);
    if (!existsSync(path) || readdirSync(path).length > 0) return;
    rmSync(path, { recursive: true });
  }
}

/** Repairs what needs no judgement: LICENSE, CHANGELOG.md, the package.json fields, stale build outputs. */
function fixPackage(root, folder) {
  const dir = join(root, folder);
  const file = join(dir, 'package.json');
  let pkg = readJson(file);
  const fixed = [];
  const rootLicense = join(root, 'LICENSE');
  const license = join(dir, 'LICENSE');
  if (
    existsSync(rootLicense) &&
    (!existsSync(license) || readFileSync(license, 'utf8') !== readFileSync(rootLicense, 'utf8'))
  ) {
    copyFileSync(rootLicense, license);
    fixed.push('LICENSE copied from the root');
  }
  if (!existsSync(join(dir, 'CHANGELOG.md')) && pkg.name && pkg.version) {
    writeFileSync(join(dir, 'CHANGELOG.md'), firstChangelog(pkg));
    fixed.push('CHANGELOG.md started');
  }
  let changed = false;
  let previous = 'description';
  for (const [key, value] of Object.entries(expectedFields(folder))) {
    if (!sameJson(pkg[key], value)) {
      pkg = setAfter(pkg, previous, key, value);
      changed = true;
      fixed.push(`package.json "${key}" set`);
    }
    previous = key;
  }
  if (pkg.name?.startsWith('@') && pkg.publishConfig?.access !== 'public') {
    pkg = setAfter(pkg, 'files', 'publishConfig', { ...pkg.publishConfig, access: 'public' });
    changed = true;
    fixed.push('package.json "publishConfig.access" set to public');
  }
  if (changed) writeJson(file, pkg);
  const stale = staleOnDisk(dir);
  for (const f of stale) rmSync(join(dir, f), { force: true });
  for (const folder of new Set(stale.map((f) => dirname(f)))) removeEmptyFolders(dir, folder);
  if (stale.length)
    fixed.push(
      `${stale.length} stale build outputs removed (${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ', …' : ''})`,
    );
  return fixed;
}

/** Checks one package against its tarball listing. Returns its problems, each saying what to do. */
function checkPackage(root, folder, listing) {
  const dir = join(root, folder);
  const pkg = readJson(join(dir, 'package.json'));
  const problems = [];
  const rootLicense = join(root, 'LICENSE');
  const license = join(dir, 'LICENSE');
  if (!existsSync(license)) problems.push('LICENSE is missing');
  else if (existsSync(rootLicense) && readFileSync(license, 'utf8') !== readFileSync(rootLicense, 'utf8')) {
    problems.push('LICENSE differs from the root LICENSE (Apache-2.0 full text)');
  }
  if (!existsSync(join(dir, 'README.md')))
    problems.push('README.md is missing: write one (what it is, how to install and use it)');
  if (!existsSync(join(dir, 'CHANGELOG.md'))) problems.push('CHANGELOG.md is missing');
  for (const [key, value] of Object.entries(expectedFields(folder))) {
    if (sameJson(pkg[key], value)) continue;
    if (pkg[key] === undefined) problems.push(`package.json has no "${key}"`);
    else problems.push(`package.json "${key}" should be ${JSON.stringify(value)}, not ${JSON.stringify(pkg[key])}`);
  }
  if (pkg.name?.startsWith('@') && pkg.publishConfig?.access !== 'public') {
    problems.push(
      'package.json "publishConfig.access" should be "public" (a scoped package is private on npm otherwise)',
    );
  }
  if (!Array.isArray(pkg.files) || pkg.files.length === 0) {
    problems.push(
      'package.json has no "files": list what the tarball holds (dist, README.md, run-time data), or everything in the folder ships',
    );
  } else if (!pkg.files.some((f) => f.replace(/^\.\//, '').replace(/\/$/, '') === 'dist')) {
    problems.push('package.json "files" does not list dist: the built JavaScript would not ship');
  }

  // The tarball.
  if (!listing) return [...problems, 'npm pack listed nothing for it'];
  const stale = staleOutputs(dir, listing);
  if (stale.length > 0) {
    problems.push(
      `${stale.length} build outputs in the tarball have no source any more (${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ', …' : ''}): ` +
        'remove dist/ and build again (`--fix` removes them)',
    );
  }
  const present = new Set(listing);
  for (const required of ['package.json', 'README.md', 'LICENSE']) {
    if (!present.has(required) && existsSync(join(dir, required))) problems.push(`the tarball has no ${required}`);
  }
  const built = existsSync(join(dir, 'dist'));
  for (const entry of entryPoints(pkg)) {
    if (present.has(entry)) continue;
    if (entry.startsWith('dist/') && !built) continue; // not built here: checked where it is (CI builds first)
    problems.push(
      `"${entry}", named by main/types/bin/exports, is not in the tarball${existsSync(join(dir, entry)) ? ' (add it to "files")' : ' (it does not exist: build first, or fix the entry)'}`,
    );
  }
  for (const path of listing) {
    if (SHIPPED_VERBATIM.some((prefix) => path.startsWith(prefix))) continue;
    const stray = STRAY.find(([pattern]) => pattern.test(path));
    if (stray) problems.push(`the tarball holds ${stray[1]}: ${path} (narrow "files" in package.json)`);
  }
  return problems;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to '-', repeats numbered. */
export function anchorsOf(markdown) {
  const anchors = new Set();
  const counts = new Map();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const match = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!match) continue;
    const text = match[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = counts.get(slug) ?? 0;
    counts.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** Relative links of the docs (docs/**, root *.md) that point at a missing file or heading. */
function checkDocs(root) {
  const problems = [];
  const pages = [];
  const walk = (dir) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) pages.push(path);
    }
  };
  walk(join(root, 'docs'));
  for (const entry of readdirSync(root)) if (entry.endsWith('.md')) pages.push(join(root, entry));
  const anchorCache = new Map();
  const anchors = (file) => {
    if (!anchorCache.has(file)) anchorCache.set(file, anchorsOf(readFileSync(file, 'utf8')));
    return anchorCache.get(file);
  };
  for (const page of pages) {
    const text = readFileSync(page, 'utf8')
      .replace(/```[\s\S]*?```/g, '')
      .replace(/`[^`\n]*`/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [path, anchor] = target.split('#');
      const file = path ? resolve(dirname(page), decodeURIComponent(path)) : page;
      const where = relative(root, page).split(sep).join('/');
      if (!file.startsWith(root + sep) && file !== root) {
        problems.push(`${where}: link '${target}' leaves the repository`);
        continue;
      }
      if (!existsSync(file)) {
        problems.push(`${where}: link '${target}' points at a missing file`);
        continue;
      }
      if (anchor && statSync(file).isFile() && file.endsWith('.md') && !anchors(file).has(anchor)) {
        problems.push(`${where}: link '${target}' names no heading of ${basename(file)}`);
      }
    }
  }
  return problems;
}

/** Root files: LICENSE, CONTRIBUTING.md, and the changesets config covering every publishable package. */
function checkRoot(root, packages) {
  const problems = [];
  const license = join(root, 'LICENSE');
  if (!existsSync(license)) problems.push('LICENSE is missing at the root');
  else if (!/Apache License\s+Version 2\.0/.test(readFileSync(license, 'utf8')))
    problems.push('LICENSE at the root is not the Apache-2.0 text');
  if (!existsSync(join(root, 'CONTRIBUTING.md'))) problems.push('CONTRIBUTING.md is missing at the root');
  const configFile = join(root, '.changeset', 'config.json');
  if (!existsSync(configFile)) {
    problems.push(
      '.changeset/config.json is missing (versions and CHANGELOGs are made with changesets: npx changeset init)',
    );
    return problems;
  }
  const config = readJson(configFile);
  const groups = (config.fixed ?? []).map((group) =>
    group.map((p) => new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`)),
  );
  const ignored = new Set(config.ignore ?? []);
  const publishable = packages.filter((p) => !p.private && !ignored.has(p.name));
  const groupOf = (name) => groups.findIndex((group) => group.some((re) => re.test(name)));
  const outside = publishable.filter((p) => groupOf(p.name) === -1).map((p) => p.name);
  if (outside.length)
    problems.push(
      `.changeset/config.json: ${outside.join(', ')} in no "fixed" group: the packages are released together`,
    );
  const versions = new Set(publishable.map((p) => p.version));
  if (versions.size > 1) {
    problems.push(
      `the packages have different versions (${[...versions].join(', ')}): released together, they share one (\`npx changeset version\` sets it)`,
    );
  }
  return problems;
}

export function releaseCheck({ root, fix = false, only = [] }) {
  const rootPkg = readJson(join(root, 'package.json'));
  const folders = workspaceFolders(
    root,
    Array.isArray(rootPkg.workspaces) ? rootPkg.workspaces : (rootPkg.workspaces?.packages ?? []),
  );
  const manifests = folders.map((folder) => ({ folder, ...readJson(join(root, folder, 'package.json')) }));
  const unknown = only.filter((folder) => !folders.includes(folder));
  if (unknown.length)
    throw new Error(`--package ${unknown.join(', ')}: not a workspace package folder (${folders.join(', ')})`);
  const publishable = manifests.filter((m) => !m.private && (only.length === 0 || only.includes(m.folder)));
  const fixed = new Map(publishable.map((m) => [m.folder, fix ? fixPackage(root, m.folder) : []]));
  const listings = packListings(
    root,
    publishable.map((m) => m.folder),
  );
  const packages = publishable.map((m) => ({
    folder: m.folder,
    name: m.name,
    fixed: fixed.get(m.folder),
    problems: checkPackage(root, m.folder, listings.get(m.name)),
  }));
  return {
    packages,
    private: manifests.filter((m) => m.private).map((m) => m.folder),
    root: checkRoot(root, manifests),
    docs: checkDocs(root),
  };
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  let report;
  try {
    report = releaseCheck(options);
  } catch (error) {
    process.stderr.write(`release-check: ${error.message}\n`);
    process.exit(1);
  }
  const count = report.packages.reduce((n, p) => n + p.problems.length, 0) + report.root.length + report.docs.length;
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ ...report, problems: count }, null, 2)}\n`);
  } else {
    const lines = [];
    for (const p of report.packages) {
      for (const f of p.fixed) lines.push(`fixed   ${p.folder}: ${f}`);
      for (const problem of p.problems) lines.push(`problem ${p.folder} (${p.name}): ${problem}`);
    }
    for (const problem of report.root) lines.push(`problem (root): ${problem}`);
    for (const problem of report.docs) lines.push(`problem (docs): ${problem}`);
    lines.push(
      count === 0
        ? `release-check: ${report.packages.length} packages ready to publish, docs links resolve`
        : `release-check: ${count} problems in ${report.packages.length} packages${options.fix ? '' : ' (--fix adds LICENSE, the package.json fields and CHANGELOG.md)'}`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  process.exit(count === 0 ? 0 : 1);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
