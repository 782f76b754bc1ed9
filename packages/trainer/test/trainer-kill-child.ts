/**
 * Child process of the kill-and-resume test: trains a team spec into a folder (`node ... trainer-kill-child.ts SPEC OUT
 * STEPS`) and is killed with SIGKILL by the test while it runs.
 */
import { loadTeamSpec } from '@troupe/kernel';
import { Trainer } from '../src/index.js';

const [file, out, steps] = process.argv.slice(2) as [string, string, string];
const trainer = await Trainer.create(loadTeamSpec(file), { outDir: out, steps: Number(steps), skipFinalEval: true });
await trainer.run();
await trainer.dispose();
