// Worker bootstrap used only when the kernel runs from source (tests, `--conditions=troupe:source`): Node 20 workers
// do not inherit the main thread's tsx loader hooks, so register tsx here, then load the TypeScript entry.
import { register } from 'tsx/esm/api';

register();
await import('./update-worker.ts');
