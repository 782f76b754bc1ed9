/**
 * Starts the distributed engine of a run: @troupe/scale-out's dispatcher on the execution's Redis (loaded only here,
 * so a run without `execution`/`--redis` never loads it) and the engine over it.
 */
import { join } from 'node:path';
import type { ExecutionSettings, TeamSpec, TrainerConfig } from '@troupe/kernel';
import type { PolicyHandle } from '../policies.js';
import { DistributedRollouts, type RolloutQueue } from './engine.js';
import { RemoteUpdates } from './remote-updates.js';

/**
 * Starts the engine, with the updates of `execution.updatePools` on workers (`engine.updates`); `queue` replaces the
 * Redis dispatcher (tests).
 */
export async function startDistributedRollouts(
  spec: TeamSpec,
  config: TrainerConfig,
  handles: readonly PolicyHandle[],
  execution: ExecutionSettings,
  where: { readonly runDir: string; readonly queue?: RolloutQueue; readonly onNoWorkers?: (message: string) => void },
): Promise<DistributedRollouts> {
  const queue = where.queue ?? (await redisQueue(execution));
  const versionsDir = execution.checkpoints ?? join(where.runDir, 'policies');
  const engine = new DistributedRollouts(queue, spec, config, handles, {
    attempts: execution.attempts,
    ...(execution.deadlineMs !== undefined ? { deadlineMs: execution.deadlineMs } : {}),
    pools: execution.pools,
    versionsDir,
    ...(where.onNoWorkers ? { onNoWorkers: where.onNoWorkers } : {}),
  });
  if (Object.keys(execution.updatePools).length > 0)
    engine.updates = new RemoteUpdates(engine, versionsDir, execution.updatePools, { spec, config });
  return engine;
}

/** @troupe/scale-out's dispatcher on `execution.redis` and `execution.queue`. */
export async function redisQueue(execution: ExecutionSettings): Promise<RolloutQueue> {
  const { Dispatcher } = await import('@troupe/scale-out');
  return new Dispatcher({
    url: execution.redis!,
    queue: execution.queue,
    redisTimeoutMs: execution.redisTimeoutMs,
  });
}
