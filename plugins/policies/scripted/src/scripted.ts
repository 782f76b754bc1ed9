import {
  type Environment,
  type Completion,
  type GenerationRequest,
  type Policy,
  type PolicyContribution,
  type PolicyCreateContext,
  type ScriptedContext,
  type JsonSchema,
  type RenderContext,
  oracleRenderContext,
  DerivedRandomStreams,
  injectable,
  injectParameters,
  optionalService,
  RandomStreams,
  readConfigSchema,
} from '@troupe/kernel';

/** A scripted policy: declares `scripted: true` so the episode runner sends it the true state. */
export interface ScriptedPolicy extends Policy {
  /** Marker read by the episode runner (see `isScriptedPolicy`). */
  readonly scripted: true;
}

/** Config schema of both scripted policies (schemas/scripted.config.json): no options. */
export const SCRIPTED_POLICY_CONFIG_SCHEMA: JsonSchema = readConfigSchema(
  new URL('../schemas/scripted.config.json', import.meta.url),
);

/** Builds a completion of `text` with no tokens (scripted policies have no tokenizer). */
export function scriptedCompletion(text: string): Completion {
  return { text, promptIds: [], tokenIds: [], logprobs: [], finishReason: 'stop' };
}

function scriptedContextOf(policy: Policy, request: GenerationRequest): ScriptedContext {
  if (!request.scripted) {
    throw new Error(
      `Policy '${policy.name}' (${policy.kind}) is scripted and needs the true state, but the request has no 'scripted' context. ` +
        `Run it through runEpisode (which sends the context to policies with scripted: true), or set the seat's scriptedContext: true.`,
    );
  }
  return request.scripted;
}

/**
 * A policy whose K completions for a request come from `actionsFor(context, request, count)`, each rendered as text by
 * the seat's role. Honours the abort signal between requests.
 */
function makeScripted(
  name: string,
  kind: string,
  actionsFor: (ctx: ScriptedContext, request: GenerationRequest, self: Policy) => unknown[],
  renderContext: (ctx: ScriptedContext) => RenderContext = () => ({}),
): ScriptedPolicy {
  const policy: ScriptedPolicy = {
    name,
    kind,
    version: 0,
    scripted: true,
    async generate(requests, options) {
      const out: Completion[][] = [];
      for (const request of requests) {
        options?.signal?.throwIfAborted();
        if (!Number.isInteger(request.n) || request.n < 1)
          throw new Error(`Policy '${name}' (${kind}): n must be an integer >= 1, got ${request.n}.`);
        const ctx = scriptedContextOf(policy, request);
        const context = renderContext(ctx);
        out.push(
          actionsFor(ctx, request, policy).map((a) => scriptedCompletion(ctx.role.render(a, ctx.seat, context))),
        );
      }
      return out;
    },
  };
  return policy;
}

/** Creates an `oracle` policy: every sample is the environment's optimal action, rendered by the seat's role. */
export function createOraclePolicy(name: string): ScriptedPolicy {
  return makeScripted(
    name,
    'oracle',
    (ctx, request) => {
      const env: Environment = ctx.environment;
      if (typeof env.oracle !== 'function') {
        throw new Error(
          `Policy '${name}' (oracle): environment '${env.id}' has no oracle, so it cannot be played by an oracle policy. ` +
            `Use kind: random or a model policy for this seat.`,
        );
      }
      const action = env.oracle(ctx.state, ctx.seat.seat);
      return Array.from({ length: request.n }, () => action);
    },
    (ctx) => oracleRenderContext(ctx.environment, ctx.state, ctx.seat.seat),
  );
}

/**
 * Creates a `random` policy: each sample is `environment.randomAction` drawn with a generator seeded from the request
 * seed (so the same request gives the same K samples), rendered by the seat's role.
 */
export function createRandomPolicy(
  name: string,
  seed = 0,
  random: RandomStreams = new DerivedRandomStreams(),
): ScriptedPolicy {
  return makeScripted(name, 'random', (ctx, request) => {
    const rng = random.stream('random-policy', seed, request.seed);
    return Array.from({ length: request.n }, () => ctx.environment.randomAction(ctx.state, ctx.seat.seat, rng));
  });
}

/** The `oracle` policy kind: plays the environment's oracle (tests, demonstrations, upper bounds). */
@injectable()
export class OraclePolicyContribution implements PolicyContribution {
  readonly id = 'oracle';
  readonly description = "Plays the environment's optimal action (scripted; needs an environment with an oracle).";
  readonly configSchema = SCRIPTED_POLICY_CONFIG_SCHEMA;

  create(name: string): Policy {
    return createOraclePolicy(name);
  }
}

/**
 * The `random` policy kind: plays uniformly random actions (baselines and tests), from the process's random streams
 * named by the policy seed and the request seed.
 */
@injectable()
export class RandomPolicyContribution implements PolicyContribution {
  readonly id = 'random';
  readonly description = "Plays the environment's random actions (scripted; seeded by the request seed).";
  readonly configSchema = SCRIPTED_POLICY_CONFIG_SCHEMA;

  /** @param random the process's random streams */
  constructor(private readonly random: RandomStreams = new DerivedRandomStreams()) {}

  create(name: string, _config: Record<string, unknown>, context: PolicyCreateContext): Policy {
    return createRandomPolicy(name, context.seed, this.random);
  }
}
injectParameters(RandomPolicyContribution, [optionalService(RandomStreams)]);
