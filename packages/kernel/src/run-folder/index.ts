/**
 * The run folder's formats that more than one package reads: metrics.jsonl and the report plots (the rollout trace's
 * format is `rollout/trace.ts`). The trainer writes a run folder, the experiment runner and the CLI read it.
 */
export * from './metrics.js';
export * from './charts.js';
