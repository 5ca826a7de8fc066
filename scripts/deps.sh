#!/bin/sh
# Installs the Debian packages llmsim needs to build and test, only those that are missing.
# With --dev, also the developer tools CI uses: clang and its runtime libraries (libFuzzer, ASan,
# UBSan) for the sanitizer build and the fuzzers, clang-format and clang-tidy for scripts/lint.sh.
# The Python module and its tests (docs/python.md) need python3-dev, pybind11, pytest, pip and
# setuptools; the notebook (docs/examples/capacity.ipynb) nbclient, ipykernel and matplotlib.
# With --dev also Slurm and MUNGE for CI's one-node Slurm test (scripts/slurm-test.sh).
# `make test` and `make run` never need --dev.
set -eu
PKGS="make cmake ninja-build g++ libeigen3-dev libfmt-dev libcli11-dev nlohmann-json3-dev catch2 libbenchmark-dev
      python3 python3-dev pybind11-dev python3-pybind11 python3-pytest python3-pip python3-setuptools python3-wheel
      python3-nbclient python3-nbformat python3-ipykernel python3-matplotlib"
if [ "${1:-}" = "--dev" ]; then
  PKGS="clang libclang-rt-14-dev clang-format clang-tidy slurm-wlm munge"
fi
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "installing:$missing"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
