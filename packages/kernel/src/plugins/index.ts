/**
 * The plugin system: manifests (read and checked before any plugin code runs), shorthand resolution and discovery,
 * and the {@link PluginHost} that loads plugin modules into one inversify container.
 */
export { PluginError } from './errors.js';
export { KERNEL_ROOT, kernelVersion } from './kernel-info.js';
export { levenshtein, closest, didYouMean } from './suggest.js';
export {
  createAjv,
  compileSchema,
  schemaDialect,
  schemaIssues,
  pointerToPath,
  formatPath,
  type SchemaIssue,
} from './ajv.js';
export {
  CONTRIBUTION_KINDS,
  PLUGIN_MANIFEST_SCHEMA,
  checkCompatibility,
  contributionKey,
  readPluginPackage,
  resolvePackageFile,
  validateManifest,
  type PluginPackage,
  type ReadPluginOptions,
} from './manifest.js';
export {
  KIND_TO_CONTRIBUTION,
  OFFICIAL_PROVIDERS,
  contributionNameOf,
  defaultBaseDirs,
  discoverPlugins,
  findPackageJson,
  isPathLike,
  nodeModulesDirs,
  pluginCandidates,
  resolvePlugin,
  stripVersion,
  type DiscoveredPlugin,
  type PluginKind,
  type ResolvedPlugin,
} from './resolve.js';
export { ContributionRegistry, KIND_NOUN, parseVersionedId, type ContributionEntry } from './registry.js';
export {
  CONTRIBUTION_POINTS,
  PluginHost,
  runningFromSource,
  typescriptLoaderActive,
  type BuiltinModule,
  type ConfigCheck,
  type LoadedPlugin,
  type PluginHostOptions,
} from './loader.js';
export { configSchemaFile, readConfigSchema } from './config-schema.js';
export {
  deriveManifest,
  diffManifest,
  manifestMismatchMessage,
  writeManifest,
  type Contributes,
  type DerivedManifest,
} from './manifest-from-code.js';
