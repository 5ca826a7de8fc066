#!/bin/sh
# Installs the Debian packages llmsim needs, only those that are missing.
#   scripts/deps.sh         to build and test (what the README's two commands need)
#   scripts/deps.sh --dev   also the developer tools CI uses: clang with libFuzzer, clang-format, clang-tidy
set -eu
PKGS="make cmake ninja-build g++ libeigen3-dev libfmt-dev libcli11-dev nlohmann-json3-dev catch2 libbenchmark-dev"
[ "${1:-}" = "--dev" ] && PKGS="$PKGS clang libclang-rt-dev clang-format clang-tidy"
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
