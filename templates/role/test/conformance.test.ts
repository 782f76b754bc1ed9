/**
 * The conformance suite every Troupe role runs: well-formed deterministic prompts that show the current state,
 * render → parse round trips, garbage text parsed as invalid moves (never thrown), and a grammar that accepts every
 * rendered action.
 */
import { fileURLToPath } from 'node:url';
import { moduleConformance, roleConformance } from '@troupe/testing';
import { MovesLineContribution } from '../src/role.js';

roleConformance(new MovesLineContribution(), {
  config: {},
  seats: [{ seat: 'walker', actionType: 'moves' }],
  observations: [
    { task: 'Reach the goal G.', state: '#@..G#', context: [], turn: 0 },
    { task: 'Reach the goal G.', state: '#.@.G#', context: [{ label: 'proposal', text: 'MOVES: R R' }], turn: 1 },
  ],
  actions: [['R'], ['U', 'D', 'L', 'R'], Array.from({ length: 16 }, () => 'L')],
  actionSchema: { type: 'array', minItems: 1, items: { enum: ['U', 'D', 'L', 'R'] } },
});

// The package as the kernel loads it: manifest, kernel range, and the module binding exactly what it declares.
moduleConformance(fileURLToPath(new URL('..', import.meta.url)), { fromSource: true });
