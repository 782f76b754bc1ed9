import assert from 'node:assert/strict';
import { PluginError } from '@troupe/kernel';
import { initBackend } from '@troupe/lm/model';
import { isUserFacing } from '../src/main.js';

describe('troupe: which errors are the user’s to fix', () => {
  it('a plugin error the turn loop wrapped with where it happened is still the user’s (not "internal error")', () => {
    const server = new PluginError(
      '@troupe/policy-openai',
      'POST /chat/completions failed: the server answered 400: the prompt exceeds the model’s context',
      { hint: 'check the server log' },
    );
    const wrapped = new Error(
      "episode 'test/0/x', turn 2, seat 'executor': policy 'shared' (openai) failed to generate",
      {
        cause: server,
      },
    );
    assert.equal(isUserFacing(server), true);
    assert.equal(isUserFacing(wrapped), true);
  });

  it('a bug stays an internal error, wrapped or not', () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'text')");
    assert.equal(isUserFacing(bug), false);
    assert.equal(isUserFacing(new Error('episode x: failed to generate', { cause: bug })), false);
    assert.equal(isUserFacing('a string'), false);
  });

  it('a backend that cannot start is the user’s (a setting to change)', async () => {
    const err = await initBackend({ backend: 'tensorflow-gpu' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    // tfjs-node-gpu is not a dependency of the workspace: it cannot start here, and says what to choose instead
    assert.ok(err instanceof Error, 'tensorflow-gpu started: this test needs a machine without tfjs-node-gpu');
    assert.match(err.message, /could not be started: .*choose another of/);
    assert.equal(isUserFacing(err), true);
  });
});
