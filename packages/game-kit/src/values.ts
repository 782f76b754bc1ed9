/**
 * Plain-value helpers every game needs: states, records and observations are deeply frozen plain data, and rewards
 * are rounded so that mathematically equal rewards compare equal.
 */

/** Deep-freezes a plain value (objects and arrays), returning it. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

/** Rounds a reward to 9 decimals (removes floating-point noise such as 1.9000000000000004). */
export function roundReward(x: number): number {
  return Math.round(x * 1e9) / 1e9;
}
