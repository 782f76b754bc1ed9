/**
 * The `troupe` field of a plugin's package.json, read and validated BEFORE any plugin code is imported
 * (like VS Code's `contributes`). Example:
 *
 * ```json
 * "troupe": {
 *   "apiVersion": 1,
 *   "kernel": "^0.1.0",
 *   "module": "./dist/module.js",
 *   "sourceModule": "./src/module.ts",
 *   "contributes": {
 *     "environments": [{ "id": "plan-path-v0", "configSchema": "./schemas/plan-path.config.json" }]
 *   }
 * }
 * ```
 */
export interface PluginManifest {
  /** Version of the plugin API this plugin was written against (the kernel states which it supports). */
  readonly apiVersion: number;
  /** Semver range of `@troupe/kernel` versions the plugin works with. */
  readonly kernel: string;
  /** Path (relative to the package root) of the built ES module whose default export is an inversify ContainerModule. */
  readonly module: string;
  /** Path of the TypeScript source of the module, used when running from source (`--conditions=troupe:source`). */
  readonly sourceModule?: string;
  /** What the plugin contributes, by kind. */
  readonly contributes: {
    readonly environments?: readonly ContributionDeclaration[];
    readonly roles?: readonly ContributionDeclaration[];
    readonly rewards?: readonly ContributionDeclaration[];
    readonly policies?: readonly ContributionDeclaration[];
  };
}

/** One declared contribution. */
export interface ContributionDeclaration {
  /** Versioned id (`name-vN`; policies may use a bare kind such as `openai`). */
  readonly id: string;
  /** Path (relative to the package root) of the JSON schema of its config. */
  readonly configSchema?: string;
  /** One line for listings. */
  readonly description?: string;
}

/** The contribution kinds, as named in `contributes`. */
export type ContributionKind = 'environments' | 'roles' | 'rewards' | 'policies';

/** The plugin API version this kernel implements. */
export const PLUGIN_API_VERSION = 1;
