/**
 * Release hygiene: scripts/release-check.mjs on this repository finds every workspace package ready for
 * `npm publish` (LICENSE, README, CHANGELOG, repository/homepage/bugs, a clean `npm pack --dry-run`) and every
 * relative link of the docs resolving; on a small made-up monorepo it finds each kind of fault, and `--fix` repairs
 * what needs no judgement and leaves the rest reported.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { REPO, childEnv, cleanup, tempDir, type Run } from './scaffold-support.js';

const SCRIPT = join(REPO, 'scripts', 'release-check.mjs');

interface Report {
  readonly problems: number;
  readonly packages: {
    readonly folder: string;
    readonly name: string;
    readonly problems: string[];
    readonly fixed: string[];
  }[];
  readonly root: string[];
  readonly docs: string[];
}

function releaseCheck(args: readonly string[]): Run {
  const r = spawnSync(process.execPath, [SCRIPT, ...args], {
    encoding: 'utf8',
    env: childEnv(),
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  return { status: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

function report(run: Run): Report {
  assert.equal(run.stderr.trim(), '', 'release-check wrote to stderr');
  return JSON.parse(run.stdout) as Report;
}

function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

describe('release hygiene (scripts/release-check.mjs)', function () {
  this.timeout(60_000);

  it('finds every workspace package of this repository ready to publish, and the docs links resolving', function () {
    const run = releaseCheck(['--json']);
    const result = report(run);
    const problems = [
      ...result.packages.flatMap((p) => p.problems.map((problem) => `${p.folder}: ${problem}`)),
      ...result.root.map((problem) => `(root) ${problem}`),
      ...result.docs.map((problem) => `(docs) ${problem}`),
    ];
    assert.deepEqual(problems, [], 'run `node scripts/release-check.mjs --fix`, then fix what it still reports');
    assert.equal(run.status, 0);
    const folders = result.packages.map((p) => p.folder);
    for (const folder of ['packages/kernel', 'packages/cli', 'plugins/envs/plan-path', 'plugins/roles/coder']) {
      assert.ok(folders.includes(folder), `${folder} was not checked`);
    }
    for (const p of result.packages) {
      const pkg = JSON.parse(readFileSync(join(REPO, p.folder, 'package.json'), 'utf8')) as {
        repository: { directory: string };
      };
      assert.equal(pkg.repository.directory, p.folder);
      assert.equal(readFileSync(join(REPO, p.folder, 'LICENSE'), 'utf8'), readFileSync(join(REPO, 'LICENSE'), 'utf8'));
    }
  });

  describe('on a made-up monorepo', function () {
    let root: string;
    beforeEach(function () {
      root = tempDir('release-check');
      write(join(root, 'package.json'), json({ name: 'mono', private: true, workspaces: ['packages/*'] }));
      copyFileSync(join(REPO, 'LICENSE'), join(root, 'LICENSE'));
      write(join(root, 'CONTRIBUTING.md'), '# Contributing\n\n## Setup\n');
      write(
        join(root, '.changeset', 'config.json'),
        json({ fixed: [['@demo/*']], access: 'public', baseBranch: 'main' }),
      );
      write(
        join(root, 'docs', 'guide.md'),
        '# Guide\n\n## Set up\n\nSee [setup](../CONTRIBUTING.md#setup) and [here](#set-up).\n',
      );
      // A package as it should be, but for what --fix adds.
      const good = join(root, 'packages', 'good');
      write(
        join(good, 'package.json'),
        json({
          name: '@demo/good',
          version: '1.2.0',
          description: 'A good package',
          type: 'module',
          license: 'Apache-2.0',
          main: './dist/index.js',
          types: './dist/index.d.ts',
          files: ['dist', 'schemas', 'README.md'],
        }),
      );
      write(join(good, 'README.md'), '# good\n');
      write(join(good, 'src', 'index.ts'), 'export const x = 1;\n');
      write(join(good, 'dist', 'index.js'), 'export const x = 1;\n//# sourceMappingURL=index.js.map\n');
      write(
        join(good, 'dist', 'index.js.map'),
        JSON.stringify({ version: 3, file: 'index.js', sources: ['../src/index.ts'], mappings: '' }),
      );
      write(join(good, 'dist', 'index.d.ts'), 'export declare const x = 1;\n');
      write(join(good, 'schemas', 'config.schema.json'), '{}\n');
      // Left over from a source file that moved away: its map names a source that is gone.
      write(join(good, 'dist', 'old', 'gone.js'), 'export {};\n');
      write(
        join(good, 'dist', 'old', 'gone.js.map'),
        JSON.stringify({ version: 3, file: 'gone.js', sources: ['../../src/old/gone.ts'], mappings: '' }),
      );
      // A package whose `files` ships tests and build info, and whose exports name a file that is not shipped.
      const leaky = join(root, 'packages', 'leaky');
      write(
        join(leaky, 'package.json'),
        json({
          name: '@demo/leaky',
          version: '1.2.0',
          type: 'module',
          license: 'MIT',
          exports: {
            '.': { 'troupe:source': './src/index.ts', default: './dist/index.js' },
            './data': './data/table.json',
          },
          files: ['dist', 'test', 'tsconfig.tsbuildinfo'],
        }),
      );
      write(join(leaky, 'dist', 'index.js'), 'export {};\n');
      write(join(leaky, 'data', 'table.json'), '[]\n');
      write(join(leaky, 'test', 'index.test.js'), '');
      write(join(leaky, 'tsconfig.tsbuildinfo'), '{}');
      write(join(root, 'packages', 'internal', 'package.json'), json({ name: 'internal-tools', private: true }));
    });
    afterEach(function () {
      cleanup(root);
    });

    it('reports each fault with what to do, and --fix repairs what needs no judgement', function () {
      const before = releaseCheck(['--json', '--root', root]);
      assert.equal(before.status, 1);
      const first = report(before);
      assert.deepEqual(
        first.packages.map((p) => p.folder),
        ['packages/good', 'packages/leaky'],
        'private packages are not checked',
      );
      const good = first.packages[0]!.problems;
      const leaky = first.packages[1]!.problems;
      for (const problem of [
        'LICENSE is missing',
        'CHANGELOG.md is missing',
        'package.json has no "repository"',
        'package.json has no "homepage"',
        'package.json has no "bugs"',
      ]) {
        assert.ok(good.includes(problem), `missing '${problem}' in ${JSON.stringify(good)}`);
      }
      assert.ok(
        good.some((p) =>
          /^2 build outputs in the tarball have no source any more \(dist\/old\/gone\.js, dist\/old\/gone\.js\.map\)/.test(
            p,
          ),
        ),
        JSON.stringify(good),
      );
      assert.ok(
        good.includes(
          'package.json "publishConfig.access" should be "public" (a scoped package is private on npm otherwise)',
        ),
      );
      assert.ok(
        !good.some((p) => /index\.js|schemas|README/.test(p)),
        `no problem with what it ships: ${JSON.stringify(good)}`,
      );
      assert.ok(leaky.includes('package.json "license" should be "Apache-2.0", not "MIT"'), JSON.stringify(leaky));
      assert.ok(leaky.includes('README.md is missing: write one (what it is, how to install and use it)'));
      assert.ok(
        leaky.includes('the tarball holds a test or fixture file: test/index.test.js (narrow "files" in package.json)'),
        JSON.stringify(leaky),
      );
      assert.ok(
        leaky.includes(
          'the tarball holds TypeScript build info: tsconfig.tsbuildinfo (narrow "files" in package.json)',
        ),
      );
      assert.ok(
        leaky.includes('"data/table.json", named by main/types/bin/exports, is not in the tarball (add it to "files")'),
        JSON.stringify(leaky),
      );
      assert.ok(
        !leaky.some((p) => p.includes('src/index.ts')),
        'the troupe:source condition is for the repository only',
      );
      assert.deepEqual(first.root, []);
      assert.deepEqual(first.docs, []);

      const fixed = report(releaseCheck(['--json', '--fix', '--root', root]));
      const goodDir = join(root, 'packages', 'good');
      assert.equal(readFileSync(join(goodDir, 'LICENSE'), 'utf8'), readFileSync(join(REPO, 'LICENSE'), 'utf8'));
      assert.equal(
        readFileSync(join(goodDir, 'CHANGELOG.md'), 'utf8'),
        '# @demo/good\n\n## 1.2.0\n\n- First release. A good package.\n',
      );
      const pkg = JSON.parse(readFileSync(join(goodDir, 'package.json'), 'utf8')) as Record<string, unknown>;
      assert.deepEqual(pkg.repository, {
        type: 'git',
        url: 'git+https://github.com/troupe-sdk/troupe.git',
        directory: 'packages/good',
      });
      assert.equal(pkg.homepage, 'https://github.com/troupe-sdk/troupe/tree/main/packages/good#readme');
      assert.deepEqual(pkg.bugs, { url: 'https://github.com/troupe-sdk/troupe/issues' });
      assert.deepEqual(pkg.publishConfig, { access: 'public' });
      assert.deepEqual(
        Object.keys(pkg).slice(0, 8),
        ['name', 'version', 'description', 'type', 'license', 'repository', 'homepage', 'bugs'],
        'the new fields go after the license, the other keys keep their order',
      );
      assert.ok(
        !existsSync(join(goodDir, 'dist', 'old')) && existsSync(join(goodDir, 'dist', 'index.js')),
        'only the stale output is removed, with its emptied folder',
      );
      assert.deepEqual(fixed.packages[0]!.problems, []);
      // What needs a decision stays reported: the leaky package's files and README, and no file is removed from it.
      assert.deepEqual(fixed.packages[1]!.problems, [
        'README.md is missing: write one (what it is, how to install and use it)',
        '"data/table.json", named by main/types/bin/exports, is not in the tarball (add it to "files")',
        'the tarball holds a test or fixture file: test/index.test.js (narrow "files" in package.json)',
        'the tarball holds TypeScript build info: tsconfig.tsbuildinfo (narrow "files" in package.json)',
      ]);
      assert.ok(existsSync(join(root, 'packages', 'leaky', 'test', 'index.test.js')));
      assert.equal(fixed.problems, 4);
    });

    it('reports root files, the release group and broken docs links', function () {
      write(
        join(root, 'docs', 'guide.md'),
        [
          '# Guide',
          '',
          '[ok](../CONTRIBUTING.md#setup) [gone](old.md) [anchor](../CONTRIBUTING.md#install)',
          '[out](../../elsewhere/notes.md) [web](https://example.org/x.md)',
          '',
          '```',
          '[in code](nowhere.md)',
          '```',
          '',
        ].join('\n'),
      );
      write(join(root, '.changeset', 'config.json'), json({ fixed: [['@other/*']] }));
      const pkg = join(root, 'packages', 'good', 'package.json');
      write(pkg, json({ ...JSON.parse(readFileSync(pkg, 'utf8')), version: '1.3.0' }));
      const run = releaseCheck(['--root', root]);
      assert.equal(run.status, 1);
      const lines = run.stdout.trim().split('\n');
      for (const line of [
        'problem (root): .changeset/config.json: @demo/good, @demo/leaky in no "fixed" group: the packages are released together',
        'problem (root): the packages have different versions (1.3.0, 1.2.0): released together, they share one (`npx changeset version` sets it)',
        "problem (docs): docs/guide.md: link 'old.md' points at a missing file",
        "problem (docs): docs/guide.md: link '../CONTRIBUTING.md#install' names no heading of CONTRIBUTING.md",
        "problem (docs): docs/guide.md: link '../../elsewhere/notes.md' leaves the repository",
      ])
        assert.ok(lines.includes(line), `missing: ${line}\n${run.stdout}`);
      assert.ok(
        !run.stdout.includes('nowhere.md') && !run.stdout.includes('example.org'),
        'code blocks and web links are not checked',
      );
      assert.match(
        lines.at(-1)!,
        /^release-check: \d+ problems in 2 packages \(--fix adds LICENSE, the package\.json fields and CHANGELOG\.md\)$/,
      );
    });

    it('says what is wrong with its arguments', function () {
      const run = releaseCheck(['--root', root, '--package', 'packages/nope']);
      assert.equal(run.status, 1);
      assert.equal(
        run.stderr,
        'release-check: --package packages/nope: not a workspace package folder (packages/good, packages/internal, packages/leaky)\n',
      );
      const bad = releaseCheck(['--frobnicate']);
      assert.equal(bad.status, 2);
      assert.match(
        bad.stderr,
        /^release-check: unknown argument '--frobnicate'\nusage: node scripts\/release-check\.mjs/,
      );
    });
  });
});
