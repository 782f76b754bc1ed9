#!/usr/bin/env bash
# Installs everything Troupe needs on a fresh Debian-like machine: the system tools the sandbox uses
# (bubblewrap; util-linux's unshare/prlimit are normally present) and the npm workspace (npm ci, which also
# builds every package through the root `prepare` script).
set -euo pipefail
cd "$(dirname "$0")/.."

# onnxruntime-node (pulled by @huggingface/transformers) would otherwise try to download CUDA files.
export ONNXRUNTIME_NODE_INSTALL_CUDA=skip

need_apt=()
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
command -v unshare >/dev/null 2>&1 || need_apt+=(util-linux)
# Debian's chromium: the viewer's tests drive it headless through playwright-core (no browser download);
# `troupe view` itself needs no browser on the machine that serves it.
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || need_apt+=(chromium)
# Debian's Redis: the distributed engine (BullMQ) queues rollouts on it; its tests start their own redis-server on a
# free port, so no service needs to run.
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
# Optional: Debian's PyTorch, the yardstick for numerical parity and speed (tests and `troupe bench model` use it
# when present). CI sets TROUPE_WITH_TORCH=1.
if [ "${TROUPE_WITH_TORCH:-0}" = 1 ] && ! /usr/bin/python3 -c 'import torch' >/dev/null 2>&1; then
  need_apt+=(python3-torch libopenblas0-pthread)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${need_apt[*]} (sandbox isolation, the viewer's browser tests, Redis for the distributed engine)"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "setup: please install ${need_apt[*]} for sandbox isolation, the viewer's browser tests and the distributed engine (sudo apt-get install ${need_apt[*]})" >&2
  fi
fi

# Optional: a Vulkan driver for the webgpu backend (Dawn, npm `webgpu`), so that its tests run on a machine without a
# GPU: Mesa's lavapipe, a software renderer. Debian 12's Mesa 22.3 is refused by Dawn; bookworm-backports has Mesa 25.
# A machine with a GPU needs its vendor's Vulkan driver instead (docs/gpu.md).
if [ "${TROUPE_WITH_WEBGPU:-0}" = 1 ]; then
  mesa=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
  if [ -z "$mesa" ] || dpkg --compare-versions "$mesa" lt 24 || ! dpkg-query -W libvulkan1 >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      suite=()
      if [ "$(. /etc/os-release && echo "${VERSION_CODENAME:-}")" = bookworm ]; then
        grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/ ||
          printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
            >/etc/apt/sources.list.d/bookworm-backports.sources
        suite=(-t bookworm-backports)
      fi
      echo "setup: installing Mesa's lavapipe and libvulkan1 ${suite[*]} (a software Vulkan driver for the webgpu backend)"
      apt-get update -qq >/dev/null &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${suite[@]}" mesa-vulkan-drivers libvulkan1 >/dev/null
    else
      echo "setup: TROUPE_WITH_WEBGPU=1 needs Mesa >= 24 (lavapipe) and libvulkan1; on Debian 12, as root: apt-get install -t bookworm-backports mesa-vulkan-drivers libvulkan1 (docs/gpu.md)" >&2
    fi
  fi
fi

if [ -f node_modules/.package-lock.json ] && [ "${TROUPE_SETUP_FORCE:-0}" != 1 ] && [ node_modules/.package-lock.json -nt package-lock.json ]; then
  echo "setup: node_modules is up to date; building"
  npm run build --silent
else
  npm ci --no-fund --no-audit
fi
