/**
 * From a validated team spec to live objects: loads the plugins the spec names, checks the spec against them,
 * and creates the environment, the roles, the reward function and the policies, bound seat by seat.
 */
import { dirname } from 'node:path';
import type { ContributionKind } from '../contracts/manifest.js';
import type { Environment } from '../contracts/environment.js';
import type { Policy } from '../contracts/policy.js';
import type { RewardFunction } from '../contracts/reward.js';
import type { SeatBinding } from '../episode/context.js';
import { PluginHost, type BuiltinModule } from '../plugins/loader.js';
import { defaultBaseDirs } from '../plugins/resolve.js';
import { checkTeamAgainstPlugins, rewardConfigOf } from '../team/check.js';
import { SpecError } from '../team/errors.js';
import { EMBEDDED, withSpecChanges } from '../team/load.js';
import type { TeamSpec } from '../team/types.js';
import { createRng, deriveSeed } from '../util/rng.js';

/**
 * A plugin host for a spec file: packages resolve from the spec's folder, the cwd, then the kernel's location.
 * Every contribution, policy kinds included (`oracle` from @troupe/policy-scripted, `tfjs-causal-lm` from
 * @troupe/policy-causal-lm), is loaded on demand from the installed plugin that declares it; `builtins` are
 * modules bound up front without a package (tests, embedders).
 */
export function createHostFor(specFile: string | undefined, builtins: readonly BuiltinModule[] = []): PluginHost {
  const specDir = specFile && specFile !== EMBEDDED ? dirname(specFile) : undefined;
  return new PluginHost({ builtins, baseDirs: defaultBaseDirs(specDir) });
}

/** A team ready to play: everything an episode needs, created from a spec. */
export interface TeamRuntime {
  /** The spec it was built from (after overrides). */
  readonly spec: TeamSpec;
  /** The plugin host holding every loaded plugin. */
  readonly host: PluginHost;
  /** The environment. */
  readonly environment: Environment;
  /** Seats in the environment's turn order. */
  readonly seats: readonly SeatBinding[];
  /** The reward function. */
  readonly reward: RewardFunction;
  /** Policies by name (shared between seats that name the same policy). */
  readonly policies: ReadonlyMap<string, Policy>;
  /** Releases the policies' resources. */
  dispose(): Promise<void>;
}

/** Options of {@link composeTeam}. */
export interface ComposeOptions {
  /** A host to use (default: a new one for the spec's folder). */
  readonly host?: PluginHost;
  /** Replace every policy by one of this kind (e.g. `oracle`, `random`): `troupe run --policy`. */
  readonly policyOverride?: string;
}

/** Replaces every policy of a spec with one policy of kind `kind` named after it, keeping seat assignments. */
export function overridePolicies(spec: TeamSpec, kind: string): TeamSpec {
  const policies = Object.fromEntries(Object.keys(spec.policies).map((name) => [name, { kind }]));
  return withSpecChanges(spec, { policies });
}

/**
 * Loads and checks every plugin the spec names, then creates the team. Throws {@link SpecError} listing every
 * problem (with file:line:col) when the spec does not fit its plugins.
 */
export async function composeTeam(specIn: TeamSpec, options: ComposeOptions = {}): Promise<TeamRuntime> {
  const spec = options.policyOverride ? overridePolicies(specIn, options.policyOverride) : specIn;
  const host = options.host ?? createHostFor(spec.file);
  const issues = await checkTeamAgainstPlugins(spec, host);
  if (issues.length) throw new SpecError(spec.file, issues);

  // The registered id of what the spec names: a shorthand, a package name or a folder (`./plugins/maze`) as the check resolved it.
  const baseDirs = defaultBaseDirs(spec.file === EMBEDDED ? undefined : dirname(spec.file));
  const idOf = async (kind: ContributionKind, name: string): Promise<string> =>
    (await host.ensure(kind, name, baseDirs)).id;
  const environment = host.createEnvironment(
    await idOf('environments', spec.environment.id),
    spec.environment.config,
    'environment.config',
  );
  const reward = host.createReward(await idOf('rewards', spec.rewards.id), rewardConfigOf(spec), 'rewards.config');
  const roles = new Map<string, string>();
  for (const entry of Object.values(spec.seats)) roles.set(entry.role, await idOf('roles', entry.role));
  const policies = new Map<string, Policy>();
  try {
    for (const [name, entry] of Object.entries(spec.policies)) {
      const seed = deriveSeed(spec.seed, 'policy', name);
      const policy = await host.createPolicy(
        await idOf('policies', entry.kind),
        name,
        entry,
        { baseDir: spec.file === EMBEDDED ? process.cwd() : dirname(spec.file), seed, rng: createRng(seed) },
        `policies.${name}`,
      );
      policies.set(name, policy);
    }
  } catch (err) {
    await Promise.all([...policies.values()].map((p) => p.dispose?.()));
    throw err;
  }
  const seats: SeatBinding[] = environment.seats.map((seat) => {
    const entry = spec.seats[seat.name]!;
    const mix = spec.rewards.seats[seat.name];
    return {
      name: seat.name,
      role: host.createRole(roles.get(entry.role)!, entry.roleConfig, `seats.${seat.name}.roleConfig`),
      policy: policies.get(entry.policy)!,
      sampling: entry.sampling,
      rewardMix: { alpha: mix?.alpha ?? 1, weights: mix?.weights ?? {} },
    };
  });
  return {
    spec,
    host,
    environment,
    seats,
    reward,
    policies,
    dispose: async () => {
      await Promise.all([...policies.values()].map((p) => p.dispose?.()));
    },
  };
}
