import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { findPackageJson, KERNEL_ROOT } from '@troupe/kernel';
import { printJson } from '../errors.js';
import { importOptional } from '../optional.js';

/** The version of a package as the kernel would load it, or null when it is not installed. */
function versionOf(name: string): string | null {
  const file = findPackageJson(name, KERNEL_ROOT);
  if (!file) return null;
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return null;
  }
}

interface DoctorReport {
  node: { version: string; ok: boolean; required: string };
  platform: { os: string; arch: string; cpus: number };
  tfjs: { backend: string | null; reasons: unknown; error?: string };
  webgpu: {
    available: boolean;
    autoPick: boolean;
    detail: string;
    adapter?: unknown;
    gpuDevices?: string[] | null;
  } | null;
  sandbox: { isolation: string | null; details: unknown; error?: string };
  /** The Redis of distributed runs (--redis, TROUPE_REDIS or the --spec's execution.redis), when one is named. */
  redis: { url: string; from: string; ok: boolean; detail: string } | null;
  versions: Record<string, string | null>;
}

/** `troupe doctor`: what this machine gives Troupe (Node, tfjs backend and why, sandbox isolation, versions). */
export function register(program: Command): void {
  program
    .command('doctor')
    .description('report Node, the tfjs backend that would be used and why, sandbox isolation, and package versions')
    .option('--json', 'print one JSON document')
    .option('--redis <url>', 'check that this Redis answers (default: $TROUPE_REDIS, or the --spec execution.redis)')
    .option('--spec <file>', 'a team spec whose execution.redis to check')
    .action(async (opts: { json?: boolean; redis?: string; spec?: string }) => {
      const os = await import('node:os');
      let sandboxText: string | undefined;
      const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
      const report: DoctorReport = {
        node: { version: process.versions.node, ok: major > 20 || (major === 20 && minor >= 19), required: '>=20.19' },
        platform: { os: `${os.type()} ${os.release()}`, arch: process.arch, cpus: os.cpus().length },
        tfjs: { backend: null, reasons: null },
        webgpu: null,
        sandbox: { isolation: null, details: null },
        redis: null,
        versions: Object.fromEntries(
          [
            '@troupe/kernel',
            '@troupe/lm',
            '@troupe/trainer',
            '@troupe/cli',
            '@troupe/sandbox',
            '@tensorflow/tfjs',
            '@tensorflow/tfjs-backend-wasm',
            '@tensorflow/tfjs-node',
            '@tensorflow/tfjs-node-gpu',
            '@tensorflow/tfjs-backend-webgpu',
            'webgpu',
            '@huggingface/transformers',
            'inversify',
            'rxjs',
          ].map((n) => [n, versionOf(n)]),
        ),
      };
      try {
        const model = (await importOptional(
          '@troupe/lm',
          'the tfjs backend probe',
          () => import('@troupe/lm'),
        )) as Record<string, unknown>;
        const probe = model['probeBackends'] as
          | undefined
          | ((
              env: NodeJS.ProcessEnv,
              webgpu?: unknown,
            ) => {
              wouldUse?: string;
              override?: string;
              probes: { backend: string; available: boolean; detail: string }[];
            });
        if (!probe) throw new Error('this kernel has no backend probe');
        // WebGPU: loads Dawn (when installed) to name the adapter and say whether auto would pick it
        const probeWebGpu = model['probeWebGpu'] as undefined | (() => Promise<NonNullable<DoctorReport['webgpu']>>);
        const devices = (model['gpuDeviceFiles'] as undefined | (() => string[] | null))?.();
        if (probeWebGpu) {
          const w = await probeWebGpu();
          report.webgpu = { ...w, gpuDevices: devices ?? null };
        }
        const r = probe(process.env, report.webgpu ?? undefined);
        const chosen = r.wouldUse ?? null;
        const order = r.probes.map((p) => p.backend);
        const before = chosen ? order.slice(0, order.indexOf(chosen)) : order;
        report.tfjs = {
          backend: chosen === 'tensorflow-gpu' || chosen === 'tensorflow' ? 'tensorflow' : chosen,
          reasons: Object.fromEntries(
            r.probes.filter((p) => before.includes(p.backend)).map((p) => [p.backend, p.detail]),
          ),
          ...(chosen ? { detail: `${chosen}${r.override ? ` (forced by ${r.override})` : ''}` } : {}),
        } as DoctorReport['tfjs'];
      } catch (err) {
        report.tfjs.error = err instanceof Error ? err.message : String(err);
      }
      try {
        const sandbox = (await import('@troupe/sandbox')) as Record<string, unknown>;
        const probe = sandbox['probeIsolation'] as
          undefined | (() => Promise<{ kind: string; details: unknown; available: unknown }>);
        const holds = sandbox['isolationGuarantees'] as undefined | ((kind: string) => string[]);
        const describe = sandbox['describeIsolation'] as undefined | (() => Promise<string>);
        if (!probe) throw new Error('this sandbox has no isolation probe');
        const r = await probe();
        // What holds: under the isolation runs get here, and under "none" (what --allow-unisolated would give).
        const guarantees = holds
          ? { ...(r.kind === 'unavailable' ? {} : { [r.kind]: holds(r.kind) }), none: holds('none') }
          : undefined;
        report.sandbox = {
          isolation: r.kind,
          details: { details: r.details, available: r.available, ...(guarantees ? { holds: guarantees } : {}) },
        };
        if (describe) sandboxText = await describe();
      } catch (err) {
        report.sandbox.error = err instanceof Error ? err.message : String(err);
      }
      report.redis = await checkRedis(opts);
      if (opts.json) {
        printJson(report);
        return;
      }
      const line = (k: string, v: string): void => void process.stdout.write(`${k.padEnd(28)} ${v}\n`);
      line('node', `${report.node.version} ${report.node.ok ? 'ok' : `(Troupe needs ${report.node.required})`}`);
      line('platform', `${report.platform.os} ${report.platform.arch}, ${report.platform.cpus} cores`);
      line('tfjs backend', report.tfjs.backend ? `${report.tfjs.backend}` : `unknown (${report.tfjs.error})`);
      if (report.tfjs.reasons) {
        for (const [name, why] of Object.entries(report.tfjs.reasons as Record<string, unknown>))
          line('', `skipped ${name}: ${String(why)}`);
      }
      if (report.webgpu) {
        const w = report.webgpu;
        line(
          'webgpu',
          w.available ? (w.autoPick ? 'available, auto picks it' : 'available, not auto-picked') : 'not available',
        );
        line('', w.detail);
        if (w.gpuDevices) line('', `GPU devices: ${w.gpuDevices.length ? w.gpuDevices.join(', ') : 'none'}`);
      }
      line('sandbox', report.sandbox.isolation ? `${report.sandbox.isolation}` : `unknown (${report.sandbox.error})`);
      if (sandboxText) for (const l of sandboxText.split('\n').slice(1)) line('', l);
      else if (report.sandbox.details) line('', JSON.stringify(report.sandbox.details));
      if (report.redis) line('redis', `${report.redis.url} (${report.redis.from}): ${report.redis.detail}`);
      for (const [name, v] of Object.entries(report.versions)) line(name, v ?? 'not installed');
    });
}

/** Whether the Redis of distributed runs answers: --redis, else TROUPE_REDIS, else the --spec's execution.redis. */
async function checkRedis(opts: { redis?: string; spec?: string }): Promise<DoctorReport['redis']> {
  let url = opts.redis;
  let from = '--redis';
  if (url === undefined && process.env.TROUPE_REDIS) [url, from] = [process.env.TROUPE_REDIS, 'TROUPE_REDIS'];
  if (url === undefined && opts.spec) {
    const { loadTeamSpec } = await import('@troupe/kernel');
    url = loadTeamSpec(opts.spec).execution?.redis;
    from = `${opts.spec} execution.redis`;
  }
  if (url === undefined) return null;
  try {
    const { redisProblem, START_REDIS_HINT } = await importOptional(
      '@troupe/trainer',
      'the Redis check',
      () => import('@troupe/trainer'),
    );
    const problem = await redisProblem(url);
    return { url, from, ok: !problem, detail: problem ? `${problem}; ${START_REDIS_HINT}` : 'answers PING' };
  } catch (err) {
    return { url, from, ok: false, detail: err instanceof Error ? err.message : String(err) };
  }
}
