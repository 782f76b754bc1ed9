/**
 * @troupe/viewer: `troupe view` — a run's metrics, steps → groups, the rollout tree of one instance, paired evaluation
 * comparison and credit diagnostics in a local web page, or exported as one self-contained HTML file.
 */
export { startViewer, buildServer, type ViewerOptions, type RunningViewer } from './server/server.js';
export { exportRun, snapshotRun, type ExportOptions, type ExportResult } from './server/export.js';
export { RunFolder, RunFolderError } from './server/run-folder.js';
export { TraceIndex, TraceFileError } from './server/trace-index.js';
export { readAppAssets, renderPage, AppNotBuiltError, APP_DIR, type AppAssets } from './server/assets.js';
export * from './common/types.js';
export * from './common/queries.js';
export * from './common/snapshot.js';
