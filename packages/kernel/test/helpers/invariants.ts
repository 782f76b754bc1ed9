/**
 * Checks the AT-GRPO invariants of the Stronger-MAS paper on a finished event stream (test helper):
 * every group (episode, turn, seat) has exactly K step records sharing one prompt; the selected branch has the maximum
 * reward; the prompt of every group is derived from the state of the previously selected branch (checked by replaying
 * the selected moves on a fresh reset of the instance).
 */
import assert from 'node:assert/strict';
import type { Environment, Move, Role } from '../../src/contracts/index.js';
import type { EpisodeEvent, SelectEvent, StepRecord } from '../../src/episode/index.js';

export async function assertAtGrpoInvariants(
  events: readonly EpisodeEvent[],
  setup: {
    environment: Environment;
    instanceOf: (episodeId: string) => unknown;
    roleOf: (seat: string) => Role;
    branches: number;
  },
): Promise<{ groups: number }> {
  const byEpisode = new Map<string, EpisodeEvent[]>();
  for (const e of events) {
    if (!byEpisode.has(e.episodeId)) byEpisode.set(e.episodeId, []);
    byEpisode.get(e.episodeId)!.push(e);
  }
  let groups = 0;
  for (const [episodeId, evs] of byEpisode) {
    assert.equal(evs[0]!.type, 'reset', `episode ${episodeId} starts with reset`);
    assert.equal(evs.at(-1)!.type, 'end', `episode ${episodeId} ends with end`);
    let state = setup.environment.reset(setup.instanceOf(episodeId));
    let samples: StepRecord[] = [];
    for (const e of evs) {
      if (e.type === 'step') samples.push(e);
      else if (e.type === 'select') {
        groups++;
        checkGroup(e, samples, setup.branches);
        // the prompt comes from the state of the previous selected branch
        const role = setup.roleOf(e.seat);
        const seatSpec = setup.environment.seats.find((s) => s.name === e.seat)!;
        const seatCtx = { seat: e.seat, actionType: seatSpec.actionType };
        assert.deepEqual(
          samples[0]!.prompt,
          role.prompt(setup.environment.observe(state, e.seat), seatCtx),
          `prompt of ${episodeId} t${e.turn} ${e.seat} derives from the selected state`,
        );
        const chosen = samples[e.branch]!;
        const move: Move =
          chosen.parseError === undefined
            ? { kind: 'action', action: chosen.action, text: chosen.completion }
            : { kind: 'invalid', error: chosen.parseError, text: chosen.completion };
        state = (await setup.environment.step(state, e.seat, move)).state;
        samples = [];
      }
    }
    assert.equal(samples.length, 0, 'no sample outside a closed group');
  }
  return { groups };
}

function checkGroup(sel: SelectEvent, samples: StepRecord[], K: number): void {
  assert.equal(samples.length, K, `group t${sel.turn} ${sel.seat} has K step records`);
  assert.deepEqual(
    samples.map((s) => s.branch),
    [...Array(K).keys()],
  );
  for (const s of samples) {
    assert.equal(s.turn, sel.turn);
    assert.equal(s.seat, sel.seat);
    assert.deepEqual(s.prompt, samples[0]!.prompt, 'all K samples share one prompt');
  }
  assert.deepEqual(
    samples.map((r) => r.reward),
    sel.rewards,
  );
  const max = Math.max(...sel.rewards);
  assert.equal(sel.rewards[sel.branch], max, 'the selected branch has the maximum reward');
  assert.deepEqual(
    samples.map((r) => r.selected),
    samples.map((r) => r.branch === sel.branch),
    'exactly the selected branch is flagged',
  );
}
