/** An error the CLI reports as one clear message (no stack trace) with a chosen exit code. */
export class CliError extends Error {
  /** 1: the command failed; 2: the command was used wrongly. */
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** A usage error (exit code 2). */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, 2);
    this.name = 'UsageError';
  }
}

/** Prints one JSON document on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Parses a positive integer option (at most `max`, when given), or throws a UsageError naming the flag. */
export function positiveInt(flag: string, max?: number) {
  return (raw: string): number => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${flag} must be a positive integer, got "${raw}"`);
    if (max !== undefined && n > max) throw new UsageError(`${flag} must be at most ${max}, got "${raw}"`);
    return n;
  };
}

/** Parses an integer option (any sign, or within `range` when given), or throws a UsageError naming the flag. */
export function integer(flag: string, range?: { readonly minimum: number; readonly maximum: number }) {
  return (raw: string): number => {
    const n = Number(raw);
    if (!Number.isInteger(n)) throw new UsageError(`${flag} must be an integer, got "${raw}"`);
    if (range && (n < range.minimum || n > range.maximum))
      throw new UsageError(`${flag} must be an integer from ${range.minimum} to ${range.maximum}, got "${raw}"`);
    return n;
  };
}

/** Parses a finite number option, or throws a UsageError naming the flag. */
export function finiteNumber(flag: string) {
  return (raw: string): number => {
    const n = Number(raw);
    if (!Number.isFinite(n)) throw new UsageError(`${flag} must be a number, got "${raw}"`);
    return n;
  };
}
