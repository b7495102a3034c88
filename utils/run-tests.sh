#!/usr/bin/env bash
# Sets up Kiln from nothing and runs every test: formatting, generated files
# up to date, the lit suite (check-kiln), a minute of fuzzing (utils/fuzz.py),
# Kiln as an installed library
# (utils/test-embedding.sh), the wheel in a fresh virtual environment
# (utils/test-wheel.sh) and the Python suite. Ends with one summary line:
#   kiln tests: N passed, N failed
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="$ROOT/build"
RESULTS="$BUILD_DIR/test-results"
cd "$ROOT"

# Set-up and build failures stop here: there is nothing to test.
"$ROOT/utils/build.sh" --build-dir "$BUILD_DIR" all mlir-doc || {
    echo "kiln tests: 0 passed, 1 failed (build)"; exit 1; }

rm -rf "$RESULTS"
mkdir -p "$RESULTS"
status=0

echo "== lint"
if "$ROOT/utils/lint.sh" --all; then
  echo '<testsuite name="lint" tests="1" failures="0"/>' > "$RESULTS/lint.xml"
else
  echo '<testsuite name="lint" tests="1" failures="1"/>' > "$RESULTS/lint.xml"
  status=1
fi

echo "== generated files"
if /usr/bin/python3 "$ROOT/utils/gen-fx-ops.py" --check; then
  echo '<testsuite name="generated" tests="1" failures="0"/>' > "$RESULTS/generated.xml"
else
  echo '<testsuite name="generated" tests="1" failures="1"/>' > "$RESULTS/generated.xml"
  status=1
fi

echo "== lit (check-kiln)"
/usr/lib/llvm-22/bin/lit -sv --xunit-xml-output="$RESULTS/lit.xml" "$BUILD_DIR/test" || status=1

echo "== fuzz (Kiln's tools on damaged lit inputs, 60 s)"
/usr/bin/python3 "$ROOT/utils/fuzz.py" --seconds 60 --seed 1 \
  --xunit "$RESULTS/fuzz.xml" || status=1

echo "== embedding (install, then examples/embed against the installed package)"
"$ROOT/utils/test-embedding.sh" --build-dir "$BUILD_DIR" \
  --xunit "$RESULTS/embedding.xml" || status=1

echo "== wheel (built with the relocatable tools, installed into a fresh venv, then a compile)"
"$ROOT/utils/test-wheel.sh" --xunit "$RESULTS/wheel.xml" || status=1

echo "== pytest"
/usr/bin/python3 -m pytest -q -p no:cacheprovider --junitxml="$RESULTS/pytest.xml" \
  "$ROOT/python/tests" || status=1

# Every suite's report, by name: a suite that wrote none counts as failed.
/usr/bin/python3 "$ROOT/utils/summarize-tests.py" \
  "$RESULTS"/{lint,generated,lit,fuzz,embedding,wheel,pytest}.xml || status=1
exit $status
