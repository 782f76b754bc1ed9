/**
 * The plugin host: plugins loaded after their manifests are checked, each into its own inversify container under the
 * host's services, and the registry of contributions with validated, default-filled configs.
 */
import { existsSync, realpathSync } from 'node:fs';
import { dirname, extname } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Container, interfaces } from 'inversify';
import type { ValidateFunction } from 'ajv';
import type { JsonSchema } from '../contracts/common.js';
import { EnvironmentContribution, type Environment } from '../contracts/environment.js';
import type { ContributionKind } from '../contracts/manifest.js';
import { PolicyContribution, type Policy, type PolicyCreateContext } from '../contracts/policy.js';
import { RewardContribution, type RewardFunction } from '../contracts/reward.js';
import { RoleContribution, type Role } from '../contracts/role.js';
import { Logger } from '../contracts/services.js';
import { processServices } from '../services/index.js';
import { compileSchema, formatPath, schemaIssues, type SchemaIssue } from './ajv.js';
import { PluginError } from './errors.js';
import {
  CONTRIBUTION_KINDS,
  contributionKey,
  readPluginPackage,
  resolvePackageFile,
  type PluginPackage,
} from './manifest.js';
import { ContributionRegistry, KIND_NOUN, type ContributionEntry } from './registry.js';
import {
  contributionNameOf,
  defaultBaseDirs,
  discoverPlugins,
  findPackageJson,
  isPathLike,
  KIND_TO_CONTRIBUTION,
  OFFICIAL_PROVIDERS,
  resolvePlugin,
  stripVersion,
  type PluginKind,
} from './resolve.js';

/** The contribution point symbol of each kind. */
export const CONTRIBUTION_POINTS: Readonly<Record<ContributionKind, symbol>> = {
  environments: EnvironmentContribution,
  roles: RoleContribution,
  rewards: RewardContribution,
  policies: PolicyContribution,
};

/** A module compiled into the kernel (e.g. the scripted policies), loaded without a manifest. */
export interface BuiltinModule {
  /** A name for messages and listings, e.g. `@troupe/kernel (scripted policies)`. */
  readonly name: string;
  /** The inversify module. */
  readonly module: interfaces.ContainerModule;
}

/** Options of {@link PluginHost}. */
export interface PluginHostOptions {
  /** Modules bound at construction, without manifests (built-in policies and the like). */
  readonly builtins?: readonly BuiltinModule[];
  /** Folders packages are resolved from (default: cwd, then the kernel's location). */
  readonly baseDirs?: readonly string[];
  /** Import `sourceModule` instead of `module` (default: detected, see {@link runningFromSource}). */
  readonly fromSource?: boolean;
  /** Pretend this kernel version is running (tests). */
  readonly kernelVersion?: string;
  /**
   * The container of the shared services the host's plugins are injected with (default: the process's, see
   * `processServices`). The host's own container is a child of it, so a test can also bind a service on
   * {@link PluginHost.container} for one host only.
   */
  readonly services?: Container;
}

/** A module's contributions of one kind, in binding order. */
type BoundContributions = Map<ContributionKind, { id: string; value: object }[]>;

/** A loaded plugin. */
export interface LoadedPlugin {
  /** Package name (or built-in module name). */
  readonly name: string;
  /** Package version (the kernel's for built-ins). */
  readonly version: string;
  /** Package folder (undefined for built-ins). */
  readonly dir?: string;
  /** The module file that was imported (undefined for built-ins). */
  readonly file?: string;
  /** The package, for plugins loaded from packages. */
  readonly package?: PluginPackage;
  /** What it contributed. */
  readonly contributions: readonly { readonly kind: ContributionKind; readonly id: string }[];
  /** True for built-in modules. */
  readonly builtin: boolean;
}

/** A config validated against its contribution's schema, with defaults filled, or the problems found. */
export interface ConfigCheck {
  /** The validated config with defaults filled (a copy; the input is never modified). */
  readonly config: Record<string, unknown>;
  /** Problems, with paths relative to the config object. Empty when valid. */
  readonly issues: readonly SchemaIssue[];
}

/**
 * Whether plugin modules should be imported from source: true when the `troupe:source` export condition is on
 * (in `process.execArgv` or `NODE_OPTIONS`).
 */
export function runningFromSource(): boolean {
  const flags = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ');
  return flags.includes('troupe:source');
}

/** Whether a TypeScript loader (tsx) is active in this process. */
export function typescriptLoaderActive(): boolean {
  const flags = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ');
  return /\btsx\b/.test(flags) || process.env.TSX !== undefined || 'tsx' in process.versions;
}

function isContainerModule(value: unknown): value is interfaces.ContainerModule {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { registry?: unknown }).registry === 'function' &&
    'id' in value
  );
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing (no default export)';
  if (value === null) return 'null';
  if (typeof value === 'function') return `a function${value.name ? ` (${value.name})` : ''}`;
  if (typeof value === 'object') return `an object with keys ${Object.keys(value).slice(0, 5).join(', ') || '(none)'}`;
  return `a ${typeof value}`;
}

/**
 * Loads plugins. {@link PluginHost.load} checks a plugin's manifest (schema, API version, kernel range, config
 * schema files) BEFORE importing its module, imports it, checks that the default export is a ContainerModule, loads
 * it, and checks that it binds exactly the contributions it declares.
 *
 * Containers: the host's {@link PluginHost.container} holds (or inherits) the shared services; every plugin module is
 * loaded into a CHILD container of its own. A module declares its contributions by binding them to the contribution
 * tokens (`bind(EnvironmentContribution).to(X).inSingletonScope()`), so what a plugin contributes is exactly what
 * its own container binds to those tokens (no diffing of a shared container), its classes are injected with the
 * services of the parent by `@inject(TOKEN)`, two plugins cannot see or shadow each other's bindings, and a module
 * that fails is dropped with its container.
 */
export class PluginHost {
  /** The services container of this host (a child of the process's services); plugins' containers are its children. */
  readonly container: Container;
  /** Every registered contribution. */
  readonly registry: ContributionRegistry = new ContributionRegistry();
  private readonly loaded = new Map<string, LoadedPlugin>();
  private readonly pending = new Map<string, Promise<LoadedPlugin>>();
  private readonly baseDirs: readonly string[];
  private readonly fromSource: boolean;
  private readonly kernelVersion: string | undefined;
  private readonly fallbackValidators = new WeakMap<object, ValidateFunction>();

  /** Creates the host and loads the built-in modules. */
  constructor(options: PluginHostOptions = {}) {
    this.baseDirs = options.baseDirs ?? defaultBaseDirs();
    this.fromSource = options.fromSource ?? runningFromSource();
    this.kernelVersion = options.kernelVersion;
    this.container = (options.services ?? processServices()).createChild();
    for (const builtin of options.builtins ?? []) this.loadBuiltin(builtin);
  }

  /** Every loaded plugin, in load order. */
  plugins(): LoadedPlugin[] {
    return [...this.loaded.values()];
  }

  /** Loads a built-in module (no manifest: whatever it binds is registered). */
  loadBuiltin(builtin: BuiltinModule): LoadedPlugin {
    const existing = this.loaded.get(`builtin:${builtin.name}`);
    if (existing) return existing;
    const added = this.bindModule(builtin.name, builtin.module, undefined);
    const contributions: { kind: ContributionKind; id: string }[] = [];
    for (const kind of CONTRIBUTION_KINDS) {
      for (const c of added.get(kind) ?? []) {
        this.registry.add(this.entry(kind, c, builtin.name, undefined, undefined));
        contributions.push({ kind, id: c.id });
      }
    }
    const plugin: LoadedPlugin = { name: builtin.name, version: 'builtin', contributions, builtin: true };
    this.loaded.set(`builtin:${builtin.name}`, plugin);
    return plugin;
  }

  /**
   * Loads a plugin given as a package name or a package folder (absolute, or relative to the first base folder).
   * With `kind`, shorthand names are expanded (`sokoban` → `@troupe/env-sokoban`, ...). Loading a package twice
   * is a no-op. Throws {@link PluginError}.
   */
  async load(
    packageNameOrDir: string,
    options: { kind?: PluginKind; baseDirs?: readonly string[] } = {},
  ): Promise<LoadedPlugin> {
    const baseDirs = options.baseDirs ?? this.baseDirs;
    let dir: string;
    if (options.kind) {
      dir = resolvePlugin(options.kind, packageNameOrDir, baseDirs).dir;
    } else if (isPathLike(packageNameOrDir)) {
      dir = resolvePlugin('env', packageNameOrDir, baseDirs).dir;
    } else {
      const file = baseDirs.map((b) => findPackageJson(packageNameOrDir, b)).find((f) => f !== undefined);
      if (file === undefined) {
        throw new PluginError(packageNameOrDir, `package "${packageNameOrDir}" is not installed`, {
          hint: `install it (npm install ${packageNameOrDir}); searched from: ${baseDirs.join(', ')}`,
        });
      }
      dir = realpathSync(dirname(file));
    }
    const existing = this.loaded.get(dir);
    if (existing) return existing;
    const pkg = readPluginPackage(dir, this.kernelVersion ? { kernelVersion: this.kernelVersion } : {});
    return this.loadPackage(pkg);
  }

  /** Loads a package whose manifest was already read with {@link readPluginPackage}. Concurrent calls share one load. */
  async loadPackage(pkg: PluginPackage): Promise<LoadedPlugin> {
    const existing = this.loaded.get(pkg.dir);
    if (existing) return existing;
    let pending = this.pending.get(pkg.dir);
    if (!pending) {
      pending = this.importAndBind(pkg).finally(() => this.pending.delete(pkg.dir));
      this.pending.set(pkg.dir, pending);
    }
    return pending;
  }

  /**
   * Imports a package's module and binds it into a container of its own WITHOUT registering anything or comparing
   * it with the manifest's `contributes` (`troupe manifest` derives the manifest from this). Throws {@link PluginError}.
   */
  async inspect(pkg: PluginPackage): Promise<{
    readonly file: string;
    readonly contributions: readonly { readonly kind: ContributionKind; readonly id: string; readonly value: object }[];
  }> {
    const { file, module } = await this.importModule(pkg);
    const added = this.bindModule(pkg.name, module, file);
    return {
      file,
      contributions: CONTRIBUTION_KINDS.flatMap((kind) => (added.get(kind) ?? []).map((c) => ({ kind, ...c }))),
    };
  }

  /** Imports a package's module file and checks that its default export is a ContainerModule. */
  private async importModule(pkg: PluginPackage): Promise<{ file: string; module: interfaces.ContainerModule }> {
    const file = this.moduleFile(pkg);
    let namespace: Record<string, unknown>;
    try {
      namespace = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    } catch (cause) {
      const message = cause instanceof Error ? cause.message : String(cause);
      const ts = extname(file) === '.ts' || extname(file) === '.mts';
      throw new PluginError(pkg.name, `its module threw while being imported: ${message}`, {
        file,
        hint:
          ts && !typescriptLoaderActive()
            ? 'this is TypeScript source: build the plugin (npm run build) or run node with --import=tsx'
            : /Parameter decorators only work when experimental decorators are enabled/.test(message)
              ? "tsx compiles parameter decorators only in files the current folder's tsconfig includes: declare constructor tokens with injectParameters(Class, [TOKEN, ...]) instead of @inject, or build the plugin"
              : `fix the error in the module, or reinstall ${pkg.name}`,
        cause,
      });
    }
    const module = namespace.default;
    if (!isContainerModule(module)) {
      throw new PluginError(
        pkg.name,
        `the default export of its module must be an inversify ContainerModule, but it is ${describeValue(module)}`,
        {
          file,
          hint: "write `export default new ContainerModule((bind) => { ... })`, importing ContainerModule from '@troupe/kernel'",
        },
      );
    }
    return { file, module };
  }

  private async importAndBind(pkg: PluginPackage): Promise<LoadedPlugin> {
    const { file, module } = await this.importModule(pkg);
    const added = this.bindModule(pkg.name, module, file);
    const entries: ContributionEntry[] = [];
    // A failed check drops the plugin's container with everything it bound: nothing to undo here.
    for (const kind of CONTRIBUTION_KINDS) {
      const declared = new Set((pkg.manifest.contributes[kind] ?? []).map((d) => d.id));
      const bound = (added.get(kind) ?? []).map((c) => c.id);
      const undeclared = bound.filter((id) => !declared.has(id));
      if (undeclared.length) {
        throw new PluginError(
          pkg.name,
          `its module binds ${KIND_NOUN[kind]} ${undeclared.map((i) => `"${i}"`).join(', ')} that the manifest does not declare`,
          {
            file: pkg.packageJsonFile,
            hint: `regenerate the manifest from the code (troupe manifest ${pkg.dir} --write), or remove the binding`,
          },
        );
      }
      const missing = [...declared].filter((id) => !bound.includes(id));
      if (missing.length) {
        throw new PluginError(
          pkg.name,
          `declares ${KIND_NOUN[kind]} ${missing.map((i) => `"${i}"`).join(', ')} but its module binds no ${KIND_NOUN[kind]} contribution with that id`,
          {
            file,
            hint: `bind it: bind(${CONTRIBUTION_POINTS[kind].description?.replace('troupe.', '')}).to(YourContribution).inSingletonScope() with id "${missing[0]}", or regenerate the manifest from the code (troupe manifest ${pkg.dir} --write)`,
          },
        );
      }
      for (const c of added.get(kind) ?? []) {
        const decl = (pkg.manifest.contributes[kind] ?? []).find((d) => d.id === c.id);
        entries.push(this.entry(kind, c, pkg.name, pkg, decl?.description));
      }
    }
    const staged = new ContributionRegistry();
    for (const e of entries) {
      const owner = this.registry.owner(e.kind, e.id);
      if (owner !== undefined) {
        throw new PluginError(pkg.name, `${KIND_NOUN[e.kind]} id "${e.id}" is also provided by ${owner}`, {
          file: pkg.packageJsonFile,
          hint: `uninstall one of ${owner} and ${pkg.name}, or give one contribution another id`,
        });
      }
      staged.add(e);
    }
    for (const e of entries) this.registry.add(e);
    const plugin: LoadedPlugin = {
      name: pkg.name,
      version: pkg.version,
      dir: pkg.dir,
      file,
      package: pkg,
      contributions: entries.map((e) => ({ kind: e.kind, id: e.id })),
      builtin: false,
    };
    this.loaded.set(pkg.dir, plugin);
    this.logger()?.debug('plugin loaded', {
      plugin: pkg.name,
      version: pkg.version,
      file,
      contributions: plugin.contributions.map((c) => c.id),
    });
    return plugin;
  }

  /**
   * Makes sure a contribution is registered, loading its plugin if needed: `name` is an id (`plan-path-v0`), an
   * unversioned name (`plan-path`), or a shorthand; the package is found with the shorthand rules of its kind.
   */
  async ensure(
    kind: ContributionKind,
    name: string,
    baseDirs: readonly string[] = this.baseDirs,
  ): Promise<ContributionEntry> {
    const found = this.registry.find(kind, name);
    if (found) return found;
    const pluginKind = Object.entries(KIND_TO_CONTRIBUTION).find(([, v]) => v === kind)![0] as PluginKind;
    const packageName = isPathLike(name) ? name : stripVersion(name);
    // An official contribution not named after its package (`oracle` is @troupe/policy-scripted's): load that package
    // directly rather than scanning every installed manifest for it; when it is not installed, the search below runs.
    const provider = isPathLike(name) ? undefined : OFFICIAL_PROVIDERS[pluginKind]?.[packageName];
    let plugin = provider ? await this.load(provider, { baseDirs }).catch(() => undefined) : undefined;
    if (!plugin) {
      try {
        plugin = await this.load(packageName, { kind: pluginKind, baseDirs });
      } catch (error) {
        // No package of that name: a package may still contribute the id under another name (`coder-proposer-v0`
        // comes from @troupe/role-coder). Find it from the installed manifests (no plugin code runs for that).
        const declaring = isPathLike(name) ? undefined : this.findDeclaringPlugin(kind, name, baseDirs);
        if (!declaring) throw error;
        plugin = await this.load(declaring, { baseDirs });
      }
    }
    const offered = plugin.contributions.filter((c) => c.kind === kind).map((c) => c.id);
    // `@acme/troupe-role-mover` and `@acme/mover` stand for `mover` (highest -vN); a single contribution is meant.
    const after =
      this.registry.find(kind, name) ??
      (isPathLike(name) ? undefined : this.registry.find(kind, contributionNameOf(pluginKind, packageName))) ??
      (offered.length === 1 ? this.registry.find(kind, offered[0]!) : undefined);
    if (after) return after;
    throw new PluginError(plugin.name, `does not provide ${KIND_NOUN[kind]} "${name}"`, {
      file: plugin.package?.packageJsonFile,
      hint: offered.length ? `it provides: ${offered.join(', ')}` : `it provides no ${kind}`,
    });
  }

  /** The installed plugin whose manifest declares `kind` contribution `name` (an id, or unversioned), if exactly one does. */
  private findDeclaringPlugin(kind: ContributionKind, name: string, baseDirs: readonly string[]): string | undefined {
    const wanted = stripVersion(name);
    const matches = discoverPlugins(baseDirs).filter(
      (p) =>
        !p.shadowed &&
        !p.problem &&
        (p.manifest?.contributes[kind] ?? []).some((c) => c.id === name || stripVersion(c.id) === wanted),
    );
    return matches.length === 1 ? matches[0]!.dir : undefined;
  }

  /** Validates a config against a contribution's schema, filling defaults, without throwing. */
  checkConfig(kind: ContributionKind, id: string, config: unknown): ConfigCheck {
    const entry = this.registry.get(kind, id);
    const copy = config === undefined ? {} : (structuredClone(config) as Record<string, unknown>);
    if (typeof copy !== 'object' || copy === null || Array.isArray(copy)) {
      return { config: {}, issues: [{ path: [], message: 'must be an object' }] };
    }
    const ok = entry.validate(copy);
    return { config: copy, issues: ok ? [] : schemaIssues(entry.validate.errors) };
  }

  /** Validates (and fills defaults of) a config, throwing a {@link PluginError} that lists every problem with its key path. */
  validateConfig(kind: ContributionKind, id: string, config: unknown, where?: string): Record<string, unknown> {
    const entry = this.registry.get(kind, id);
    const { config: filled, issues } = this.checkConfig(kind, id, config);
    if (issues.length === 0) return filled;
    const prefix = where ?? `${KIND_NOUN[kind]} config`;
    const lines = issues.map(
      (i) => `  ${prefix}${i.path.length ? '.' + formatPath(i.path) : ''}: ${i.message}${i.hint ? ` (${i.hint})` : ''}`,
    );
    throw new PluginError(entry.plugin, `invalid config for ${KIND_NOUN[kind]} "${entry.id}":\n${lines.join('\n')}`, {
      ...(entry.schemaFile ? { file: entry.schemaFile } : {}),
      hint: `fix the config to match the schema of ${entry.id}${entry.schemaFile ? ` (${entry.schemaFile})` : ''}`,
    });
  }

  /** Validates the config and creates the environment `id` (exact or unversioned). */
  createEnvironment(id: string, config: unknown = {}, where?: string): Environment {
    const entry = this.registry.get<EnvironmentContribution>('environments', id);
    return entry.contribution.create(this.validateConfig('environments', entry.id, config, where));
  }

  /** Validates the config and creates the role `id`. */
  createRole(id: string, config: unknown = {}, where?: string): Role {
    const entry = this.registry.get<RoleContribution>('roles', id);
    return entry.contribution.create(this.validateConfig('roles', entry.id, config, where));
  }

  /** Validates the config and creates the reward function `id`. */
  createReward(id: string, config: unknown = {}, where?: string): RewardFunction {
    const entry = this.registry.get<RewardContribution>('rewards', id);
    return entry.contribution.create(this.validateConfig('rewards', entry.id, config, where));
  }

  /** Validates the config (the policy entry minus `kind`) and creates policy `name` of kind `kind`. */
  async createPolicy(
    kind: string,
    name: string,
    config: unknown,
    context: PolicyCreateContext,
    where?: string,
  ): Promise<Policy> {
    const entry = this.registry.get<PolicyContribution>('policies', kind);
    const raw = { ...((config as Record<string, unknown>) ?? {}) };
    delete raw.kind;
    return entry.contribution.create(name, this.validateConfig('policies', entry.id, raw, where), context);
  }

  /** The host's logger, when its services bind one. */
  private logger(): Logger | undefined {
    return this.container.isBound(Logger) ? this.container.get<Logger>(Logger).child('plugins') : undefined;
  }

  private moduleFile(pkg: PluginPackage): string {
    const { manifest } = pkg;
    const built = resolvePackageFile(pkg.dir, manifest.module, pkg.name, pkg.packageJsonFile, '`troupe.module`');
    const source = manifest.sourceModule
      ? resolvePackageFile(pkg.dir, manifest.sourceModule, pkg.name, pkg.packageJsonFile, '`troupe.sourceModule`')
      : undefined;
    if (source && this.fromSource && existsSync(source)) return source;
    if (existsSync(built)) return built;
    if (source && existsSync(source) && typescriptLoaderActive()) return source;
    throw new PluginError(pkg.name, `its module file does not exist: ${manifest.module}`, {
      file: built,
      hint: source
        ? `build the plugin (npm run build in ${pkg.dir}), or run from source with --conditions=troupe:source --import=tsx`
        : `build the plugin (npm run build in ${pkg.dir}) or fix \`troupe.module\` in package.json`,
    });
  }

  /**
   * Loads `module` into a new child container of the host's and resolves what it binds to each contribution token:
   * those are the plugin's contributions (singletons, created here, injected with the services). Throws a
   * {@link PluginError} naming the plugin when binding or resolving fails (a missing `@injectable`, a service that is
   * not bound, a constructor that throws) or when a contribution has no id or is bound twice.
   */
  private bindModule(plugin: string, module: interfaces.ContainerModule, file: string | undefined): BoundContributions {
    const own = this.container.createChild();
    const where = file ? { file } : {};
    try {
      own.load(module);
    } catch (cause) {
      throw new PluginError(
        plugin,
        `loading its ContainerModule failed: ${cause instanceof Error ? cause.message : String(cause)}`,
        {
          ...where,
          hint: 'fix the bindings in the module',
          cause,
        },
      );
    }
    const added: BoundContributions = new Map();
    for (const kind of CONTRIBUTION_KINDS) {
      const point = CONTRIBUTION_POINTS[kind];
      // The host's own containers never bind contribution tokens, so `isCurrentBound` is exactly "this module binds it".
      if (!own.isCurrentBound(point)) continue;
      let values: unknown[];
      try {
        values = own.getAll(point);
      } catch (cause) {
        throw bindingError(plugin, kind, cause, where);
      }
      const list = values.map((value) => {
        const id = (value as { id?: unknown } | null)?.id;
        if (typeof id !== 'string' || id === '') {
          throw new PluginError(plugin, `a ${KIND_NOUN[kind]} contribution has no string \`id\``, {
            ...where,
            hint: 'give every contribution an `id` property',
          });
        }
        return { id, value: value as object };
      });
      const ids = list.map((c) => c.id);
      const dup = ids.find((id, i) => ids.indexOf(id) !== i);
      if (dup !== undefined) {
        throw new PluginError(plugin, `its module binds ${KIND_NOUN[kind]} "${dup}" twice`, {
          ...where,
          hint: 'bind each contribution once',
        });
      }
      added.set(kind, list);
    }
    return added;
  }

  private entry(
    kind: ContributionKind,
    c: { id: string; value: object },
    plugin: string,
    pkg: PluginPackage | undefined,
    description: string | undefined,
  ): ContributionEntry {
    const fromFile = pkg?.configSchemas.get(contributionKey(kind, c.id));
    let validate: ValidateFunction;
    if (fromFile) {
      validate = fromFile.validate;
    } else {
      const schema = (c.value as { configSchema?: unknown }).configSchema;
      const usable: JsonSchema = typeof schema === 'object' && schema !== null ? (schema as JsonSchema) : {};
      let cached = this.fallbackValidators.get(usable);
      if (!cached) {
        try {
          cached = compileSchema(usable);
        } catch (cause) {
          throw new PluginError(
            plugin,
            `the configSchema of ${KIND_NOUN[kind]} "${c.id}" is not a valid JSON schema: ${(cause as Error).message}`,
            {
              ...(pkg ? { file: pkg.packageJsonFile } : {}),
              hint: 'fix the schema',
              cause,
            },
          );
        }
        this.fallbackValidators.set(usable, cached);
      }
      validate = cached;
    }
    return {
      kind,
      id: c.id,
      contribution: c.value,
      plugin,
      ...(pkg ? { dir: pkg.dir } : {}),
      description: description ?? String((c.value as { description?: unknown }).description ?? ''),
      validate,
      ...(fromFile ? { schemaFile: fromFile.file } : {}),
    };
  }
}

/** The shared services by token description, for messages. */
const SERVICE_HINTS: Readonly<Record<string, string>> = {
  'troupe.SandboxPool':
    'the host binds one per process: `processServices().bind(SandboxPool).toConstantValue(sharedSandboxPool())` (sharedSandboxPool from @troupe/sandbox); a test binds its own on host.container',
  'troupe.TokenizerCache': 'the host binds the one of @troupe/lm (or a test its own) before loading the plugin',
};

/** A {@link PluginError} for a module whose contributions cannot be created, saying which binding is wrong and what to do. */
function bindingError(plugin: string, kind: ContributionKind, cause: unknown, where: { file?: string }): PluginError {
  const message = cause instanceof Error ? cause.message : String(cause);
  const unbound = /No matching bindings found for serviceIdentifier: (?:Symbol\()?([\w.$-]+)\)?/.exec(message);
  let hint: string;
  if (unbound) {
    const token = unbound[1]!;
    hint =
      SERVICE_HINTS[token] ??
      `bind ${token} in the module (or, for a shared service, in the host's services) before the contribution that injects it`;
    return new PluginError(
      plugin,
      `creating its ${KIND_NOUN[kind]} contributions failed: nothing is bound to ${token}, which one of them injects`,
      { ...where, hint, cause },
    );
  }
  if (/Missing required @inject/.test(message))
    hint =
      'esbuild and tsx emit no decorator metadata: name the token of every constructor parameter with injectParameters(Class, [TOKEN, ...]) (from @troupe/kernel)';
  else hint = 'fix the contribution classes and their bindings in the module';
  return new PluginError(plugin, `creating its ${KIND_NOUN[kind]} contributions failed: ${message}`, {
    ...where,
    hint,
    cause,
  });
}
