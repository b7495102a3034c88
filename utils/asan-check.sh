#!/usr/bin/env bash
# Runs the lit suite and a slice of the Python suite against Kiln's compiler
# built with AddressSanitizer and UndefinedBehaviorSanitizer (build-sanitize/,
# utils/build.sh --sanitize): any report fails the run.
#
#   utils/asan-check.sh [pytest files...]
#
# The Python slice compiles through the instrumented kiln-compile (the
# runtime libraries and the artifacts are not instrumented). It takes a
# while on two cores (a full build of Kiln's sources), so it runs before a
# release, not in CI.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="$ROOT/build-sanitize"
cd "$ROOT"

"$ROOT/utils/build.sh" --sanitize --build-dir "$BUILD_DIR" all || exit 1

# LLVM's allocators poison their free space in instrumented code only: with
# LLVM's own libraries uninstrumented, user poisoning would flag every slab
# that they fill (allow_user_poisoning=0 turns it off, not the checks of
# heap, stack and globals).
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:allow_user_poisoning=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0

echo "== lit (sanitized tools)"
/usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test" || status=1

echo "== pytest (through the sanitized kiln-compile)"
slice=("$@")
if [ ${#slice[@]} -eq 0 ]; then
  slice=(python/tests/test_tools.py python/tests/test_guards.py
         python/tests/test_cache.py python/tests/test_dynamic.py)
fi
cache="$(mktemp -d)"
trap 'rm -rf "$cache"' EXIT
KILN_TOOLS_DIR="$BUILD_DIR/bin" XDG_CACHE_HOME="$cache" \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider "${slice[@]}" || status=1

echo "asan-check: $([ $status -eq 0 ] && echo passed || echo FAILED)"
exit $status
