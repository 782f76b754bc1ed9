/**
 * Wall-clock accounting for one training step: how long generation, environment stepping (with the roles' prompt
 * and parse) and the update kept the process busy. Async calls of concurrent episodes overlap, so each category
 * counts the UNION of its in-flight intervals, and `busy` the union over all categories; the loop's own overhead is
 * the step's wall time minus `busy`.
 */
import type { Environment, Policy, Role } from '@troupe/kernel';

/** Categories of time. */
export type TimeCategory = 'generate' | 'env' | 'update';

class UnionTimer {
  private active = 0;
  private since = 0;
  total = 0;
  enter(now: number): void {
    if (this.active++ === 0) this.since = now;
  }
  leave(now: number): void {
    if (--this.active === 0) this.total += now - this.since;
  }
}

/** Accumulates busy time per category (milliseconds). */
export class StepTimer {
  private readonly cats = new Map<TimeCategory, UnionTimer>();
  private readonly all = new UnionTimer();

  private timer(cat: TimeCategory): UnionTimer {
    let t = this.cats.get(cat);
    if (!t) this.cats.set(cat, (t = new UnionTimer()));
    return t;
  }

  /** Times a synchronous call. */
  sync<T>(cat: TimeCategory, fn: () => T): T {
    const now = performance.now();
    this.timer(cat).enter(now);
    this.all.enter(now);
    try {
      return fn();
    } finally {
      const end = performance.now();
      this.timer(cat).leave(end);
      this.all.leave(end);
    }
  }

  /** Times a call that may return a promise (the interval ends when it settles). */
  maybeAsync<T>(cat: TimeCategory, fn: () => T | Promise<T>): T | Promise<T> {
    const now = performance.now();
    this.timer(cat).enter(now);
    this.all.enter(now);
    const done = (): void => {
      const end = performance.now();
      this.timer(cat).leave(end);
      this.all.leave(end);
    };
    let out: T | Promise<T>;
    try {
      out = fn();
    } catch (err) {
      done();
      throw err;
    }
    if (out instanceof Promise) return out.finally(done);
    done();
    return out;
  }

  /** Busy milliseconds of a category. */
  ms(cat: TimeCategory): number {
    return this.cats.get(cat)?.total ?? 0;
  }

  /** Busy milliseconds of any category. */
  busyMs(): number {
    return this.all.total;
  }

  /** Resets every counter. */
  reset(): void {
    this.cats.clear();
    Object.assign(this.all, new UnionTimer());
  }
}

/** A policy whose `generate` is timed; every other member is the policy's own (version stays live). */
export function timedPolicy(policy: Policy, timer: StepTimer): Policy {
  const generate: Policy['generate'] = (requests, options) =>
    timer.maybeAsync('generate', () => policy.generate(requests, options)) as ReturnType<Policy['generate']>;
  return new Proxy(policy, {
    get(target, prop) {
      if (prop === 'generate') return generate;
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** An environment whose `reset`, `observe` and `step` are timed as `env`. */
export function timedEnvironment<E extends Environment>(env: E, timer: StepTimer): E {
  return new Proxy(env, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      const fn = (v as (...a: unknown[]) => unknown).bind(target);
      if (prop === 'step' || prop === 'observe' || prop === 'reset')
        return (...args: unknown[]) => timer.maybeAsync('env', () => fn(...args));
      return fn;
    },
  });
}

/** A role whose `prompt` and `parse` are timed as `env` (they are part of the environment side of a turn). */
export function timedRole<R extends Role>(role: R, timer: StepTimer): R {
  return new Proxy(role, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      const fn = (v as (...a: unknown[]) => unknown).bind(target);
      if (prop === 'prompt' || prop === 'parse')
        return (...args: unknown[]) => timer.maybeAsync('env', () => fn(...args));
      return fn;
    },
  });
}
