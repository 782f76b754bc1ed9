#!/usr/bin/env bash
# The GPU benchmark, for a machine with a GPU: `troupe doctor`, then `troupe bench model` on every backend that
# loads (tensorflow-gpu, tensorflow, webgpu, wasm; cpu only when listed), for the tiny and small presets and, given
# --model DIR (e.g. a Qwen3-0.6B checkpoint folder), that checkpoint. One JSON line per run on stdout: first a
# `machine` line (date, load, GPUs), then `doctor`, then one `bench` line per backend and model, with `error` when the
# backend did not start or the run failed. Progress goes to stderr.
#
#   bench/gpu.sh [--model DIR] [--backends "webgpu wasm"] [--timeout SECONDS] > gpu.jsonl
#
# Needs: the workspace set up (npm run setup); for webgpu the optional peers `webgpu` and
# `@tensorflow/tfjs-backend-webgpu` (devDependencies here) and a Vulkan driver (the GPU vendor's); for tensorflow-gpu
# `@tensorflow/tfjs-node-gpu` with CUDA. See docs/gpu.md.
set -uo pipefail
cd "$(dirname "$0")/.."

model=""
backends="tensorflow-gpu tensorflow webgpu wasm"
limit=1800
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model="$2"; shift 2 ;;
    --backends) backends="$2"; shift 2 ;;
    --timeout) limit="$2"; shift 2 ;;
    -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "bench/gpu.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ -n "$model" ] && [ ! -f "$model/config.json" ]; then
  echo "bench/gpu.sh: --model $model has no config.json (a Hugging Face-layout checkpoint folder)" >&2
  exit 2
fi

export TROUPE_FROM_SOURCE="${TROUPE_FROM_SOURCE:-1}"
troupe() { timeout "$limit" node packages/cli/bin/troupe.js "$@"; }

# Prints one JSON line: the fields given as JSON text in $1, merged with the JSON document read from stdin (or, when
# that is not JSON, an `error` with its first 500 characters).
line() {
  node -e '
    let s = "";
    process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const head = JSON.parse(process.argv[1]);
      let body;
      try { body = JSON.parse(s); } catch { body = { error: (s.trim() || "no output").slice(0, 500) }; }
      process.stdout.write(JSON.stringify({ ...head, ...body }) + "\n");
    });' "$1"
}

gpus="$(command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | tr '\n' ';' || echo none)"
printf '{"kind":"machine","date":"%s","load":"%s","gpus":"%s","cpus":%s}\n' \
  "$(date -u +%FT%TZ)" "$(uptime | sed 's/.*load average: //')" "${gpus//\"/}" "$(nproc)"

echo "bench/gpu.sh: troupe doctor" >&2
troupe doctor --json 2>/dev/null | line '{"kind":"doctor"}'

run() { # backend, label, bench args...
  local backend="$1" label="$2"
  shift 2
  echo "bench/gpu.sh: $backend $label" >&2
  local out rc
  out="$(troupe bench model --backend "$backend" --json "$@" 2>/tmp/troupe-gpu-bench.err)"
  rc=$?
  if [ $rc -ne 0 ]; then
    local why
    if [ $rc -eq 124 ]; then why="timed out after ${limit} s (--timeout)"; else
      # Dawn's own start-up warnings are not the reason
      why="$(grep -v '^Warning: maxDynamic' /tmp/troupe-gpu-bench.err | tail -c 500)"
    fi
    out="$(printf '%s' "$why" | node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>process.stdout.write(JSON.stringify({error:s.trim()||"exit code '"$rc"'"})))')"
  fi
  printf '%s' "$out" | line "{\"kind\":\"bench\",\"backend\":\"$backend\",\"model\":\"$label\",\"exit\":$rc}"
}

for backend in $backends; do
  for preset in tiny small; do run "$backend" "$preset" --preset "$preset" --no-torch; done
  [ -n "$model" ] && run "$backend" "$model" --model "$model" --gen-batch 1,8
done
rm -f /tmp/troupe-gpu-bench.err
