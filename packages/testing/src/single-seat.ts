/**
 * The single-agent variant suite of the game teams (the paper's team workflow shared by the games): a game
 * environment whose seats are `proposer` then `executor` offers `config.seats: ["executor"]`, the paper's "single
 * agent" baseline, in which the executor plays alone on the same instances and is never shown a proposal.
 */
import type { Environment, EnvironmentContribution, Move, RewardFunction, Role, SeatContext } from '@troupe/kernel';
import type { ConformanceCheck, ConformanceFailure } from './core.js';
import { check, describeError, guardedChecks, registerChecks, runChecks } from './core.js';
import { compileValidator } from './schema.js';

/** Options of the single-seat suite. */
export interface SingleSeatConformanceOptions {
  /** Config keys of both variants (the suite sets `seats`). Default `{}`. */
  readonly config?: Record<string, unknown>;
  /** Test instances compared with the team's and solved by the oracle. Default 10. */
  readonly instances?: number;
  /** Seed of the instance stream. Default 3. */
  readonly seed?: number;
  /**
   * The role that plays the executor: the oracle's action then goes through `render` and `parse`, and the prompt
   * must contain the observation's state.
   */
  readonly role?: Role;
  /** A reward function mapping the team term and the executor's local term to `executed_reward`: terms are checked. */
  readonly reward?: RewardFunction;
}

/** Seat lists that are neither the team nor the executor alone. */
export const BAD_SEAT_LISTS: readonly unknown[] = Object.freeze([
  ['proposer'],
  ['executor', 'proposer'],
  [],
  'executor',
  ['executor', 'executor'],
  ['nobody'],
]);

/** The checks of the single-seat suite. */
export function singleSeatChecks(
  contribution: EnvironmentContribution,
  options: SingleSeatConformanceOptions = {},
): ConformanceCheck[] {
  const suite = singleSeatSuiteName(contribution);
  const config = options.config ?? {};
  const count = options.instances ?? 10;
  const seed = options.seed ?? 3;
  const team = (): Environment => contribution.create({ ...config, seats: ['proposer', 'executor'] });
  const single = (): Environment => contribution.create({ ...config, seats: ['executor'] });
  const seatOf = (env: Environment): SeatContext => ({ seat: 'executor', actionType: env.seats[0]!.actionType });

  return [
    check(suite, 'the two-seat team is the default; seats: ["executor"] leaves the executor alone', (fail) => {
      const names = contribution.create({ ...config }).seats.map((s) => s.name);
      if (names.join() !== 'proposer,executor')
        fail(`the default seats are ${JSON.stringify(names)}, expected ["proposer","executor"]`);
      const alone = single().seats;
      if (alone.map((s) => s.name).join() !== 'executor')
        fail(`seats: ["executor"] gives the seats ${JSON.stringify(alone.map((s) => s.name))}`);
      const teamExecutor = team().seats.find((s) => s.name === 'executor');
      if (alone[0] && teamExecutor && alone[0].actionType !== teamExecutor.actionType) {
        fail(`the lone executor produces ${alone[0].actionType}, the team's executor ${teamExecutor.actionType}`);
      }
    }),
    check(suite, 'any other seat list is a config error naming config.seats and the value given', (fail) => {
      for (const seats of BAD_SEAT_LISTS) {
        try {
          contribution.create({ ...config, seats });
          fail(`create accepted seats ${JSON.stringify(seats)}`);
        } catch (err) {
          const message = describeError(err);
          if (!message.includes('config.seats') || !message.includes(JSON.stringify(seats))) {
            fail(
              `seats ${JSON.stringify(seats)}: the error does not name config.seats and the value given: ${message}`,
            );
          }
        }
      }
      const validate = compileValidator(contribution.configSchema);
      const ok = validate({ ...config, seats: ['executor'] });
      if (ok !== null) fail(`the config schema rejects seats: ["executor"]: ${ok}`);
      for (const seats of [[], ['executor', 'executor'], ['nobody']]) {
        if (validate({ ...config, seats }) === null) fail(`the config schema accepts seats ${JSON.stringify(seats)}`);
      }
    }),
    check(suite, 'plays the same instances as the team (the baseline is measured on the same tasks)', (fail) => {
      const a = team(),
        b = single();
      for (let i = 0; i < count; i++) {
        const ka = a.instanceKey(a.instance('test', i, seed)),
          kb = b.instanceKey(b.instance('test', i, seed));
        if (ka !== kb) fail(`test instance ${i} (seed ${seed}): team ${ka.slice(0, 12)}, single ${kb.slice(0, 12)}`);
      }
    }),
    check(suite, 'the proposer seat does not exist, and the executor is never shown a proposal', async (fail) => {
      const env = single();
      const s0 = env.reset(env.instance('test', 0, seed));
      const invalid: Move = { kind: 'invalid', error: 'x', text: 'x' };
      for (const [what, call] of [
        ['observe', () => env.observe(s0, 'proposer')],
        ['step', () => env.step(s0, 'proposer', invalid)],
      ] as const) {
        try {
          await call();
          fail(`${what}(state, "proposer") did not throw`);
        } catch (err) {
          if (!/unknown seat "proposer"/.test(describeError(err)))
            fail(`${what}(state, "proposer") threw without naming the unknown seat: ${describeError(err)}`);
        }
      }
      let state = s0;
      let ended = false;
      for (let turn = 0; turn < env.maxTurns && !ended; turn++) {
        const obs = env.observe(state, 'executor');
        if (/\bproposer\b|\bproposal\b/i.test(obs.task))
          fail(`turn ${turn}: the task mentions a proposer or a proposal`);
        if (obs.context.some((c) => /proposal/i.test(c.label)))
          fail(`turn ${turn}: a context block is labelled ${JSON.stringify(obs.context.map((c) => c.label))}`);
        const r = await env.step(state, 'executor', invalid);
        ended = r.done.terminated || r.done.truncated;
        state = r.state;
      }
    }),
    check(suite, 'an episode ends after maxTurns executor turns (truncated, not solved)', async (fail) => {
      const env = single();
      let state = env.reset(env.instance('test', 1, seed));
      for (let turn = 1; turn <= env.maxTurns; turn++) {
        const r = await env.step(state, 'executor', { kind: 'invalid', error: 'x', text: 'x' });
        const last = turn === env.maxTurns;
        if (r.done.truncated !== last || r.done.terminated || r.success)
          fail(`turn ${turn} of ${env.maxTurns}: done ${JSON.stringify(r.done)}, success ${r.success}`);
        state = r.state;
      }
    }),
    check(suite, 'the oracle solves every test instance in one executor turn', async (fail) => {
      const env = single();
      if (!env.oracle) return;
      for (let i = 0; i < count; i++) {
        const s0 = env.reset(env.instance('test', i, seed));
        const action = env.oracle(s0, 'executor');
        let move: Move = { kind: 'action', action, text: '' };
        if (options.role) {
          const obs = env.observe(s0, 'executor');
          if (!options.role.prompt(obs, seatOf(env)).some((m) => m.content.includes(obs.state)))
            fail(`test instance ${i}: the role's prompt does not contain the state`);
          move = (await options.role.parse(options.role.render(action, seatOf(env)), seatOf(env))) as Move;
        }
        const r = await env.step(s0, 'executor', move);
        if (!r.success || !r.done.terminated)
          fail(`test instance ${i}: the oracle's action (${move.kind}) did not solve it in one turn`);
        if ((r.signals.proposal_reward ?? 0) !== 0)
          fail(`test instance ${i}: proposal_reward ${r.signals.proposal_reward} with no proposer`);
        if (options.reward) {
          const terms = options.reward.terms({ seat: 'executor', turn: 0, before: s0, move, result: r });
          if (terms.team !== terms.local || !(terms.local! > 0))
            fail(`test instance ${i}: reward terms ${JSON.stringify(terms)} (expected team = local > 0)`);
        }
      }
    }),
  ];
}

/** The suite's name for a contribution. */
function singleSeatSuiteName(contribution: EnvironmentContribution): string {
  return `single-agent variant of ${contribution.id}`;
}

/** Registers the single-seat suite as mocha tests. */
export function singleSeatConformance(
  contribution: EnvironmentContribution,
  options: SingleSeatConformanceOptions = {},
): void {
  const suite = singleSeatSuiteName(contribution);
  registerChecks(suite, () => guardedChecks(suite, () => singleSeatChecks(contribution, options)));
}

/** Runs the single-seat suite and returns every failure. */
export async function checkSingleSeatConformance(
  contribution: EnvironmentContribution,
  options: SingleSeatConformanceOptions = {},
): Promise<ConformanceFailure[]> {
  const suite = singleSeatSuiteName(contribution);
  return runChecks(guardedChecks(suite, () => singleSeatChecks(contribution, options)));
}
