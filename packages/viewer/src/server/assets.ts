/**
 * The web app's built files (dist/app/app.js and app.css, bundled by scripts/build-app.mjs in the package's build) and
 * the HTML page around them: served by `troupe view`, or with the app and a snapshot of the run inlined (`--export`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** dist/app of this package (this file is src/server/assets.ts or dist/server/assets.js). */
export const APP_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'app');

/** The bundled app. */
export interface AppAssets {
  readonly js: string;
  readonly css: string;
}

/** A missing app bundle: the message says how to build it. */
export class AppNotBuiltError extends Error {
  constructor(dir: string) {
    super(
      `the viewer's web app is not built (no app.js in ${dir}); run \`npm run build\` in the repository (npm run setup does it)`,
    );
    this.name = 'AppNotBuiltError';
  }
}

/** Reads the bundle (from `dir`, default {@link APP_DIR}). */
export function readAppAssets(dir = APP_DIR): AppAssets {
  const js = join(dir, 'app.js'),
    css = join(dir, 'app.css');
  if (!existsSync(js) || !existsSync(css)) throw new AppNotBuiltError(dir);
  return { js: readFileSync(js, 'utf8'), css: readFileSync(css, 'utf8') };
}

const escapeHtml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Text inside a <script> element: `</script` and `<!--` cannot end or confuse it. */
const scriptText = (s: string): string => s.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');

/**
 * The page. Served: the app loads from /app.js and asks the API. Exported: `assets` and `snapshot` are inlined, so
 * the file opens from file:// with nothing else.
 */
export function renderPage(title: string, inline?: { assets: AppAssets; snapshot: unknown }): string {
  const head = `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n<link rel="icon" href="data:,">\n<title>${escapeHtml(title)} · troupe view</title>\n`;
  if (!inline) {
    return `${head}<link rel="stylesheet" href="app.css">\n</head>\n<body>\n<div id="app"></div>\n<script src="app.js"></script>\n</body>\n</html>\n`;
  }
  // JSON inside a script element of type application/json: only `</script` needs escaping (`<\/` is valid JSON)
  const data = JSON.stringify(inline.snapshot).replace(/<\//g, '<\\/').replace(/<!--/g, '<\\u0021--');
  return `${head}<style>\n${inline.assets.css}\n</style>\n</head>\n<body>\n<div id="app"></div>\n<script id="troupe-snapshot" type="application/json">${data}</script>\n<script>\n${scriptText(inline.assets.js)}\n</script>\n</body>\n</html>\n`;
}
