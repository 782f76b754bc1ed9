/** Bundles the web app into `outDir` (default dist/app). */
export function buildApp(outDir?: string): Promise<{ js: string; css: string }>;
