import assert from 'node:assert/strict';
import { initBackend, tf } from '@troupe/lm';

/** Row-major product of equal-batch tensors, computed on the host. */
function hostBmm(
  a: Float32Array,
  b: Float32Array,
  batch: number,
  M: number,
  K: number,
  N: number,
  transB: boolean,
): Float64Array {
  const out = new Float64Array(batch * M * N);
  for (let p = 0; p < batch; p++)
    for (let i = 0; i < M; i++)
      for (let j = 0; j < N; j++) {
        let s = 0;
        for (let k = 0; k < K; k++)
          s += a[(p * M + i) * K + k]! * (transB ? b[(p * N + j) * K + k]! : b[(p * K + k) * N + j]!);
        out[(p * M + i) * N + j] = s;
      }
  return out;
}

describe('wasm kernels (BatchMatMul per batch entry, Slice without a full copy)', () => {
  before(async () => {
    await initBackend({ backend: 'wasm', fresh: true });
  });

  it('batched matmuls (fast path and fallbacks) equal the host product, with fresh operands of one shape each call', () => {
    const cases: [number[], number, number, number, boolean][] = [
      [[2, 3], 32, 8, 40, false], // fast path (>= 24 rows)
      [[5], 64, 16, 24, false],
      [[4], 1, 32, 48, false], // one row: original kernel
      [[3], 30, 8, 12, true], // transpose flag: original kernel
    ];
    for (const [lead, M, K, N, transB] of cases) {
      const batch = lead.reduce((x, y) => x * y, 1);
      for (let rep = 0; rep < 3; rep++) {
        const [got, a, b] = tf.tidy(() => {
          const ta = tf.randomUniform([...lead, M, K], -1, 1, 'float32', 10 + rep);
          const tb = tf.randomUniform(transB ? [...lead, N, K] : [...lead, K, N], -1, 1, 'float32', 20 + rep);
          return [
            tf.matMul(ta, tb, false, transB).dataSync() as Float32Array,
            ta.dataSync() as Float32Array,
            tb.dataSync() as Float32Array,
          ];
        });
        const want = hostBmm(a, b, batch, M, K, N, transB);
        assert.equal(got.length, want.length);
        for (let i = 0; i < want.length; i++)
          assert.ok(
            Math.abs(got[i]! - want[i]!) < 1e-4,
            `case ${JSON.stringify([lead, M, K, N, transB])} rep ${rep} at ${i}: ${got[i]} vs ${want[i]}`,
          );
      }
    }
  });

  it('slices any window of float32, int32 and bool tensors exactly', () => {
    const shape = [3, 4, 5, 6];
    const n = 360;
    const windows: [number[], number[]][] = [
      [
        [1, 0, 0, 0],
        [2, 4, 5, 6],
      ],
      [
        [0, 1, 2, 3],
        [3, 2, 3, 3],
      ],
      [
        [2, 3, 4, 5],
        [1, 1, 1, 1],
      ],
      [
        [0, 0, 0, 1],
        [3, 4, 5, 4],
      ],
      [
        [1, 1, 0, 0],
        [1, 2, 5, 6],
      ],
    ];
    for (const dtype of ['float32', 'int32', 'bool'] as const) {
      const vals = Array.from({ length: n }, (_, i) => (dtype === 'bool' ? (i % 3 === 0 ? 1 : 0) : i));
      for (const [begin, size] of windows) {
        const got = tf.tidy(() => Array.from(tf.tensor(vals, shape, dtype).slice(begin, size).dataSync()));
        const want: number[] = [];
        for (let a = 0; a < size[0]!; a++)
          for (let b = 0; b < size[1]!; b++)
            for (let c = 0; c < size[2]!; c++)
              for (let d = 0; d < size[3]!; d++) {
                want.push(vals[(((begin[0]! + a) * 4 + begin[1]! + b) * 5 + begin[2]! + c) * 6 + begin[3]! + d]!);
              }
        assert.deepEqual(got, want, `${dtype} slice ${JSON.stringify([begin, size])}`);
      }
    }
  });
});
