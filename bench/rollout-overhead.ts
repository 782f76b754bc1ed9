/**
 * What does RxJS cost in the rollout engine? Runs the same episodes (a trivial environment, a zero-cost scripted
 * policy) two ways and prints the time per seat-step:
 *   plain       — `playEpisode` in a plain async loop with a promise pool (events go to a callback)
 *   observable  — `runEpisodes` (mergeMap(runEpisode, n)) subscribed, events counted by the subscriber
 * Run: npx tsx --conditions=troupe:source bench/rollout-overhead.ts [episodes=400] [turns=50] [concurrency=8] [rounds=5]
 */
import {
  playEpisode,
  runEpisodes,
  type EpisodeContext,
  type EpisodeEvent,
  type Environment,
  type Policy,
  type Role,
  type RewardFunction,
  type Completion,
} from '@troupe/kernel';

const [EPISODES, TURNS, CONCURRENCY, ROUNDS] = [400, 50, 8, 5].map((d, i) => Number(process.argv[2 + i] ?? d)) as [
  number,
  number,
  number,
  number,
];

interface S {
  readonly v: number;
}
const env: Environment<number, S, number> = {
  id: 'bench-counter-v0',
  seats: [
    { name: 'a', actionType: 'n', description: '' },
    { name: 'b', actionType: 'n', description: '' },
  ],
  actionTypes: [{ name: 'n', schema: { type: 'integer' }, description: '' }],
  maxTurns: TURNS,
  instance: (_split, index) => index,
  instanceKey: (i) => String(i).padStart(12, '0'),
  describe: (i) => ({ i }),
  reset: () => ({ v: 0 }),
  observe: (s) => ({ task: 't', state: '', context: [], turn: s.v }),
  step: (s, _seat, move) => ({
    state: { v: s.v + (move.kind === 'action' ? move.action : 0) },
    done: { terminated: false, truncated: false },
    success: false,
    signals: { p: 1 },
  }),
  randomAction: () => 1,
};
const MESSAGES = [{ role: 'user' as const, content: 'go' }];
const role: Role<number> = {
  id: 'bench-role-v0',
  produces: ['n'],
  prompt: () => MESSAGES,
  parse: (text) => ({ kind: 'action', action: 1, text }),
  render: String,
};
const COMPLETION: Completion = { text: '1', promptIds: [], tokenIds: [], logprobs: [], finishReason: 'stop' };
const policy: Policy = {
  name: 'zero',
  kind: 'bench',
  version: 0,
  generate: async (reqs) => reqs.map((r) => Array.from({ length: r.n }, () => COMPLETION)),
};
const reward: RewardFunction = { id: 'bench-reward-v0', terms: (t) => ({ team: t.result.signals.p! }) };
const sampling = { temperature: 1, topP: 1, topK: 0, maxTokens: 1 };

const contexts: EpisodeContext[] = Array.from({ length: EPISODES }, (_, i) => ({
  environment: env as Environment,
  instance: i,
  instanceUid: `u${i}`,
  split: 'train',
  seed: 1,
  branches: 1,
  reward,
  seats: env.seats.map((s) => ({ name: s.name, role: role as Role, policy, sampling })),
}));
const STEPS = EPISODES * TURNS * env.seats.length;

async function plain(): Promise<number> {
  let events = 0;
  const emit = (_e: EpisodeEvent): void => void events++;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < contexts.length) await playEpisode(contexts[next++]!, emit, new AbortController().signal);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return events;
}

function observable(): Promise<number> {
  let events = 0;
  return new Promise((resolve, reject) =>
    runEpisodes(contexts, { concurrency: CONCURRENCY }).subscribe({
      next: () => void events++,
      error: reject,
      complete: () => resolve(events),
    }),
  );
}

/** CPU time (user + system) of the run: on a shared machine, wall time mostly measures the neighbours. */
async function time(fn: () => Promise<number>): Promise<{ ms: number; wallMs: number; events: number }> {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const events = await fn();
  const c = process.cpuUsage(c0);
  return { ms: (c.user + c.system) / 1000, wallMs: Number(process.hrtime.bigint() - t0) / 1e6, events };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

await time(plain); // warm up both paths (JIT)
await time(observable);
const p: number[] = [];
const o: number[] = [];
const pw: number[] = [];
const ow: number[] = [];
let eventsPlain = 0;
let eventsObs = 0;
for (let r = 0; r < ROUNDS; r++) {
  const a = await time(plain);
  const b = await time(observable);
  p.push(a.ms);
  o.push(b.ms);
  pw.push(a.wallMs);
  ow.push(b.wallMs);
  eventsPlain = a.events;
  eventsObs = b.events;
}
if (eventsPlain !== eventsObs) throw new Error(`event counts differ: plain ${eventsPlain}, observable ${eventsObs}`);
const us = (ms: number): string => ((ms * 1000) / STEPS).toFixed(3);
console.log(
  `rollout overhead: ${EPISODES} episodes × ${TURNS} turns × ${env.seats.length} seats = ${STEPS} seat-steps, ${eventsPlain} events, concurrency ${CONCURRENCY}, median of ${ROUNDS}`,
);
console.log(
  `  plain async loop : ${median(p).toFixed(1)} ms CPU  (${us(median(p))} µs/step; wall ${median(pw).toFixed(1)} ms)`,
);
console.log(
  `  rxjs pipeline    : ${median(o).toFixed(1)} ms CPU  (${us(median(o))} µs/step; wall ${median(ow).toFixed(1)} ms)`,
);
console.log(
  `  rxjs overhead    : ${(((median(o) - median(p)) * 1000) / STEPS).toFixed(3)} µs/step (${((median(o) / median(p) - 1) * 100).toFixed(1)}%)`,
);
