/**
 * A seccomp filter that forbids creating user namespaces, for bwrap as root (`bwrap --seccomp FD`). Unprivileged,
 * bwrap's own `--disable-userns` does this; as root the sandbox has no user namespace of its own, and a program in it
 * (not chrooted: bwrap pivots the root) could otherwise `unshare(CLONE_NEWUSER)` and gain every capability inside a
 * namespace of its own — kernel attack surface the sandbox has no use for. Under the unshare fallback the program is
 * chrooted, and the kernel already refuses user namespaces to chrooted processes.
 *
 * The filter, in classic BPF over `struct seccomp_data` (nr at 0, arch at 4, args[0] at 16):
 * - another architecture's system call (x86 `int 0x80`, x32) → EPERM;
 * - `clone3` → ENOSYS (its flags live in memory a filter cannot read; glibc then falls back to `clone`);
 * - `unshare` or `clone` with CLONE_NEWUSER in their flags → EPERM;
 * - anything else → allowed.
 */

/** The native architecture's audit id and system call numbers; undefined where no filter is built. */
interface Arch {
  audit: number;
  clone: number;
  unshare: number;
  clone3: number;
  /** x86-64 only: system call numbers at or above this are the x32 ABI. */
  x32Base?: number;
}

const ARCHES: Record<string, Arch> = {
  x64: { audit: 0xc000003e, clone: 56, unshare: 272, clone3: 435, x32Base: 0x40000000 },
  arm64: { audit: 0xc00000b7, clone: 220, unshare: 97, clone3: 435 },
};

const CLONE_NEWUSER = 0x10000000;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;

// Classic BPF opcodes.
const LD_W_ABS = 0x20;
const JEQ = 0x15;
const JGE = 0x35;
const JSET = 0x45;
const RET = 0x06;

type Insn = { code: number; k: number; jt?: string; jf?: string; label?: string };

/** Assembles instructions whose jump targets are labels into `struct sock_filter` bytes (little-endian). */
function assemble(prog: Insn[]): Buffer {
  const at = new Map(prog.flatMap((ins, i) => (ins.label ? [[ins.label, i] as const] : [])));
  const buf = Buffer.alloc(prog.length * 8);
  prog.forEach((ins, i) => {
    const off = (label?: string): number => (label === undefined ? 0 : at.get(label)! - i - 1);
    buf.writeUInt16LE(ins.code, i * 8);
    buf.writeUInt8(off(ins.jt), i * 8 + 2);
    buf.writeUInt8(off(ins.jf), i * 8 + 3);
    buf.writeUInt32LE(ins.k >>> 0, i * 8 + 4);
  });
  return buf;
}

/** The filter for this machine's architecture, or undefined on one it does not know (then nothing is filtered). */
export function noUserNamespacesFilter(arch: string = process.arch): Buffer | undefined {
  const a = ARCHES[arch];
  if (!a) return undefined;
  return assemble([
    { code: LD_W_ABS, k: 4 },
    { code: JEQ, k: a.audit, jf: 'eperm' },
    { code: LD_W_ABS, k: 0 },
    ...(a.x32Base !== undefined ? [{ code: JGE, k: a.x32Base, jt: 'eperm' }] : []),
    { code: JEQ, k: a.clone3, jt: 'enosys' },
    { code: JEQ, k: a.unshare, jt: 'flags' },
    { code: JEQ, k: a.clone, jt: 'flags', jf: 'allow' },
    { code: LD_W_ABS, k: 16, label: 'flags' },
    { code: JSET, k: CLONE_NEWUSER, jt: 'eperm', jf: 'allow' },
    { code: RET, k: RET_ALLOW, label: 'allow' },
    { code: RET, k: RET_ERRNO | EPERM, label: 'eperm' },
    { code: RET, k: RET_ERRNO | ENOSYS, label: 'enosys' },
  ]);
}
