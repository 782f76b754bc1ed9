/**
 * Worker-thread entry of the threaded evaluation (see eval-thread.ts): activates the main thread's backend, composes
 * the team from the spec, assigns the main thread's weights, then plays the evaluation indices its lanes are handed,
 * each episode alone, and posts each episode's events.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { composeTeam, type EpisodeEvent } from '@troupe/kernel';
import { initBackend, type BackendName } from '@troupe/lm/model';
import { evalEpisode } from './evaluate.js';
import type { EvalWorkerAssignment, EvalWorkerInit, EvalWorkerMessage } from './eval-thread.js';
import { policyHandles } from './policies.js';
import { playEpisodes } from './rollouts.js';

async function main(): Promise<void> {
  const input = workerData as EvalWorkerInit;
  const port = parentPort!;
  const post = (m: EvalWorkerMessage): void => port.postMessage(m);
  try {
    await initBackend({ backend: input.backend as BackendName });
    const team = await composeTeam(input.spec);
    try {
      const handles = policyHandles(
        input.spec,
        team.policies,
        team.seats.map((s) => s.name),
        input.config,
      );
      for (const h of handles) {
        const weights = input.weights[h.name];
        if (!h.trainable || !weights) throw new Error(`policy '${h.name}': no full-model weights to evaluate with`);
        h.trainable.model.assignTensors(new Map(weights), `evaluation worker, policy '${h.name}'`);
      }
      // each lane asks for an index, plays it, and asks again until the main thread has none left
      const waiting = new Map<number, (index: number | null) => void>();
      port.on('message', (a: EvalWorkerAssignment) => waiting.get(a.lane)?.(a.index));
      const ask = (lane: number): Promise<number | null> =>
        new Promise((resolve) => {
          waiting.set(lane, resolve);
          post({ type: 'next', lane });
        });
      const lane = async (n: number): Promise<void> => {
        for (let index = await ask(n); index !== null; index = await ask(n)) {
          const events: EpisodeEvent[] = [];
          await playEpisodes([[evalEpisode(team, index, input.job)]], 1, 'instance', (e) => events.push(e));
          post({ type: 'episode', index, events });
        }
      };
      await Promise.all(Array.from({ length: input.lanes }, (_, n) => lane(n)));
    } finally {
      await team.dispose?.();
    }
    post({ type: 'done' });
  } catch (err) {
    const e = err as Error;
    post({ type: 'error', message: e?.message ?? String(err), ...(e?.stack ? { stack: e.stack } : {}) });
  }
}

void main();
