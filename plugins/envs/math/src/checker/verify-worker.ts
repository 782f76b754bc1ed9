/**
 * The verifier's worker thread: runs the full answer check (symbolic and numeric layers included) for the
 * {@link MathVerifier} on the main thread, one job at a time. A job that overruns its budget is not waited for: the
 * main thread terminates this worker and starts a fresh one.
 */
import { parentPort } from 'node:worker_threads';
import { checkEquivalence, type EquivalenceResult } from './equivalence.js';
import type { VerifyJob, VerifyReply } from './verifier.js';

const port = parentPort!;
// Warm up mathjs (its instance and simplify rules) before saying ready, so the first job's budget is spent on the job.
checkEquivalence('(x+1)^2', 'x^2+2x+1');
port.on('message', (job: VerifyJob) => {
  const onProvisional = (result: EquivalenceResult): void =>
    port.postMessage({ id: job.id, result, provisional: true } satisfies VerifyReply);
  const reply: VerifyReply = {
    id: job.id,
    result: checkEquivalence(job.answer, job.reference, { ...job.options, onProvisional }),
  };
  port.postMessage(reply);
});
port.postMessage({ ready: true });
