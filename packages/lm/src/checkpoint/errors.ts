/**
 * A checkpoint file that cannot be used: unreadable, outside its folder, not a regular file, a corrupt header, a
 * config that does not fit its weights, non-finite weights. The message names the file (and the tensor or key) and
 * says what to do; the CLI prints it without a stack trace.
 */
export class CheckpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckpointError';
  }
}
