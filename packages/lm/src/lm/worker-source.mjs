// Worker bootstrap used only when @troupe/lm runs from source (tests, `--conditions=troupe:source`): Node 20 workers
// do not inherit the main thread's tsx loader hooks, so register tsx here, then load the TypeScript entry named by the
// last argv entry (see data-parallel.ts).
import { register } from 'tsx/esm/api';

register();
await import(new URL(`./${process.argv.at(-1)}.ts`, import.meta.url).href);
