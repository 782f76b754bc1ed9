/** A benchmark worker process: `process` sleeps `payload.ms` (0: returns at once). Options as JSON in argv[2]. */
import { startWorker } from '@troupe/scale-out';

const o = JSON.parse(process.argv[2]!) as { url: string; queue: string; name: string };
const worker = startWorker<{ ms: number }, number>({
  ...o,
  heartbeatMs: 500,
  async process(payload) {
    if (payload.ms > 0) await new Promise((resolve) => setTimeout(resolve, payload.ms));
    return payload.ms;
  },
});
process.stdout.write('ready\n');
process.on('SIGTERM', () => void worker.close().then(() => process.exit(0)));
