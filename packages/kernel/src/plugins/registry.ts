import type { ValidateFunction } from 'ajv';
import type { ContributionKind } from '../contracts/manifest.js';
import { PluginError } from './errors.js';
import { closest } from './suggest.js';

/** Singular nouns of the contribution kinds, for messages. */
export const KIND_NOUN: Readonly<Record<ContributionKind, string>> = {
  environments: 'environment',
  roles: 'role',
  rewards: 'reward',
  policies: 'policy',
};

/** One registered contribution. */
export interface ContributionEntry<T = unknown> {
  /** Its kind. */
  readonly kind: ContributionKind;
  /** Its id (`plan-path-v0`, or a policy kind such as `oracle`). */
  readonly id: string;
  /** The contribution object bound in the container. */
  readonly contribution: T;
  /** The package (or built-in module name) that provides it. */
  readonly plugin: string;
  /** The package folder, for plugins loaded from packages. */
  readonly dir?: string;
  /** Description, from the manifest or the contribution. */
  readonly description: string;
  /** Compiled config validator (useDefaults on): from the manifest's schema file, else the contribution's schema. */
  readonly validate: ValidateFunction;
  /** The schema file the validator came from, when it came from a file. */
  readonly schemaFile?: string;
}

/** Splits `name-vN` into its name and version (version -1 when unversioned). */
export function parseVersionedId(id: string): { readonly name: string; readonly version: number } {
  const m = /^(.*)-v(\d+)$/.exec(id);
  return m ? { name: m[1]!, version: Number(m[2]) } : { name: id, version: -1 };
}

/**
 * Contributions by kind and id. Lookup accepts an exact id (`plan-path-v0`) or an unversioned name (`plan-path`),
 * which selects the highest registered `-vN`.
 */
export class ContributionRegistry {
  private readonly byKind = new Map<ContributionKind, Map<string, ContributionEntry>>();

  /** Adds an entry; a duplicate id throws a {@link PluginError} naming both packages. */
  add(entry: ContributionEntry): void {
    let map = this.byKind.get(entry.kind);
    if (!map) this.byKind.set(entry.kind, (map = new Map()));
    const existing = map.get(entry.id);
    if (existing) {
      throw new PluginError(
        entry.plugin,
        `${KIND_NOUN[entry.kind]} id "${entry.id}" is already provided by ${existing.plugin}`,
        {
          hint: `uninstall one of ${existing.plugin} and ${entry.plugin}, or give one contribution another id`,
        },
      );
    }
    map.set(entry.id, entry);
  }

  /** Whether an id is taken, and by whom. */
  owner(kind: ContributionKind, id: string): string | undefined {
    return this.byKind.get(kind)?.get(id)?.plugin;
  }

  /** Finds an entry by exact id or by unversioned name (highest version wins); undefined when none. */
  find<T = unknown>(kind: ContributionKind, idOrName: string): ContributionEntry<T> | undefined {
    const map = this.byKind.get(kind);
    if (!map) return undefined;
    const exact = map.get(idOrName);
    if (exact) return exact as ContributionEntry<T>;
    let best: ContributionEntry | undefined;
    let bestVersion = -1;
    for (const entry of map.values()) {
      const { name, version } = parseVersionedId(entry.id);
      if (name === idOrName && version > bestVersion) {
        best = entry;
        bestVersion = version;
      }
    }
    return best as ContributionEntry<T> | undefined;
  }

  /** Like {@link find}, but throws a {@link PluginError} listing what is registered (with a did-you-mean). */
  get<T = unknown>(kind: ContributionKind, idOrName: string): ContributionEntry<T> {
    const found = this.find<T>(kind, idOrName);
    if (found) return found;
    const ids = this.ids(kind);
    const names = [...new Set([...ids, ...ids.map((id) => parseVersionedId(id).name)])];
    const suggestion = closest(idOrName, names);
    const hint = suggestion
      ? `did you mean "${suggestion}"?`
      : `install and load the plugin that provides it (registered ${KIND_NOUN[kind]}s: ${ids.length ? ids.join(', ') : 'none'})`;
    throw new PluginError(idOrName, `no ${KIND_NOUN[kind]} "${idOrName}" is registered`, { hint });
  }

  /** Every entry, optionally of one kind, sorted by kind then id. */
  list(kind?: ContributionKind): ContributionEntry[] {
    const kinds = kind ? [kind] : [...this.byKind.keys()];
    return kinds.flatMap((k) => [...(this.byKind.get(k)?.values() ?? [])].sort((a, b) => a.id.localeCompare(b.id)));
  }

  /** The registered ids of one kind, sorted. */
  ids(kind: ContributionKind): string[] {
    return [...(this.byKind.get(kind)?.keys() ?? [])].sort();
  }
}
