/** Number formatting and small helpers shared by the views. */
import { useEffect, useState } from 'preact/hooks';

/** A number with `d` decimals, or – for none. */
export const fmt = (x: number | null | undefined, d = 3): string =>
  typeof x === 'number' && Number.isFinite(x) ? x.toFixed(d) : '–';

/** A share as a percentage. */
export const pct = (x: number | null | undefined): string =>
  typeof x === 'number' && Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '–';

/** A signed number (advantages). */
export const signed = (x: number | null | undefined, d = 3): string =>
  typeof x === 'number' && Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${x.toFixed(d)}` : '–';

/** Bytes in MB/kB. */
export const bytes = (n: number): string =>
  n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MB` : `${(n / 1024).toFixed(1)} kB`;

/** The tail of a long id (instance uids are `step-1/train/0/5d9009fd5431`). */
export const shortId = (id: string): string => (id.length > 28 ? `…${id.slice(-26)}` : id);

/** The state of an async load. */
export type Loaded<T> = { readonly data?: T; readonly error?: string; readonly loading: boolean };

/** Runs `load` whenever `deps` change; the latest answer wins. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({ loading: true });
  useEffect(() => {
    let current = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => {
        if (current) setState({ data, loading: false });
      },
      (err: unknown) => {
        if (current) setState({ error: err instanceof Error ? err.message : String(err), loading: false });
      },
    );
    return () => {
      current = false;
    };
  }, deps);
  return state;
}
