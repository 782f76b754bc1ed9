import assert from 'node:assert/strict';
import { PluginError } from '../../src/plugins/index.js';

/** Asserts that `fn` rejects/throws a PluginError and returns it. */
export async function pluginError(fn: () => unknown): Promise<PluginError> {
  try {
    await fn();
  } catch (error) {
    assert.ok(error instanceof PluginError, `expected a PluginError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a PluginError');
}
