/** The kernel's {@link Logger}: one line per message on stderr, at or above a level (`TROUPE_LOG_LEVEL`, default warn). */
import { LOG_LEVELS, type Logger, type LogLevel } from '../contracts/services.js';

/** Where a {@link StreamLogger} writes (stderr by default; tests pass an array's push). */
export type LogSink = (line: string) => void;

/** Whether `value` names a log level. */
export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value);
}

/**
 * The level named by `TROUPE_LOG_LEVEL` in `env`, or `fallback` when it is unset. A value that names no level is
 * reported once through `warn` (the logger cannot refuse to start a run over its own verbosity) and ignored.
 */
export function logLevelFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  fallback: LogLevel = 'warn',
  warn: LogSink = (l) => process.stderr.write(`${l}\n`),
): LogLevel {
  const raw = env.TROUPE_LOG_LEVEL;
  if (raw === undefined || raw === '') return fallback;
  const value = raw.trim().toLowerCase();
  if (isLogLevel(value)) return value;
  warn(
    `troupe: TROUPE_LOG_LEVEL=${JSON.stringify(raw)} names no log level (use one of ${LOG_LEVELS.join(', ')}); logging at ${fallback}`,
  );
  return fallback;
}

/** A logger writing `level [scope] message {fields}` lines to a sink. */
export class StreamLogger implements Logger {
  /**
   * @param level messages below it are dropped
   * @param sink where lines go (default: stderr)
   * @param scope prefix of every message (see {@link StreamLogger.child})
   */
  constructor(
    readonly level: LogLevel = logLevelFromEnv(),
    private readonly sink: LogSink = (line) => process.stderr.write(`${line}\n`),
    private readonly scope?: string,
  ) {
    if (!isLogLevel(level))
      throw new RangeError(`StreamLogger: level must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(level)}`);
  }

  enabled(level: LogLevel): boolean {
    return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(this.level);
  }

  debug(message: string, fields?: Readonly<Record<string, unknown>>): void {
    this.write('debug', message, fields);
  }

  info(message: string, fields?: Readonly<Record<string, unknown>>): void {
    this.write('info', message, fields);
  }

  warn(message: string, fields?: Readonly<Record<string, unknown>>): void {
    this.write('warn', message, fields);
  }

  error(message: string, fields?: Readonly<Record<string, unknown>>): void {
    this.write('error', message, fields);
  }

  child(scope: string): Logger {
    return new StreamLogger(this.level, this.sink, this.scope ? `${this.scope} ${scope}` : scope);
  }

  private write(level: LogLevel, message: string, fields: Readonly<Record<string, unknown>> | undefined): void {
    if (!this.enabled(level)) return;
    const scope = this.scope ? ` [${this.scope}]` : '';
    const extra = fields && Object.keys(fields).length ? ` ${JSON.stringify(fields)}` : '';
    this.sink(`${level}${scope} ${message}${extra}`);
  }
}
