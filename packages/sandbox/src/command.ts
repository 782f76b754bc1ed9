import { ancestors, HostTools, isRoot, LayoutEntry, SANDBOX_DIR } from './host.js';
import { noUserNamespacesFilter } from './seccomp.js';
import type { IsolationKind, SandboxLimits } from './types.js';

/** The program to start inside the sandbox, as seen from inside. */
export interface InnerCommand {
  /** Absolute path of the executable (the runtime). */
  executable: string;
  /** Its arguments. */
  args: string[];
  /** The complete environment of the program. */
  env: Record<string, string>;
  /** Extra directories to mount read-only at the same path (the runtime's prefix). */
  mounts: string[];
  /** Capacity of the tmpfs the program's working directory lives on, in bytes. */
  workDirBytes: number;
  /** Files and directories the working directory's tmpfs may hold (its inode cap). */
  workDirInodes: number;
  /** RLIMIT_AS: the whole address space of each process, shared mappings included, in bytes. */
  addressSpaceBytes: number;
}

/** A host command line ready to spawn. */
export interface SpawnPlan {
  /** Executable on the host. */
  command: string;
  /** Its arguments. */
  args: string[];
  /** The environment of the host-side process (the program's own environment is set inside). */
  env: Record<string, string>;
  /** The host cwd of the spawned process. */
  cwd: string;
  /** Data fed to the launcher on descriptors 3, 4, … (a pipe each; e.g. bwrap's seccomp program). */
  inputs?: Buffer[];
}

/** Size of the /dev/shm tmpfs inside the sandbox. */
const SHM_BYTES = 16 << 20;

/** Files /dev/shm may hold. */
const SHM_INODES = 256;

/** RLIMIT_STACK: the main stack, and (through glibc's default) every thread's reserved stack. */
export const STACK_BYTES = 8 << 20;

/** Where bwrap shows the host work dir (read-only) before its content is copied onto the /sandbox tmpfs. */
export const INPUT_DIR = '/.input';

/** The rlimit part of the chain: `prlimit --cpu ... -- `. */
export function prlimitArgs(limits: SandboxLimits, addressSpaceBytes: number): string[] {
  const cpuS = Math.max(1, Math.ceil(limits.cpuMs / 1000));
  const data = limits.memoryMb * 1024 * 1024;
  return [
    `--cpu=${cpuS}:${cpuS + 1}`,
    `--data=${data}:${data}`,
    `--as=${addressSpaceBytes}:${addressSpaceBytes}`,
    `--stack=${STACK_BYTES}:${STACK_BYTES}`,
    `--fsize=${limits.maxFileBytes}:${limits.maxFileBytes}`,
    `--nproc=${limits.maxProcesses}:${limits.maxProcesses}`,
    '--core=0:0',
    '--nofile=256:256',
  ];
}

/**
 * The chain that runs inside the namespaces: [setpriv (drop to `uid`, clear every capability, no_new_privs)] →
 * prlimit (rlimits) → the program. As root, RLIMIT_NPROC does not apply to uid 0, so the program runs as a private,
 * random uid whose process count is only its own; as non-root the user namespace already gives a private count.
 */
export function innerChain(
  tools: HostTools,
  inner: InnerCommand,
  limits: SandboxLimits,
  uid: number | undefined,
): string[] {
  const chain: string[] = [];
  if (tools.setpriv) {
    chain.push(tools.setpriv, '--pdeathsig=KILL');
    if (uid !== undefined) chain.push(`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups');
    chain.push('--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--');
  }
  chain.push(tools.prlimit!, ...prlimitArgs(limits, inner.addressSpaceBytes), '--', inner.executable, ...inner.args);
  return chain;
}

/** bubblewrap arguments for the file system layout, the namespaces and the environment. */
export function bwrapPlan(
  tools: HostTools,
  layout: LayoutEntry[],
  inner: InnerCommand,
  workDir: string,
  limits: SandboxLimits,
  uid: number | undefined,
): SpawnPlan {
  const a: string[] = [
    '--unshare-pid',
    '--unshare-net',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--die-with-parent',
    '--new-session',
    '--hostname',
    'sandbox',
  ];
  // Unprivileged, bwrap's user namespace forbids nested ones; as root a seccomp filter does (see seccomp.ts).
  const filter = isRoot() ? noUserNamespacesFilter() : undefined;
  // As root the first process still holds bwrap's capabilities: `mount -a` over this fstab caps the inodes of both
  // tmpfs in one exec (bwrap has no option for it). Unprivileged it cannot remount: there the size and the wall time
  // bound the file count.
  const fstab =
    isRoot() && tools.mount
      ? Buffer.from(
          `none ${SANDBOX_DIR} tmpfs remount,nr_inodes=${inner.workDirInodes} 0 0\nnone /dev/shm tmpfs remount,nr_inodes=${SHM_INODES} 0 0\n`,
        )
      : undefined;
  const inputs = [filter, fstab].filter((b): b is Buffer => b !== undefined);
  if (!isRoot()) a.push('--unshare-user', '--disable-userns');
  if (filter) a.push('--seccomp', String(3 + inputs.indexOf(filter)));
  // bwrap creates missing parent directories with mode 0700, which the program's uid could not traverse.
  const made = new Set<string>();
  const parents = (p: string): void => {
    for (const anc of ancestors(p)) {
      if (made.has(anc)) continue;
      made.add(anc);
      a.push('--perms', '0755', '--dir', anc);
    }
  };
  for (const e of layout) {
    if (e.kind === 'symlink') a.push('--symlink', e.target, e.path);
    else {
      parents(e.path);
      a.push('--ro-bind', e.path, e.path);
    }
  }
  for (const m of inner.mounts) {
    parents(m);
    a.push('--ro-bind', m, m);
  }
  a.push('--proc', '/proc', '--dev', '/dev', '--perms', '1777', '--size', String(SHM_BYTES), '--tmpfs', '/dev/shm');
  if (fstab) a.push('--ro-bind-data', String(3 + inputs.indexOf(fstab)), '/etc/fstab');
  // The working directory is a size-capped tmpfs (a program cannot fill the host's disk); the request's files are
  // copied onto it from a read-only view of the host work dir, keeping their owner (the program's uid).
  a.push(
    '--ro-bind',
    workDir,
    INPUT_DIR,
    '--size',
    String(inner.workDirBytes),
    '--tmpfs',
    SANDBOX_DIR,
    '--chdir',
    SANDBOX_DIR,
    '--clearenv',
  );
  for (const [k, v] of Object.entries(inner.env)) a.push('--setenv', k, v);
  const caps = fstab ? `${shq(tools.mount!)} -a && ` : '';
  // The host wrote the files (and the work dir) owned by `uid`: `cp -a` keeps that, /sandbox itself included.
  const populate = `${caps}${shq(tools.cp!)} ${uid !== undefined ? '-a' : '-R'} ${INPUT_DIR}/. ${SANDBOX_DIR}/ && exec "$@"`;
  a.push('--', tools.sh!, '-c', populate, 'sh', ...innerChain(tools, inner, limits, uid));
  return { command: tools.bwrap!, args: a, env: {}, cwd: workDir, ...(inputs.length ? { inputs } : {}) };
}

/** Quotes a string for the POSIX shell. */
export function shq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The unshare fallback: `unshare` makes new mount, PID, network, IPC and UTS namespaces (plus a user namespace when
 * not root); a shell script running as the namespace's PID 1 builds a tmpfs root with the same layout as bwrap's,
 * then runs the chain under `chroot` + `env -i -C /sandbox`. The setpriv step clears every capability, so the
 * program cannot leave the chroot.
 */
export function unsharePlan(
  tools: HostTools,
  layout: LayoutEntry[],
  inner: InnerCommand,
  workDir: string,
  rootDir: string,
  limits: SandboxLimits,
  uid: number | undefined,
): SpawnPlan {
  const R = shq(rootDir);
  const lines: string[] = ['set -e', 'umask 022', `mount -t tmpfs -o mode=755,size=1m troupe-root ${R}`];
  const bindRo = (p: string, file: boolean): void => {
    const target = shq(rootDir + p);
    lines.push(
      file ? `mkdir -p ${shq(rootDir + p.slice(0, p.lastIndexOf('/')))} && : > ${target}` : `mkdir -p ${target}`,
    );
    lines.push(`mount --rbind ${shq(p)} ${target}`, `mount -o remount,bind,ro ${target}`);
  };
  for (const e of layout) {
    if (e.kind === 'symlink') lines.push(`ln -s ${shq(e.target)} ${shq(rootDir + e.path)}`);
    else bindRo(e.path, e.kind === 'ro-file');
  }
  for (const m of inner.mounts) bindRo(m, false);
  lines.push(`mkdir -p ${R}/proc ${R}/dev ${R}${SANDBOX_DIR}`, `mount -t proc proc ${R}/proc`);
  lines.push(`mount -t tmpfs -o mode=755,size=64k troupe-dev ${R}/dev`);
  for (const d of ['null', 'zero', 'full', 'random', 'urandom']) {
    lines.push(`: > ${R}/dev/${d} && mount --bind /dev/${d} ${R}/dev/${d}`);
  }
  lines.push(
    `mkdir ${R}/dev/shm && mount -t tmpfs -o mode=1777,size=${SHM_BYTES},nr_inodes=${SHM_INODES} troupe-shm ${R}/dev/shm`,
  );
  lines.push(
    `ln -s /proc/self/fd ${R}/dev/fd && ln -s /proc/self/fd/0 ${R}/dev/stdin && ln -s /proc/self/fd/1 ${R}/dev/stdout && ln -s /proc/self/fd/2 ${R}/dev/stderr`,
  );
  lines.push(
    `mount -t tmpfs -o mode=755,size=${inner.workDirBytes},nr_inodes=${inner.workDirInodes} troupe-work ${R}${SANDBOX_DIR}`,
  );
  lines.push(`cp ${uid !== undefined ? '-a' : '-R'} ${shq(workDir)}/. ${R}${SANDBOX_DIR}/`);
  lines.push(`mount -o remount,ro,bind ${R}`);
  // PID 1 moves into the chroot too (so /proc/1/root shows nothing of the host) and stays a shell that waits for the
  // program: a program as PID 1 would ignore the kernel's SIGXCPU.
  const envArgs = Object.entries(inner.env).map(([k, v]) => shq(`${k}=${v}`));
  const chain = innerChain(tools, inner, limits, uid).map(shq);
  lines.push(
    `exec ${shq(tools.chroot!)} ${R} ${shq(tools.sh!)} -c '"$@"; exit $?' sh ${shq(tools.env!)} -i -C ${SANDBOX_DIR} ${envArgs.join(' ')} ${chain.join(' ')}`,
  );
  const ns = ['--pid', '--fork', '--kill-child', '--net', '--ipc', '--uts', '--mount', '--propagation', 'private'];
  if (!isRoot()) ns.unshift('--user', '--map-root-user');
  // setpriv --pdeathsig: if the host process dies, unshare dies too, and --kill-child takes the namespace with it.
  return {
    command: tools.setpriv!,
    args: ['--pdeathsig=KILL', '--', tools.unshare!, ...ns, '--', tools.sh!, '-c', lines.join('\n')],
    env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
    cwd: workDir,
  };
}

/** Unisolated: only the chain (setpriv to a private uid when root, rlimits), an empty environment and the temp cwd. */
export function nonePlan(
  tools: HostTools,
  inner: InnerCommand,
  workDir: string,
  limits: SandboxLimits,
  uid: number | undefined,
): SpawnPlan {
  const chain = innerChain(tools, inner, limits, uid);
  const env = { ...inner.env, HOME: workDir, TMPDIR: workDir };
  return { command: chain[0]!, args: chain.slice(1), env, cwd: workDir };
}

/** Builds the host command line for an isolation kind. */
export function planFor(
  kind: IsolationKind,
  tools: HostTools,
  layout: LayoutEntry[],
  inner: InnerCommand,
  workDir: string,
  rootDir: string,
  limits: SandboxLimits,
  uid: number | undefined,
): SpawnPlan {
  if (kind === 'bwrap') return bwrapPlan(tools, layout, inner, workDir, limits, uid);
  if (kind === 'unshare') return unsharePlan(tools, layout, inner, workDir, rootDir, limits, uid);
  return nonePlan(tools, inner, workDir, limits, uid);
}
