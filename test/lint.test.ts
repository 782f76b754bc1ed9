/**
 * The repository's ESLint config (eslint.config.js) catches what it promises: an import cycle within a package and
 * across packages, a layer crossed, an undeclared dependency and a relative import into another package. Each case
 * is a small monorepo laid out in a temp folder like this one (root package.json with workspaces, packages/ and
 * plugins/), linted by the real config file copied there, so the rules are proven on the layout they guard.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The packages eslint.config.js imports: linked from the repository's node_modules into the temp monorepo. */
const CONFIG_IMPORTS = [
  '@eslint/js',
  'eslint',
  'eslint-config-prettier',
  'eslint-import-resolver-typescript',
  'eslint-plugin-import-x',
  'globals',
  'typescript-eslint',
];

interface Workspace {
  /** Folder under the temp root, e.g. `packages/kernel`. */
  readonly folder: string;
  readonly name: string;
  readonly dependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
  /** Files under the folder, by relative path. */
  readonly files: Record<string, string>;
}

/** Writes a monorepo of `workspaces` with the real ESLint config at its root; returns its folder. */
function monorepo(workspaces: readonly Workspace[]): string {
  const root = mkdtempSync(join(tmpdir(), 'troupe-lint-'));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write(
    'package.json',
    JSON.stringify({
      name: 'probe',
      private: true,
      type: 'module',
      workspaces: ['packages/*', 'plugins/*/*'],
      devDependencies: Object.fromEntries(CONFIG_IMPORTS.map((name) => [name, '*'])),
    }),
  );
  write(
    'tsconfig.json',
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
  );
  copyFileSync(join(REPO, 'eslint.config.js'), join(root, 'eslint.config.js'));
  for (const name of CONFIG_IMPORTS) {
    mkdirSync(dirname(join(root, 'node_modules', name)), { recursive: true });
    symlinkSync(join(REPO, 'node_modules', name), join(root, 'node_modules', name), 'dir');
  }
  for (const ws of workspaces) {
    const exports = { '.': { 'troupe:source': './src/index.ts', default: './dist/index.js' } };
    write(
      `${ws.folder}/package.json`,
      JSON.stringify({
        name: ws.name,
        type: 'module',
        exports,
        dependencies: ws.dependencies ?? {},
        devDependencies: ws.devDependencies ?? {},
      }),
    );
    for (const [path, text] of Object.entries(ws.files)) write(`${ws.folder}/${path}`, text);
    mkdirSync(dirname(join(root, 'node_modules', ws.name)), { recursive: true });
    symlinkSync(join(root, ws.folder), join(root, 'node_modules', ws.name), 'dir');
  }
  return root;
}

/** Lints the whole monorepo at `root`: `file:line rule` for every message, sorted. */
async function lint(root: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: root, overrideConfigFile: join(root, 'eslint.config.js') });
  const results = await eslint.lintFiles(['.']);
  return results
    .flatMap((r) => r.messages.map((m) => `${r.filePath.slice(root.length + 1)}:${m.line} ${m.ruleId ?? m.message}`))
    .sort();
}

const KERNEL_DEP = { '@troupe/kernel': '0.1.0' };

describe('eslint.config.js', function () {
  const roots: string[] = [];
  after(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));
  const probe = (workspaces: readonly Workspace[]) => {
    const root = monorepo(workspaces);
    roots.push(root);
    return root;
  };

  it('passes a layered, acyclic monorepo and flags each cycle, layer, undeclared and relative import', async function () {
    const root = probe([
      {
        folder: 'packages/kernel',
        name: '@troupe/kernel',
        files: {
          'src/index.ts': "export * from './a.js';\nexport * from './x.js';\n",
          // A three-file cycle: each of its imports is reported.
          'src/a.ts': "import { b } from './b.js';\nexport const a = (): number => b() + 1;\n",
          'src/b.ts': "import { c } from './c.js';\nexport const b = (): number => c() * 2;\n",
          'src/c.ts': "import { a } from './a.js';\nexport const c = (): number => (Math.random() < 0.5 ? 3 : a());\n",
          // A type-only import back is erased by tsc: no cycle at run time, none reported.
          'src/x.ts': "import { y } from './y.js';\nexport interface X {\n  n: number;\n}\nexport const x = y;\n",
          'src/y.ts': "import type { X } from './x.js';\nexport const y = (v: X): number => v.n;\n",
        },
      },
      {
        folder: 'packages/lm',
        name: '@troupe/lm',
        dependencies: { ...KERNEL_DEP, '@troupe/trainer': '0.1.0' },
        // lm -> trainer is a layer crossed, and with trainer -> lm a cycle across the two packages.
        files: { 'src/index.ts': "import { step } from '@troupe/trainer';\nexport const lm = step;\n" },
      },
      {
        folder: 'packages/trainer',
        name: '@troupe/trainer',
        dependencies: { ...KERNEL_DEP, '@troupe/lm': '0.1.0' },
        files: {
          'src/index.ts':
            "import { a } from '@troupe/kernel';\nexport const step = a;\nexport { lm } from '@troupe/lm';\n",
        },
      },
      {
        folder: 'plugins/envs/grid',
        name: '@troupe/env-grid',
        dependencies: KERNEL_DEP,
        files: {
          // Declared and allowed: clean.
          'src/index.ts': "export { a } from '@troupe/kernel';\n",
          // Not declared in package.json, and an environment plugin may not import the LM either.
          'src/lm.ts': "export { lm } from '@troupe/lm';\n",
        },
      },
      {
        folder: 'packages/cli',
        name: '@troupe/cli',
        dependencies: { ...KERNEL_DEP, '@troupe/env-grid': '0.1.0' },
        files: {
          'src/index.ts': "export { a } from '@troupe/kernel';\nexport * from '@troupe/env-grid';\n",
          // Reaching into another package's folder by a relative path skips its package.json and its exports.
          'src/deep.ts': "export { b } from '../../kernel/src/b.js';\n",
        },
      },
    ]);
    assert.deepEqual(await lint(root), [
      'packages/cli/src/deep.ts:1 import-x/no-relative-packages',
      'packages/kernel/src/a.ts:1 import-x/no-cycle',
      'packages/kernel/src/b.ts:1 import-x/no-cycle',
      'packages/kernel/src/c.ts:1 import-x/no-cycle',
      'packages/lm/src/index.ts:1 import-x/no-cycle',
      'packages/lm/src/index.ts:1 import-x/no-restricted-paths',
      'packages/trainer/src/index.ts:3 import-x/no-cycle',
      'plugins/envs/grid/src/lm.ts:1 import-x/no-extraneous-dependencies',
      'plugins/envs/grid/src/lm.ts:1 import-x/no-restricted-paths',
    ]);
  });

  it('names the layer rule and the allowed imports in its message', async function () {
    const root = probe([
      { folder: 'packages/kernel', name: '@troupe/kernel', files: { 'src/index.ts': 'export const a = 1;\n' } },
      {
        folder: 'packages/game-kit',
        name: '@troupe/game-kit',
        dependencies: { ...KERNEL_DEP, '@troupe/sandbox': '0.1.0' },
        files: { 'src/index.ts': "export { run } from '@troupe/sandbox';\n" },
      },
      { folder: 'packages/sandbox', name: '@troupe/sandbox', files: { 'src/index.ts': 'export const run = 1;\n' } },
    ]);
    const eslint = new ESLint({ cwd: root, overrideConfigFile: join(root, 'eslint.config.js') });
    const [result] = await eslint.lintFiles(['packages/game-kit/src/index.ts']);
    assert.equal(result!.messages.length, 1);
    assert.match(
      result!.messages[0]!.message,
      /packages\/game-kit may import packages\/kernel\. The layers are the LAYERS table/,
    );
  });

  it("lets a plugin's tests, not its src, import another plugin", async function () {
    const plugin = (name: string, files: Record<string, string>, devDependencies = {}): Workspace => ({
      folder: `plugins/roles/${name}`,
      name: `@troupe/role-${name}`,
      dependencies: KERNEL_DEP,
      devDependencies,
      files,
    });
    const root = probe([
      { folder: 'packages/kernel', name: '@troupe/kernel', files: { 'src/index.ts': 'export const a = 1;\n' } },
      plugin('planner', { 'src/index.ts': 'export const plan = 1;\n' }),
      plugin(
        'solver',
        {
          'src/index.ts': "export { plan } from '@troupe/role-planner';\n",
          'test/team.test.ts': "export { plan } from '@troupe/role-planner';\nexport { a } from '@troupe/kernel';\n",
        },
        { '@troupe/role-planner': '0.1.0' },
      ),
    ]);
    // A devDependency serves the test; in src it is undeclared, and a role may not import another plugin anyway.
    assert.deepEqual(await lint(root), [
      'plugins/roles/solver/src/index.ts:1 import-x/no-extraneous-dependencies',
      'plugins/roles/solver/src/index.ts:1 import-x/no-restricted-paths',
    ]);
  });

  it("lets the experiment's tests, not its src, import the trainer; the root's tests reach into packages, not back", async function () {
    const root = probe([
      { folder: 'packages/kernel', name: '@troupe/kernel', files: { 'src/index.ts': 'export const a = 1;\n' } },
      {
        folder: 'packages/trainer',
        name: '@troupe/trainer',
        dependencies: KERNEL_DEP,
        files: { 'src/index.ts': "export { a as step } from '@troupe/kernel';\n" },
      },
      {
        folder: 'packages/experiment',
        name: '@troupe/experiment',
        dependencies: KERNEL_DEP,
        devDependencies: { '@troupe/trainer': '0.1.0' },
        files: {
          'src/index.ts': "export { step } from '@troupe/trainer';\n",
          'test/arms.test.ts': "export { step } from '@troupe/trainer';\n",
          // A package's tests never import the root's integration folder.
          'test/cli.test.ts': "export { troupe } from '../../../test/helpers.js';\n",
        },
      },
    ]);
    // The root's integration tests may use a package's test helpers by path.
    mkdirSync(join(root, 'test'));
    writeFileSync(join(root, 'test', 'helpers.ts'), 'export const troupe = 1;\n');
    writeFileSync(
      join(root, 'test', 'train.test.ts'),
      "export { troupe } from './helpers.js';\nexport { step } from '../packages/trainer/src/index.js';\n",
    );
    assert.deepEqual(await lint(root), [
      'packages/experiment/src/index.ts:1 import-x/no-extraneous-dependencies',
      'packages/experiment/src/index.ts:1 import-x/no-restricted-paths',
      'packages/experiment/test/cli.test.ts:1 import-x/no-relative-packages',
    ]);
  });

  it('stops with a message naming a workspace that has no layer', async function () {
    const root = probe([
      { folder: 'packages/kernel', name: '@troupe/kernel', files: { 'src/index.ts': 'export const a = 1;\n' } },
      { folder: 'packages/mystery', name: '@troupe/mystery', files: { 'src/index.ts': 'export const m = 1;\n' } },
    ]);
    // A fresh mtime, so that ESLint imports this copy of the config anew.
    utimesSync(join(root, 'eslint.config.js'), new Date(), new Date());
    await assert.rejects(
      lint(root),
      /the workspace packages\/mystery has no row in LAYERS; add one that says which workspace folders it may import/,
    );
  });
});
