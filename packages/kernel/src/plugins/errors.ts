/**
 * The one error type of the plugin system. Every failure a user can hit while resolving, validating or loading a
 * plugin is a {@link PluginError} that names the plugin, the file at fault and what to do about it.
 */
export class PluginError extends Error {
  /** The plugin's package name (or the name as the user wrote it, when it could not be resolved). */
  readonly plugin: string;
  /** The file at fault (package.json, the module, a schema), when there is one. */
  readonly file: string | undefined;
  /** What to do about it, in one or two sentences. */
  readonly hint: string | undefined;

  /**
   * @param plugin package name or the name as written
   * @param message what went wrong (the plugin and file are prefixed automatically)
   * @param options the file at fault, a hint, and the underlying error
   */
  constructor(plugin: string, message: string, options: { file?: string; hint?: string; cause?: unknown } = {}) {
    const where = options.file ? ` (${options.file})` : '';
    const hint = options.hint ? `\n  hint: ${options.hint}` : '';
    super(
      `plugin ${plugin}${where}: ${message}${hint}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'PluginError';
    this.plugin = plugin;
    this.file = options.file;
    this.hint = options.hint;
  }

  /** A plain object for `--json` output (an Error's own message is not enumerable). */
  toJSON(): { name: string; message: string; plugin: string; file?: string; hint?: string } {
    return {
      name: this.name,
      message: this.message,
      plugin: this.plugin,
      ...(this.file !== undefined ? { file: this.file } : {}),
      ...(this.hint !== undefined ? { hint: this.hint } : {}),
    };
  }
}
