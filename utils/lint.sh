#!/usr/bin/env bash
# Checks C++ formatting with clang-format-22 (.clang-format: LLVM style).
#
#   utils/lint.sh          files changed against HEAD, staged or not, plus new files
#   utils/lint.sh --all    every tracked C++ file
#   utils/lint.sh --fix    reformat the files instead of reporting them
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CLANG_FORMAT=/usr/lib/llvm-22/bin/clang-format
MODE=changed
FIX=0
for arg in "$@"; do
  case "$arg" in
    --all) MODE=all ;;
    --fix) FIX=1 ;;
    *) echo "usage: utils/lint.sh [--all] [--fix]" >&2; exit 2 ;;
  esac
done

PATTERNS=('*.cpp' '*.h' '*.c')
if [ "$MODE" = all ] || ! git rev-parse --verify -q HEAD >/dev/null; then
  mapfile -t FILES < <(git ls-files --cached --others --exclude-standard -- "${PATTERNS[@]}")
else
  mapfile -t FILES < <({ git diff --name-only --diff-filter=d HEAD -- "${PATTERNS[@]}";
                         git ls-files --others --exclude-standard -- "${PATTERNS[@]}"; } | sort -u)
fi

if [ ${#FILES[@]} -eq 0 ]; then
  echo "lint: no C++ files to check"
  exit 0
fi
if [ "$FIX" = 1 ]; then
  "$CLANG_FORMAT" -i "${FILES[@]}"
  echo "lint: formatted ${#FILES[@]} files"
  exit 0
fi
if "$CLANG_FORMAT" --dry-run -Werror "${FILES[@]}"; then
  echo "lint: ${#FILES[@]} files formatted correctly"
else
  echo "lint: formatting differs from .clang-format; run utils/lint.sh --fix" >&2
  exit 1
fi
