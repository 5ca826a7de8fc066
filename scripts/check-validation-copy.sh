#!/bin/sh
# validation/ is the repository's copy of the team's published-runs folder (../shared/validation).
# When that folder sits beside the checkout, the copy must be identical to it; otherwise nothing to do.
set -eu
cd "$(dirname "$0")/.."
src=../shared/validation
if [ ! -d "$src" ]; then
  echo "check-validation-copy: no $src beside the checkout; skipped"
  exit 0
fi
if diff -r "$src" validation >/dev/null; then
  echo "check-validation-copy: validation/ is identical to $src"
else
  echo "check-validation-copy: validation/ differs from $src:" >&2
  diff -rq "$src" validation >&2 || true
  exit 1
fi
