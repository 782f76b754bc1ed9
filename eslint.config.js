// ESLint for the whole monorepo: the import graph's structure (no cycles, package boundaries, layers) and the
// recommended correctness rules. Style is Prettier's alone (eslint-config-prettier switches off every style rule).
// No rule needs type information, so `npx eslint .` parses each file once and stays fast.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const ROOT = dirname(fileURLToPath(import.meta.url));
/** The source files below `folder` ('' for all). */
const code = (folder) => `${folder ? `${folder}/` : ''}**/*.{ts,mts,cts,tsx,js,mjs,cjs}`;
/** Folders, inside a package, whose code only runs in development: tests, benchmarks, build scripts. */
const DEV_FOLDERS = ['test', 'bench', 'scripts'];
/** Code that may import devDependencies: the dev folders, and files that never run from a published package. */
const DEV_CODE = [
  ...DEV_FOLDERS.map((name) => `**/${name}/**`),
  '*.config.js',
  // The viewer's browser app is bundled into dist at build time: its imports are build-time dependencies.
  'packages/viewer/app/**',
  // Worker bootstraps that register tsx: they run only from a checkout's TypeScript sources, never from dist.
  '**/src/**/worker-source.mjs',
];

/**
 * The layers: the workspace folders each package may import, besides itself and the npm packages its package.json
 * declares. A package's tests, benchmarks and scripts may also import `packages/testing`; a plugin's may also import
 * other plugins (to play a whole team); a row's `devImports` names what else its dev code may import, and `devWhy`
 * says why (keep these few: a test that needs the whole house belongs in the root test/). The first row whose folder
 * pattern matches a workspace is its layer, so every new workspace needs a row here (linting stops with a message
 * naming it until it has one).
 */
const LAYERS = [
  { folder: 'packages/kernel', imports: [], why: 'the light core imports no other workspace package' },
  { folder: 'packages/sandbox', imports: [], why: 'the sandbox stands alone' },
  { folder: 'packages/lm', imports: ['packages/kernel'] },
  { folder: 'packages/trainer', imports: ['packages/kernel', 'packages/lm', 'packages/scale-out'] },
  {
    folder: 'packages/onnx',
    imports: ['packages/kernel', 'packages/lm'],
    why: 'it runs @troupe/lm checkpoints in ONNX Runtime',
  },
  {
    folder: 'packages/experiment',
    imports: ['packages/kernel'],
    why: 'it runs the troupe CLI as a child process',
    devImports: ['packages/lm', 'packages/trainer'],
    devWhy: 'its tests check the derived arms against the trainer itself (mapping levels, shared warm starts)',
  },
  { folder: 'packages/game-kit', imports: ['packages/kernel'] },
  {
    folder: 'packages/testing',
    imports: ['packages/kernel'],
    devImports: ['packages/game-kit'],
    devWhy: "its toy game shows a tool-using proposer's program the way the game kit's games do",
  },
  { folder: 'packages/viewer', imports: ['packages/kernel'] },
  { folder: 'packages/scale-out', imports: ['packages/kernel'] },
  {
    folder: 'plugins/policies/*',
    imports: ['packages/kernel', 'packages/game-kit', 'packages/sandbox', 'packages/lm'],
  },
  { folder: 'plugins/*/*', imports: ['packages/kernel', 'packages/game-kit', 'packages/sandbox'] },
  { folder: 'packages/cli', imports: ['*'], why: 'the command line puts the whole house together' },
];

/** The package boundary's options: declared dependencies only; devDependencies only in DEV_CODE; types count too. */
const EXTRANEOUS = {
  devDependencies: DEV_CODE,
  optionalDependencies: true,
  peerDependencies: true,
  includeTypes: true,
  includeInternal: true,
};

const readJson = (path) => JSON.parse(readFileSync(join(ROOT, path), 'utf8'));

/** The workspace folders (relative, with `/`): the root package.json's `workspaces` patterns, `*` segments expanded. */
function workspaceFolders() {
  const subfolders = (folder) => {
    try {
      return readdirSync(join(ROOT, folder), { withFileTypes: true }).filter((entry) => entry.isDirectory());
    } catch {
      return [];
    }
  };
  const expand = (folders, segment) =>
    segment === '*'
      ? folders.flatMap((folder) =>
          subfolders(folder).map((entry) => (folder ? `${folder}/${entry.name}` : entry.name)),
        )
      : folders.map((folder) => (folder ? `${folder}/${segment}` : segment));
  return readJson('package.json')
    .workspaces.flatMap((pattern) => {
      if (/\*\*|[^/]\*|\*[^/]/.test(pattern)) {
        throw new Error(
          `eslint.config.js: workspace pattern "${pattern}" in package.json: only whole "*" folder names are expanded`,
        );
      }
      return pattern.split('/').reduce(expand, ['']);
    })
    .filter((folder) => existsSync(join(ROOT, folder, 'package.json')))
    .sort();
}

const matches = (pattern, folder) =>
  pattern === '*' ||
  new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]+')}$`).test(folder);

const WORKSPACES = workspaceFolders();

function layerOf(folder) {
  const layer = LAYERS.find((row) => matches(row.folder, folder));
  if (!layer) {
    throw new Error(
      `eslint.config.js: the workspace ${folder} has no row in LAYERS; add one that says which workspace folders it may import`,
    );
  }
  return layer;
}

/** no-restricted-paths options for the files of `folder`: every workspace it may not import is a forbidden source. */
function layerRule(folder, dev) {
  const layer = layerOf(folder);
  const allowed = [...layer.imports, folder];
  const devAllowed = [
    'packages/testing',
    ...(folder.startsWith('plugins/') ? ['plugins/*/*'] : []),
    ...(layer.devImports ?? []),
  ];
  if (dev) allowed.push(...devAllowed);
  const forbidden = WORKSPACES.filter((other) => !allowed.some((pattern) => matches(pattern, other)));
  if (forbidden.length === 0) return ['off'];
  const may = layer.imports.length ? layer.imports.join(', ') : 'no other workspace package';
  const devWhy = layer.devWhy ? `; ${layer.devWhy}` : '';
  const why = layer.why ? `: ${layer.why}` : '';
  const message = `${folder} may import ${may}${dev ? ` (its tests also ${devAllowed.join(', ')}${devWhy})` : ''}${why}. The layers are the LAYERS table in eslint.config.js.`;
  return [
    'error',
    { zones: [{ target: join(ROOT, folder), from: forbidden.map((other) => join(ROOT, other)), message }] },
  ];
}

const layerConfigs = WORKSPACES.flatMap((folder) => {
  return [
    {
      name: `troupe/layers/${folder}`,
      files: [code(folder)],
      rules: {
        'import-x/no-restricted-paths': layerRule(folder, false),
        // The package's own package.json, plus the root's devDependencies: the shared toolchain (mocha, tsx, types)
        // that its tests and scripts run under. The root declares devDependencies only, so src gains nothing.
        'import-x/no-extraneous-dependencies': ['error', { ...EXTRANEOUS, packageDir: [join(ROOT, folder), ROOT] }],
      },
    },
    {
      name: `troupe/layers/${folder}/dev`,
      files: DEV_FOLDERS.map((name) => code(`${folder}/${name}`)),
      rules: { 'import-x/no-restricted-paths': layerRule(folder, true) },
    },
  ];
});

/** Scaffold templates become stand-alone plugins: they may import what a plugin may, and the testing kit. */
const templateImports = [...LAYERS.find((row) => row.folder === 'plugins/*/*').imports, 'packages/testing'];
const templateLayer = {
  name: 'troupe/layers/templates',
  files: [code('templates')],
  rules: {
    'import-x/no-restricted-paths': [
      'error',
      {
        zones: [
          {
            target: join(ROOT, 'templates'),
            from: WORKSPACES.filter((folder) => !templateImports.some((pattern) => matches(pattern, folder))).map(
              (folder) => join(ROOT, folder),
            ),
            message: `a scaffold template is a plugin: it may import ${templateImports.join(', ')}.`,
          },
        ],
      },
    ],
  },
};

export default defineConfig(
  {
    name: 'troupe/ignores',
    // The .gitignore files' outputs (packages/cli/templates is a prepack copy of templates/), and declaration files.
    ignores: [
      '**/node_modules/',
      '**/dist/',
      '**/coverage/',
      '**/runs/',
      '.nx/',
      'tmp/',
      'packages/cli/templates/',
      '**/*.d.ts',
      '**/*.d.mts',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    name: 'troupe/base',
    files: [code('')],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { ...globals.node },
      parserOptions: { tsconfigRootDir: ROOT },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.mts', '.cts', '.tsx', '.js', '.mjs', '.cjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.mts', '.cts', '.tsx'] },
      // `.js` specifiers map to the `.ts` sources, and a workspace package resolves to its source through the
      // `troupe:source` export condition (as tsc and the tests do), so cycles across packages are seen.
      'import-x/resolver-next': [
        createTypeScriptImportResolver({
          project: join(ROOT, 'tsconfig.json'),
          conditionNames: ['troupe:source', 'types', 'import', 'node', 'default'],
          alwaysTryTypes: true,
        }),
      ],
    },
    rules: {
      // No import cycle of any length, within a package or across packages. Type-only imports are erased by tsc, so
      // they close no cycle (the layer rule below still counts them).
      'import-x/no-cycle': ['error', { maxDepth: Infinity, ignoreExternal: false }],
      'import-x/no-self-import': 'error',
      // The package boundary: a package imports only what its own package.json declares (dev code: devDependencies
      // too), and another package only by its name, never by a relative path into its folder.
      'import-x/no-extraneous-dependencies': ['error', EXTRANEOUS],
      'import-x/no-relative-packages': 'error',
      'import-x/no-unresolved': 'off',
      // A leading underscore marks a binding that is unused on purpose (an interface's parameter, a dropped key).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  ...layerConfigs,
  templateLayer,
  {
    // The root's integration tests and benchmarks drive the whole house: any workspace package, and any npm package
    // that the root or a workspace declares. They are no package (never published, run only in a checkout), so they
    // may also reach into a package's folder for what its exports rightly leave out: a CLI command module run
    // in-process, the CLI's run-from-source helper, the viewer's browser harness. The other direction stays closed:
    // a package's code never imports the root's folders (no-relative-packages still applies there).
    name: 'troupe/root-dev',
    files: [code('test'), code('bench')],
    rules: {
      'import-x/no-relative-packages': 'off',
      'import-x/no-extraneous-dependencies': [
        'error',
        {
          ...EXTRANEOUS,
          packageDir: [ROOT, ...WORKSPACES.map((folder) => join(ROOT, folder))],
          whitelist: WORKSPACES.map((folder) => readJson(join(folder, 'package.json')).name),
        },
      ],
    },
  },
  {
    // Test fixtures are fake plugin packages, some declared wrong on purpose: only the graph rules apply to them.
    name: 'troupe/fixtures',
    files: [code('**/test/fixtures')],
    rules: { 'import-x/no-extraneous-dependencies': 'off' },
  },
  {
    name: 'troupe/viewer-app',
    files: [code('packages/viewer/app')],
    languageOptions: { globals: { ...globals.browser } },
  },
  prettier,
);
