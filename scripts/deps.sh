#!/usr/bin/env bash
# Installs the Debian packages dmasim builds with, when any is missing. Sourced by the
# quick-start scripts; needs root (or sudo) only when something must be installed. gcc's
# AddressSanitizer and UBSan runtimes (libasan8, libubsan1) come with build-essential.
set -euo pipefail
DMASIM_PACKAGES=(build-essential cmake pkg-config git libsystemc-dev libboost-graph-dev libyaml-cpp-dev
                 libcli11-dev libfmt-dev googletest libgmock-dev libgtest-dev libbenchmark-dev
                 libnlopt-cxx-dev python3-matplotlib
                 clang libclang-rt-dev  # clang and libFuzzer: scripts/fuzz.sh (docs/testing.md)
                 libopenmpi-dev openmpi-bin)  # mpirun -np K dmasim (docs/scaling.md); CI tests two ranks
missing=()
for p in "${DMASIM_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "dmasim: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
