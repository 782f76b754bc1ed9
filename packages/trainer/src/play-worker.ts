/**
 * Entry of a play worker, a child process of the trainer (see play-processes.ts): activates the trainer's backend and
 * composes the team from the spec once (its first message); then, for each call, assigns the trainer's weights and
 * versions and plays the items its lanes are handed, one at a time each, sending each item's result. It exits when
 * told to close, or when the trainer's process goes away.
 */
import { composeTeam, type TeamRuntime } from '@troupe/kernel';
import { initBackend, type BackendName } from '@troupe/lm/model';
import { playItem, type PlayWorkerCommand, type PlayWorkerInit, type PlayWorkerMessage } from './play-processes.js';
import { policyHandles, type PolicyHandle } from './policies.js';
import { treeSeats, type RolloutSetup } from './rollouts.js';

const post = (m: PlayWorkerMessage): void => void process.send!(m);
const fail = (err: unknown): void => {
  const e = err as Error;
  post({ type: 'error', message: e?.message ?? String(err), ...(e?.stack ? { stack: e.stack } : {}) });
};

interface Team {
  readonly team: TeamRuntime;
  readonly handles: PolicyHandle[];
  readonly setup: RolloutSetup;
}

async function compose(input: PlayWorkerInit): Promise<Team> {
  await initBackend({ backend: input.backend as BackendName });
  const team = await composeTeam(input.spec);
  const handles = policyHandles(
    input.spec,
    team.policies,
    team.seats.map((s) => s.name),
    input.config,
  );
  const setup: RolloutSetup = {
    environment: team.environment,
    seats: team.seats,
    treeSeats: treeSeats(team.seats, input.config),
    reward: team.reward,
    seed: input.spec.seed,
    config: input.config,
    batching: 'instance',
  };
  return { team, handles, setup };
}

let ready: Promise<Team> | undefined;
const waiting = new Map<number, (a: { slot: number | null; item: unknown }) => void>();

async function begin(c: Extract<PlayWorkerCommand, { type: 'begin' }>): Promise<void> {
  if (!ready) throw new Error('play worker: a call before its start');
  const { team, handles, setup } = await ready;
  for (const h of handles) {
    const weights = c.weights[h.name];
    if (!h.trainable || !weights) throw new Error(`policy '${h.name}': no full-model weights sent to the play worker`);
    h.trainable.model.assignTensors(new Map(weights), `play worker, policy '${h.name}'`);
    h.trainable.version = c.versions[h.name] ?? h.trainable.version;
  }
  const ask = (lane: number): Promise<{ slot: number | null; item: unknown }> =>
    new Promise((resolve) => {
      waiting.set(lane, resolve);
      post({ type: 'next', lane });
    });
  const lane = async (n: number): Promise<void> => {
    for (let a = await ask(n); a.slot !== null; a = await ask(n)) {
      const result = await playItem(c.work, a.item as never, team, setup);
      post({ type: 'result', slot: a.slot, result });
    }
  };
  await Promise.all(Array.from({ length: c.lanes }, (_, n) => lane(n)));
  post({ type: 'end' });
}

process.on('message', (c: PlayWorkerCommand) => {
  if (c.type === 'init') {
    ready = compose(c.init);
    // the error itself is reported at the first call
    ready.then(
      () => post({ type: 'ready' }),
      () => post({ type: 'ready' }),
    );
  } else if (c.type === 'item') waiting.get(c.lane)?.({ slot: c.slot, item: c.item });
  else if (c.type === 'begin') begin(c).catch(fail);
  else
    void (ready ?? Promise.reject(new Error('not started')))
      .then(({ team }) => team.dispose())
      .catch(() => undefined)
      .finally(() => process.exit(0));
});
// the trainer's process went away (killed, crashed): nothing left to play for
process.on('disconnect', () => process.exit(0));
