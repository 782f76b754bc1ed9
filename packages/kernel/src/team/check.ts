/**
 * Checks of a team spec that need the plugins: the environment's seats match the spec's, each role produces its
 * seat's action type, and every config (environment, roles, policies, rewards) satisfies its contribution's schema.
 * Loads the plugins it needs into the host; imports nothing else.
 */
import { dirname } from 'node:path';
import type { Environment, SeatSpec } from '../contracts/environment.js';
import type { RewardContribution } from '../contracts/reward.js';
import { producesActionType, type RoleContribution } from '../contracts/role.js';
import type { ContributionKind } from '../contracts/manifest.js';
import type { SchemaIssue } from '../plugins/ajv.js';
import { PluginError } from '../plugins/errors.js';
import type { PluginHost } from '../plugins/loader.js';
import type { ContributionEntry } from '../plugins/registry.js';
import { defaultBaseDirs } from '../plugins/resolve.js';
import { didYouMean } from '../plugins/suggest.js';
import { SpecError, type SpecIssue } from './errors.js';
import { EMBEDDED, loadTeamSpec, specIssue } from './load.js';
import type { TeamSpec } from './types.js';

/**
 * The config a reward contribution receives for a spec: `rewards.config`, plus `seats: { <seat>: rewards.seats.<seat>.config }`
 * when at least one seat has a non-empty config (the convention of `@troupe/reward-signals`: per-seat settings such
 * as which signal is the seat's `local` term).
 */
export function rewardConfigOf(spec: TeamSpec): Record<string, unknown> {
  const seats: Record<string, Record<string, unknown>> = {};
  for (const [seat, mix] of Object.entries(spec.rewards.seats)) {
    if (mix.config && Object.keys(mix.config).length > 0) seats[seat] = mix.config;
  }
  return Object.keys(seats).length ? { ...spec.rewards.config, seats } : { ...spec.rewards.config };
}

function describe(error: unknown): { message: string; hint?: string } {
  if (error instanceof PluginError) {
    const message = error.message
      .split('\n  hint:')[0]!
      .split('\n')
      .map((l) => l.trim())
      .join('; ');
    return { message, ...(error.hint ? { hint: error.hint } : {}) };
  }
  return { message: error instanceof Error ? error.message : String(error) };
}

/**
 * Loads the plugins a spec names into `host` and checks the spec against them. Returns the problems found (empty
 * when the spec is consistent), each pointing at the YAML node of the offending key, in the same format as
 * {@link SpecError}'s issues.
 */
export async function checkTeamAgainstPlugins(spec: TeamSpec, host: PluginHost): Promise<SpecIssue[]> {
  const issues: SpecIssue[] = [];
  const baseDirs = defaultBaseDirs(spec.file === EMBEDDED ? undefined : dirname(spec.file));
  const ensure = async (
    kind: ContributionKind,
    name: string,
    path: (string | number)[],
  ): Promise<ContributionEntry | undefined> => {
    try {
      return await host.ensure(kind, name, baseDirs);
    } catch (error) {
      const { message, hint } = describe(error);
      issues.push(specIssue(spec, path, message, hint));
      return undefined;
    }
  };
  /** Validates a config; pushes its issues and returns the filled config when it is valid. */
  const configIssues = (
    kind: ContributionKind,
    id: string,
    config: unknown,
    path: (string | number)[],
    mapPath: (p: readonly (string | number)[]) => (string | number)[] = (p) => [...path, ...p],
  ): Record<string, unknown> | undefined => {
    const { config: filled, issues: found } = host.checkConfig(kind, id, config);
    for (const i of found as SchemaIssue[]) {
      issues.push(
        specIssue(spec, mapPath(i.path), i.message, i.hint ?? `see the config schema of ${id}`, {
          key: i.unknownKey === true,
        }),
      );
    }
    return found.length ? undefined : filled;
  };

  // Environment: exists, config valid, seats match.
  let envSeats: readonly SeatSpec[] | undefined;
  let envSignals: readonly string[] | undefined;
  let envId = spec.environment.id;
  const env = await ensure('environments', spec.environment.id, ['environment', 'id']);
  if (env) {
    envId = env.id;
    const before = issues.length;
    configIssues('environments', env.id, spec.environment.config, ['environment', 'config']);
    if (issues.length === before) {
      try {
        const created: Environment = host.createEnvironment(env.id, spec.environment.config);
        envSeats = created.seats;
        envSignals = created.signals;
      } catch (error) {
        const { message, hint } = describe(error);
        issues.push(specIssue(spec, ['environment'], `creating environment ${env.id} failed: ${message}`, hint));
      }
    }
  }
  if (envSeats) {
    const names = envSeats.map((s) => s.name);
    for (const seat of envSeats) {
      if (!(seat.name in spec.seats)) {
        issues.push(
          specIssue(
            spec,
            ['seats'],
            `missing seat "${seat.name}" (${seat.description || seat.actionType}) required by environment ${envId}`,
            `the environment's seats, in turn order: ${names.join(', ')}`,
            { key: true },
          ),
        );
      }
    }
    for (const seat of Object.keys(spec.seats)) {
      if (!names.includes(seat)) {
        issues.push(
          specIssue(
            spec,
            ['seats', seat],
            `environment ${envId} has no seat "${seat}"`,
            didYouMean(seat, names) ?? `its seats are: ${names.join(', ')}`,
            { key: true },
          ),
        );
      }
    }
  }

  // Roles: exist, config valid, produce the seat's action type.
  for (const [seat, entry] of Object.entries(spec.seats)) {
    const role = await ensure('roles', entry.role, ['seats', seat, 'role']);
    if (!role) continue;
    configIssues('roles', role.id, entry.roleConfig, ['seats', seat, 'roleConfig']);
    const needed = envSeats?.find((s) => s.name === seat)?.actionType;
    const produces = (role.contribution as RoleContribution).produces ?? [];
    if (needed !== undefined && !producesActionType(produces, needed)) {
      const able = host.registry
        .list('roles')
        .filter((r) => producesActionType((r.contribution as RoleContribution).produces ?? [], needed))
        .map((r) => r.id);
      issues.push(
        specIssue(
          spec,
          ['seats', seat, 'role'],
          `role ${role.id} produces ${produces.join(', ') || 'nothing'}, but seat "${seat}" of ${envId} needs ${needed}`,
          able.length ? `use a role that produces ${needed}: ${able.join(', ')}` : `use a role that produces ${needed}`,
        ),
      );
    }
  }

  // Policies: kinds exist, configs valid.
  for (const [name, entry] of Object.entries(spec.policies)) {
    const policy = await ensure('policies', entry.kind, ['policies', name, 'kind']);
    if (!policy) continue;
    const { kind: _kind, ...config } = entry;
    configIssues('policies', policy.id, config, ['policies', name]);
  }

  // Rewards: exists, config valid, weights name real terms.
  const reward = await ensure('rewards', spec.rewards.id, ['rewards', 'id']);
  if (reward) {
    // Per-seat configs travel under `seats` (see rewardConfigOf); their issues point at rewards.seats.<seat>.config.
    const injected = rewardConfigOf(spec);
    const rewardPath = (p: readonly (string | number)[]): (string | number)[] =>
      p[0] === 'seats' && 'seats' in injected && p.length >= 2
        ? ['rewards', 'seats', p[1]!, 'config', ...p.slice(2)]
        : ['rewards', 'config', ...p];
    const filled = configIssues('rewards', reward.id, injected, ['rewards', 'config'], rewardPath);
    const contribution = reward.contribution as RewardContribution;
    if (filled && envSeats && typeof contribution.check === 'function') {
      try {
        const context = {
          environment: envId,
          seats: envSeats.map((s) => s.name),
          ...(envSignals ? { signals: envSignals } : {}),
        };
        for (const problem of contribution.check(filled, context)) {
          issues.push(specIssue(spec, rewardPath(problem.path), problem.message, problem.hint));
        }
      } catch (error) {
        issues.push(
          specIssue(
            spec,
            ['rewards', 'id'],
            `the checks of reward ${reward.id} failed: ${describe(error).message}`,
            `report this to ${reward.plugin}`,
          ),
        );
      }
    }
    const terms = (reward.contribution as RewardContribution).terms ?? [];
    for (const [seat, mix] of Object.entries(spec.rewards.seats)) {
      for (const term of Object.keys(mix.weights ?? {})) {
        if (!terms.includes(term)) {
          issues.push(
            specIssue(
              spec,
              ['rewards', 'seats', seat, 'weights', term],
              `reward ${reward.id} has no term "${term}"`,
              didYouMean(term, terms) ?? `its terms are: ${terms.join(', ')}`,
              { key: true },
            ),
          );
        }
      }
    }
  }
  return issues.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.col - b.col);
}

/**
 * Everything `troupe validate` needs: loads the spec file (schema and cross-reference problems) and, when it
 * loads, checks it against the plugins (loading them into `host`). Returns every problem; empty means valid.
 * Errors other than problems of the spec (a bug, an I/O failure) are thrown.
 */
export async function validateTeamFile(file: string, host: PluginHost): Promise<SpecIssue[]> {
  let spec: TeamSpec;
  try {
    spec = loadTeamSpec(file);
  } catch (error) {
    if (error instanceof SpecError) return [...error.issues];
    throw error;
  }
  return checkTeamAgainstPlugins(spec, host);
}
