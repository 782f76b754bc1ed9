import assert from 'node:assert/strict';
import { CliError } from '../src/errors.js';
import { importOptional, isMissingPackage } from '../src/optional.js';

/** Imports a specifier the type checker does not see (a package that is not installed). */
const importByName = (name: string): Promise<unknown> => import(name);

describe('optional packages of the CLI (the model code)', () => {
  it('imports an installed optional package', async () => {
    const lm = await importOptional('@troupe/lm', 'troupe generate', () => import('@troupe/lm'));
    assert.equal(typeof lm.loadCheckpoint, 'function');
  });

  it("recognises Node's error for the missing package itself, not for another one", async () => {
    const err = await importByName('@troupe/no-such-package').then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.equal(isMissingPackage(err, '@troupe/no-such-package'), true);
    assert.equal(isMissingPackage(err, '@troupe/trainer'), false);
    assert.equal(
      isMissingPackage(new Error("Cannot find package '@troupe/trainer'"), '@troupe/trainer'),
      false,
      'only ERR_MODULE_NOT_FOUND counts',
    );
  });

  it('turns a missing optional package into a CliError naming the command and the install command', async () => {
    const missing = Object.assign(
      new Error("Cannot find package '@troupe/trainer' imported from /x/cli/dist/commands/train.js"),
      { code: 'ERR_MODULE_NOT_FOUND' },
    );
    const err = await importOptional('@troupe/trainer', 'troupe train', () => Promise.reject(missing)).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof CliError, String(err));
    assert.equal(err.exitCode, 1);
    assert.match(
      err.message,
      /^troupe train needs @troupe\/trainer \(the AT-GRPO trainer; it brings @troupe\/lm\), which is not installed; install it next to @troupe\/cli: npm install @troupe\/trainer@\^\d+\.\d+\.\d+$/,
    );
  });

  it('names @troupe/onnx for --runtime onnx when ONNX Runtime is not installed', async () => {
    const missing = Object.assign(
      new Error("Cannot find package '@troupe/onnx' imported from /x/cli/dist/model-folder.js"),
      { code: 'ERR_MODULE_NOT_FOUND' },
    );
    const err = await importOptional('@troupe/onnx', 'troupe serve --runtime onnx', () => Promise.reject(missing)).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof CliError, String(err));
    assert.match(
      err.message,
      /^troupe serve --runtime onnx needs @troupe\/onnx \(checkpoints run in ONNX Runtime on the CPU; it brings @troupe\/lm\), which is not installed; install it next to @troupe\/cli: npm install @troupe\/onnx@\^\d+\.\d+\.\d+$/,
    );
  });

  it('lets any other failure through (a dependency of an installed package, an error in its code)', async () => {
    const inner = await importByName('@troupe/no-such-package').then(
      () => undefined,
      (e: unknown) => e,
    );
    const err = await importOptional('@troupe/trainer', 'troupe train', () => Promise.reject(inner)).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.equal(err, inner);
  });
});
