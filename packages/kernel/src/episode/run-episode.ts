import { Observable } from 'rxjs';
import type { Move } from '../contracts/common.js';
import type { StepResult, Termination } from '../contracts/environment.js';
import type { Completion, GenerationRequest } from '../contracts/policy.js';
import type { Role, SeatContext } from '../contracts/role.js';
import { deriveSeed } from '../util/rng.js';
import {
  DEFAULT_REWARD_MIX,
  deepFreeze,
  isScriptedPolicy,
  mixReward,
  type EpisodeContext,
  type SeatBinding,
} from './context.js';
import type { EndEvent, EpisodeEvent, EpisodeEventBase, StepRecord } from './events.js';
import { selectBranch, type BranchSelection } from './select.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The seed of the generation request of (episode, turn, seat): every branch of one group comes from one request with
 * this seed, so the same episode seed gives the same samples on the same backend.
 */
export function sampleSeed(seed: number, episodeId: string, turn: number, seat: string): number {
  return deriveSeed(seed, 'sample', episodeId, turn, seat);
}

/**
 * Plays one episode to its end and reports every event through `emit`, in order. This is the plain async form of
 * {@link runEpisode} (which wraps it in a cold Observable); use it where no stream is wanted. Rejects with the
 * signal's reason (an `AbortError`) when `signal` fires, and with a descriptive error when a plugin fails.
 *
 * The algorithm (AT-GRPO, as the Stronger-MAS paper describes it): for each turn, for each seat IN ORDER, the seat observes the current state; its policy
 * samples K completions of that one prompt (one request with n = K); each completion is parsed and stepped on the SAME
 * immutable state; each branch's reward terms are mixed (r = α·team + Σ w·terms); the best branch is selected (ties:
 * terminal success first, then a seeded random choice; or the greedy branch, for a seat that continues from it) and
 * becomes the current state, which the next seat observes.
 * The episode ends when the selected branch is done, or after the turn limit (truncated).
 */
export async function playEpisode(
  ctx: EpisodeContext,
  emit: (event: EpisodeEvent) => void,
  signal?: AbortSignal,
): Promise<EndEvent> {
  const env = ctx.environment;
  const episodeId = ctx.episodeId ?? ctx.instanceUid;
  const base: EpisodeEventBase = { episodeId, instanceUid: ctx.instanceUid, split: ctx.split };
  const episodeK = ctx.branches ?? 1;
  const maxTurns = ctx.maxTurns ?? env.maxTurns;
  validateContext(ctx, episodeK, maxTurns);
  const freeze = ctx.freezeStates === true ? <T>(x: T): T => deepFreeze(x) : <T>(x: T): T => x;
  const where = (): string => `episode '${episodeId}' (environment '${env.id}', instance '${ctx.instanceUid}')`;

  signal?.throwIfAborted();
  let state: unknown = freeze(env.reset(ctx.instance));
  emit({
    ...base,
    type: 'reset',
    environment: env.id,
    seats: ctx.seats.map((s) => s.name),
    branches: episodeK,
    maxTurns,
    seed: ctx.seed,
  });

  const sums: Record<string, number> = Object.fromEntries(ctx.seats.map((s) => [s.name, 0]));
  let success = false;
  let termination: Termination = { terminated: false, truncated: true };
  let turns = 0;

  play: for (let turn = 0; turn < maxTurns; turn++) {
    signal?.throwIfAborted();
    turns = turn + 1;
    emit({ type: 'turn', episodeId, instanceUid: ctx.instanceUid, split: ctx.split, turn });
    for (let seatIndex = 0; seatIndex < ctx.seats.length; seatIndex++) {
      const binding = ctx.seats[seatIndex]!;
      const seatName = binding.name;
      const seatWhere = (): string => `${where()}, turn ${turn}, seat '${seatName}'`;
      const seatCtx: SeatContext = { seat: seatName, actionType: env.seats[seatIndex]!.actionType, signal };
      const K = binding.branches ?? episodeK;

      // 1. One prompt from the current (selected) state, shared by all K branches.
      const observation = env.observe(state, seatName);
      const prompt = binding.role.prompt(observation, seatCtx);
      const request: Mutable<GenerationRequest> = {
        messages: prompt,
        sampling: binding.sampling,
        n: K,
        seed: sampleSeed(ctx.seed, episodeId, turn, seatName),
      };
      if (ctx.grammar === true && binding.role.grammar) {
        const grammar = binding.role.grammar(seatCtx);
        if (grammar) request.grammar = grammar;
      }
      if (wantsScripted(binding)) request.scripted = { environment: env, state, role: binding.role, seat: seatCtx };

      // 2. K samples in one request; with a greedy branch, branch 0 comes from a second, greedy request (its log-probs
      //    at the seat's sampling temperature, the distribution the group is trained at) and K − 1 are sampled.
      const policyVersion = binding.policy.version;
      const greedy = binding.greedyBranch === true && K >= 2;
      const requests: GenerationRequest[] = greedy
        ? [
            {
              ...request,
              sampling: { ...binding.sampling, temperature: 0 },
              n: 1,
              logprobTemperature: binding.sampling.temperature > 0 ? binding.sampling.temperature : 1,
            },
            { ...request, n: K - 1 },
          ]
        : [request];
      const completions = await generate(binding, requests, signal, seatWhere);
      signal?.throwIfAborted();

      // 3. Parse every branch (roles may run tools, so in parallel); a scripted policy may give its move itself.
      const moves = await Promise.all(completions.map((c) => c.move ?? parseSafely(binding.role, c.text, seatCtx)));
      signal?.throwIfAborted();

      // 4. Step every branch ONCE on the same immutable state.
      const before = state;
      let results: StepResult<unknown>[];
      try {
        results = await Promise.all(moves.map(async (move) => await env.step(before, seatName, move)));
      } catch (err) {
        signal?.throwIfAborted();
        throw new Error(`${seatWhere()}: environment step failed: ${messageOf(err)}`, { cause: err });
      }
      signal?.throwIfAborted();
      for (const r of results) freeze(r.state);

      // 5. Reward terms and mixed reward per branch.
      const mix = binding.rewardMix ?? DEFAULT_REWARD_MIX;
      const terms = results.map((result, branch) => {
        try {
          return ctx.reward.terms({ seat: seatName, turn, before, move: moves[branch]!, result });
        } catch (err) {
          throw new Error(`${seatWhere()}: reward function '${ctx.reward.id}' failed: ${messageOf(err)}`, {
            cause: err,
          });
        }
      });
      const rewards = terms.map((t) => mixReward(t, mix, () => `${seatWhere()}: reward '${ctx.reward.id}'`));

      // 6. Select the branch the episode continues from: the best one, or the greedy one when the seat asks for it.
      const selection: BranchSelection =
        greedy && binding.continueFromGreedy === true
          ? { branch: 0, reason: 'greedy' }
          : selectBranch(
              results.map((r, c) => ({
                reward: rewards[c]!,
                success: r.success,
                done: r.done.terminated || r.done.truncated,
              })),
              { seed: ctx.seed, episodeId, turn, seat: seatName },
            );

      // 7. One record per branch, sample and outcome together, then the selection that closes the group.
      for (let branch = 0; branch < K; branch++) {
        const c = completions[branch]!;
        const move = moves[branch]!;
        const r = results[branch]!;
        // Built property by property: object spreads in this hot loop cost more than everything else per step.
        const record: Mutable<StepRecord> = {
          type: 'step',
          episodeId,
          instanceUid: ctx.instanceUid,
          split: ctx.split,
          turn,
          seat: seatName,
          role: binding.role.id,
          policy: binding.policy.name,
          policyVersion,
          branch,
          prompt,
          completion: c.text,
          promptIds: c.promptIds,
          tokenIds: c.tokenIds,
          logprobs: c.logprobs,
          temperature: binding.sampling.temperature,
          finishReason: c.finishReason,
          terms: terms[branch]!,
          reward: rewards[branch]!,
          selected: branch === selection.branch,
          done: r.done,
          success: r.success,
          signals: r.signals,
        };
        if (greedy && branch === 0) record.greedy = true;
        if (move.kind === 'action') record.action = move.action;
        else record.parseError = move.error;
        if (move.details !== undefined) record.details = move.details;
        if (r.info !== undefined) record.info = r.info;
        emit(record);
      }
      emit({
        type: 'select',
        episodeId,
        instanceUid: ctx.instanceUid,
        split: ctx.split,
        turn,
        seat: seatName,
        branch: selection.branch,
        rewards,
        reason: selection.reason,
      });

      const chosen = results[selection.branch]!;
      state = chosen.state;
      sums[seatName]! += rewards[selection.branch]!;
      success = chosen.success;
      if (chosen.done.terminated || chosen.done.truncated) {
        termination = { terminated: chosen.done.terminated, truncated: chosen.done.truncated };
        break play;
      }
    }
  }

  const end: EndEvent = { ...base, type: 'end', success, turns, rewards: sums, termination };
  emit(end);
  return end;
}

/**
 * Runs one episode as a COLD observable: nothing happens until it is subscribed, each subscription plays the episode
 * afresh, and unsubscribing aborts it (the AbortSignal handed to `policy.generate` and `role.parse` fires, and no
 * further environment step starts). Errors of plugins arrive as the stream's error, with the episode, turn and seat
 * in the message.
 */
export function runEpisode(ctx: EpisodeContext): Observable<EpisodeEvent> {
  return new Observable<EpisodeEvent>((subscriber) => {
    const controller = new AbortController();
    let finished = false;
    playEpisode(ctx, (event) => subscriber.next(event), controller.signal).then(
      () => {
        finished = true;
        subscriber.complete();
      },
      (err: unknown) => {
        finished = true;
        if (!controller.signal.aborted) subscriber.error(err);
      },
    );
    return () => {
      if (!finished) controller.abort();
    };
  });
}

function validateContext(ctx: EpisodeContext, K: number, maxTurns: number): void {
  const env = ctx.environment;
  const want = env.seats.map((s) => s.name);
  const got = ctx.seats.map((s) => s.name);
  if (want.length !== got.length || want.some((w, i) => w !== got[i])) {
    throw new Error(
      `Episode for environment '${env.id}': seats must be exactly the environment's seats in turn order [${want.join(', ')}], got [${got.join(', ')}]. Fix the team spec's 'seats'.`,
    );
  }
  if (!Number.isInteger(K) || K < 1)
    throw new Error(`Episode for environment '${env.id}': branches must be an integer >= 1, got ${K}.`);
  for (const s of ctx.seats) {
    if (s.branches !== undefined && (!Number.isInteger(s.branches) || s.branches < 1)) {
      throw new Error(
        `Episode for environment '${env.id}': seat '${s.name}' branches must be an integer >= 1, got ${s.branches}.`,
      );
    }
  }
  if (!Number.isInteger(maxTurns) || maxTurns < 1 || maxTurns > env.maxTurns) {
    throw new Error(
      `Episode for environment '${env.id}': maxTurns must be an integer in [1, ${env.maxTurns}] (the environment's limit), got ${maxTurns}.`,
    );
  }
}

function wantsScripted(binding: SeatBinding): boolean {
  return binding.scriptedContext ?? isScriptedPolicy(binding.policy);
}

/** The completions of `requests`, in request order (one policy call). */
async function generate(
  binding: SeatBinding,
  requests: readonly GenerationRequest[],
  signal: AbortSignal | undefined,
  where: () => string,
): Promise<readonly Completion[]> {
  let out: Completion[][];
  try {
    out = await binding.policy.generate(requests, signal ? { signal } : {});
  } catch (err) {
    signal?.throwIfAborted();
    throw new Error(
      `${where()}: policy '${binding.policy.name}' (${binding.policy.kind}) failed to generate: ${messageOf(err)}`,
      { cause: err },
    );
  }
  const policy = `policy '${binding.policy.name}' (${binding.policy.kind})`;
  if (!Array.isArray(out) || out.length !== requests.length) {
    throw new Error(
      `${where()}: ${policy} returned ${Array.isArray(out) ? out.length : 'no'} results for ${requests.length} requests.`,
    );
  }
  return requests.flatMap((request, i) => {
    const completions = out[i];
    if (!Array.isArray(completions) || completions.length !== request.n) {
      throw new Error(
        `${where()}: ${policy} returned ${Array.isArray(completions) ? completions.length : 'no'} completions for a request with n = ${request.n}.`,
      );
    }
    return completions;
  });
}

async function parseSafely(role: Role, text: string, seat: SeatContext): Promise<Move> {
  try {
    return await role.parse(text, seat);
  } catch (err) {
    seat.signal?.throwIfAborted();
    // The Role contract says parse never throws; a throw is a role bug. Record it as an invalid move (visible in the
    // trace's parse errors) rather than killing a long run.
    return {
      kind: 'invalid',
      error: `role '${role.id}' threw while parsing (a bug in the role): ${messageOf(err)}`,
      text,
    };
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
