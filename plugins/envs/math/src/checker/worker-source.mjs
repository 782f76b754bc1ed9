// Worker bootstrap used only when the checker runs from source (tests, `--conditions=troupe:source`): Node 20 workers
// do not inherit the main thread's tsx loader hooks, so register tsx here, then load the TypeScript worker. mathjs
// (plain JavaScript, hundreds of modules) is imported first, by Node's own loader: through tsx's hooks it boots slowly.
await import('mathjs');
const { register } = await import('tsx/esm/api');
register();
await import(new URL('./verify-worker.ts', import.meta.url).href);
