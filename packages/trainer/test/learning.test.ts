import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHostFor, composeTeam, loadTeamSpec } from '@troupe/kernel';
import { Trainer, type MetricsRecord } from '../src/index.js';
import { BANDIT_ID, banditModule } from './helpers/bandit.js';
import { microCheckpoint } from './trainer-helpers.js';

const readJsonl = <T>(file: string): T[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
const MOVES = ['U', 'D', 'L', 'R'];

/** A one-seat team of the micro model on the bandit, rewarding `target`. */
async function banditTeam(target: string, algorithm: Record<string, unknown>, temperature = 1) {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-bandit-'));
  const spec = {
    name: 'bandit',
    seed: 5,
    environment: { id: BANDIT_ID, config: { target } },
    policies: {
      solver: { kind: 'tfjs-causal-lm', model: await microCheckpoint(), tokenizer: 'tiny', backend: 'wasm' },
    },
    seats: {
      solver: {
        policy: 'solver',
        role: 'planner',
        roleConfig: { maxMoves: 1, includeTask: false, systemPrompt: '{seat}' },
        sampling: { temperature, topP: 1, topK: 0, maxTokens: 12 },
      },
    },
    rewards: { id: 'signals', config: { team: 'hit' }, seats: { solver: { alpha: 1 } } },
    algorithm: {
      name: 'at-grpo',
      branches: 8,
      batchSize: 4,
      concurrency: 4,
      miniBatchSize: 32,
      evalEvery: 0,
      checkpointEvery: 100,
      ...algorithm,
    },
    evaluation: { split: 'test', episodes: 4 },
  };
  writeFileSync(join(dir, 'team.yaml'), JSON.stringify(spec, null, 2));
  const loaded = loadTeamSpec(join(dir, 'team.yaml'));
  const team = await composeTeam(loaded, { host: createHostFor(loaded.file, [banditModule]) });
  return { spec: loaded, team, out: join(dir, 'run') };
}

/** The policy's greedy answer to the bandit's prompt. */
async function greedyMove(trainer: Trainer): Promise<string> {
  const seat = trainer.team.seats.find((s) => s.name === 'solver')!;
  const env = trainer.team.environment;
  const ctx = { seat: 'solver', actionType: 'moves' };
  const prompt = seat.role.prompt(env.observe(env.reset(env.instance('test', 0, 0)), 'solver'), ctx);
  const grammar = seat.role.grammar!(ctx)!; // as in the rollouts (constrainedDecoding)
  const [group] = await seat.policy.generate([
    { messages: prompt, sampling: { temperature: 0, topP: 1, topK: 0, maxTokens: 12 }, n: 1, seed: 1, grammar },
  ]);
  return /\[([UDLR]?)\]/.exec(group![0]!.text)?.[1] ?? '';
}

describe('learning: the RL loop raises the reward of a task the micro model can learn', function () {
  this.timeout(600_000);

  const cases = [
    { name: 'AT-GRPO', algorithm: 'at-grpo', temperature: 1 },
    { name: 'AT-GRPO sampling at temperature 0.5 (scored at 0.5)', algorithm: 'at-grpo', temperature: 0.5 },
    { name: 'naive GRPO', algorithm: 'grpo-naive', temperature: 1 },
  ];
  for (const c of cases) {
    it(`${c.name} on a one-step bandit: the rewarded move becomes the greedy answer and the sampled hit rate rises`, async () => {
      // The target is a move the untrained model does not answer greedily, and seldom samples.
      const probe = await banditTeam('U', { steps: 0 });
      const probeTrainer = await Trainer.create(probe.spec, {
        outDir: probe.out,
        skipFinalEval: true,
        team: probe.team,
      });
      const before = await greedyMove(probeTrainer);
      await probeTrainer.dispose();
      const target = MOVES.find((m) => m !== before)!;

      const { spec, team, out } = await banditTeam(target, { name: c.algorithm, steps: 12, lr: 1e-2 }, c.temperature);
      const trainer = await Trainer.create(spec, { outDir: out, skipFinalEval: true, team });
      try {
        assert.notEqual(await greedyMove(trainer), target);
        await trainer.run();
        const rates = readJsonl<MetricsRecord>(join(out, 'metrics.jsonl'))
          .filter((m) => m.kind === 'train')
          .map((m) => m['rollout/sample_reward/solver'] as number);
        const what = `sampled hit rate per step ${rates.map((r) => r.toFixed(2)).join(' ')}`;
        assert.equal(rates.length, 12, what);
        const first = rates.slice(0, 3).reduce((a, b) => a + b, 0) / 3;
        const last = rates.slice(-3).reduce((a, b) => a + b, 0) / 3;
        assert.ok(first <= 0.5, `the task starts unlearned: ${what}`);
        assert.ok(last >= first + 0.3 && last >= 0.75, what);
        assert.equal(await greedyMove(trainer), target, 'the rewarded move is the greedy answer');
      } finally {
        await trainer.dispose();
      }
    });
  }
});
