/** The page's location: `#/<view>?<params>`, so every view can be linked to and the back button works. */
import { useEffect, useState } from 'preact/hooks';

export type ViewName = 'overview' | 'steps' | 'tree' | 'compare' | 'credit';

/** A parsed location. */
export interface Route {
  readonly view: ViewName;
  readonly params: URLSearchParams;
}

const VIEWS: readonly ViewName[] = ['overview', 'steps', 'tree', 'compare', 'credit'];

/** Parses `location.hash`. */
export function parseRoute(hash: string): Route {
  const m = /^#\/([a-z]+)(?:\?(.*))?$/.exec(hash);
  const view = m && (VIEWS as readonly string[]).includes(m[1]!) ? (m[1] as ViewName) : 'overview';
  return { view, params: new URLSearchParams(m?.[2] ?? '') };
}

/** The href of a view with params (undefined / null / '' params are left out). */
export function href(
  view: ViewName,
  params: Record<string, string | number | boolean | null | undefined> = {},
): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') qs.set(k, String(v));
  const s = qs.toString();
  return `#/${view}${s ? `?${s}` : ''}`;
}

/** Goes to a view, replacing the given params of the current location. */
export function navigate(view: ViewName, params: Record<string, string | number | boolean | null | undefined>): void {
  location.hash = href(view, params);
}

/** The current route, updated on hashchange. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

/** An integer param, or undefined. */
export function intParam(params: URLSearchParams, key: string): number | undefined {
  const v = params.get(key);
  if (v === null || v === '') return undefined;
  const n = Number(v);
  return Number.isInteger(n) ? n : undefined;
}

/** A boolean param (true / false), or undefined. */
export function boolParam(params: URLSearchParams, key: string): boolean | undefined {
  const v = params.get(key);
  return v === 'true' ? true : v === 'false' ? false : undefined;
}
