/**
 * Oracle play through the one turn loop (episode/run-episode.ts): every seat is played by a scripted policy that
 * chooses the environment's oracle action (or, with noise, a random one), renders it with the seat's role and hands
 * the loop the move itself, so nothing parses it back. `troupe env sample` shows each instance's oracle solution
 * this way, and the trainer's warm start takes its demonstrations from it.
 */
import type { ChatMessage, Rng, Split } from '../contracts/common.js';
import type { Environment } from '../contracts/environment.js';
import type { Completion, GenerationRequest, Policy, SamplingParams } from '../contracts/policy.js';
import type { RewardFunction } from '../contracts/reward.js';
import { ANY_ACTION_TYPE, type Role } from '../contracts/role.js';
import type { ScriptedPolicyMarker, SeatBinding } from '../episode/context.js';
import type { StepRecord } from '../episode/events.js';
import { oracleRenderContext } from '../episode/render-context.js';
import { playEpisode } from '../episode/run-episode.js';
import { EpisodeAssembler, type EpisodeRecord } from '../rollout/records.js';

/** One seat of oracle play: the role that prompts and renders, and the policy name its records carry. */
export interface OracleSeat {
  /** Seat name (the environment's seats, in turn order). */
  readonly name: string;
  /** The role whose prompt the records keep and whose rendering of the action is the completion. */
  readonly role: Role;
  /** Policy name written in the records. Default `oracle`. */
  readonly policy?: string;
}

/** Random actions in place of the oracle's (DART-style demonstrations). */
export interface OracleNoise {
  /** Probability that a seat plays a random action instead of the oracle's; seats not named: 0. */
  readonly probability: number | Readonly<Record<string, number>>;
  /**
   * The stream of the draws and the random actions. Share one stream across play-throughs played one after the
   * other and they draw in play order, so the same seed gives the same demonstrations.
   */
  readonly rng: Rng;
}

/** Options of {@link playOracle}. */
export interface OraclePlayOptions {
  /** The seats' roles and policy names; default a bare role per seat (no prompt; the action as JSON text). */
  readonly seats?: readonly OracleSeat[];
  /** Play random actions now and then (each record then keeps the oracle's text too, see {@link oracleText}). */
  readonly noise?: OracleNoise;
  /** Split written in the records. Default `train`. */
  readonly split?: Split;
  /** Instance uid written in the records. Default the first 12 characters of the instance key. */
  readonly instanceUid?: string;
  /** Episode seed written in the records (oracle play draws nothing from it). Default 0. */
  readonly seed?: number;
}

/** The text the oracle would have written for a step record of oracle play (the completion, unless noise played another action). */
export function oracleText(step: StepRecord): string {
  const text = step.details?.['oracleText'];
  return typeof text === 'string' ? text : step.completion;
}

/**
 * Plays `instance` to its end with the environment's oracle for every seat and returns the episode record (its step
 * records, in play order, and its end). Undefined when the environment has no oracle.
 */
export async function playOracle<I>(
  environment: Environment<I>,
  instance: I,
  options: OraclePlayOptions = {},
): Promise<EpisodeRecord | undefined> {
  if (typeof environment.oracle !== 'function') return undefined;
  const seats = options.seats ?? environment.seats.map((s) => ({ name: s.name, role: bareRole }));
  const assembler = new EpisodeAssembler();
  let record: EpisodeRecord | undefined;
  await playEpisode(
    {
      environment,
      instance,
      split: options.split ?? 'train',
      instanceUid: options.instanceUid ?? environment.instanceKey(instance).slice(0, 12),
      seats: seats.map((seat) => oracleSeatBinding(environment, seat, options.noise)),
      reward: NO_REWARD,
      seed: options.seed ?? 0,
    },
    (event) => {
      record = assembler.push(event).episode ?? record;
    },
  );
  return record!;
}

const ORACLE_SAMPLING: SamplingParams = Object.freeze({ temperature: 0, topP: 1, topK: 0, maxTokens: 0 });

/** Oracle play scores nothing: every step's reward is 0 (no terms, α = 0). */
const NO_REWARD: RewardFunction = Object.freeze({ id: 'none', terms: () => ({}) });

/** The role of oracle play without a team: no prompt, and the action rendered as its JSON text. */
const bareRole: Role = Object.freeze({
  id: 'oracle-play',
  produces: Object.freeze([ANY_ACTION_TYPE]),
  prompt: (): ChatMessage[] => [],
  parse: (text: string) => ({
    kind: 'invalid' as const,
    error: 'oracle play gives its moves; nothing parses them',
    text,
  }),
  render: (action: unknown) => JSON.stringify(action) ?? '',
});

function oracleSeatBinding(environment: Environment, seat: OracleSeat, noise: OracleNoise | undefined): SeatBinding {
  const p =
    noise === undefined
      ? 0
      : typeof noise.probability === 'number'
        ? noise.probability
        : (noise.probability[seat.name] ?? 0);
  const name = seat.policy ?? 'oracle';
  const oracle = environment.oracle!.bind(environment);
  const policy: Policy & ScriptedPolicyMarker = {
    name,
    kind: 'oracle',
    version: 0,
    scripted: true,
    async generate(requests: readonly GenerationRequest[]): Promise<Completion[][]> {
      return requests.map((request) => {
        const ctx = request.scripted!;
        const action = oracle(ctx.state, seat.name);
        const text = seat.role.render(action, ctx.seat, oracleRenderContext(environment, ctx.state, seat.name));
        const played =
          p > 0 && noise!.rng.next() < p ? environment.randomAction(ctx.state, seat.name, noise!.rng) : action;
        const playedText = played === action ? text : seat.role.render(played, ctx.seat);
        const move = {
          kind: 'action' as const,
          action: played,
          text: playedText,
          ...(played === action ? {} : { details: { oracleText: text } }),
        };
        return Array.from({ length: request.n }, () => ({
          text: playedText,
          promptIds: [],
          tokenIds: [],
          logprobs: [],
          finishReason: 'stop' as const,
          move,
        }));
      });
    },
  };
  return { name: seat.name, role: seat.role, policy, sampling: ORACLE_SAMPLING, rewardMix: { alpha: 0, weights: {} } };
}
