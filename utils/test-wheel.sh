#!/usr/bin/env bash
# Tests Kiln's wheel as a user installs it: builds it (utils/make-wheel.sh,
# which builds the relocatable bundle), installs it into a fresh virtual
# environment that sees only the system's PyTorch, and there, outside the
# repository and with nothing of Kiln's on PATH, compiles and runs a
# small model against eager and finds the torch.compile backend's entry point.
#
#   utils/test-wheel.sh [--reuse-bundle] [--xunit FILE]
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
XUNIT=""
MAKE_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --reuse-bundle) MAKE_ARGS+=(--reuse-bundle) ;;
    --xunit) XUNIT="$2"; shift ;;
    *) echo "usage: utils/test-wheel.sh [--reuse-bundle] [--xunit FILE]" >&2; exit 2 ;;
  esac
  shift
done

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

run_steps() {
  "$ROOT/utils/make-wheel.sh" "${MAKE_ARGS[@]}" || return 1
  local wheel=("$ROOT"/dist/kiln-*-py3-none-linux_x86_64.whl)
  /usr/bin/python3 -m venv --system-site-packages "$WORK/env" || return 1
  "$WORK/env/bin/python" -m pip install --quiet --no-deps --no-index "${wheel[0]}" ||
    return 1
  cd "$WORK" || return 1
  env -i HOME="$WORK" PATH=/usr/bin:/bin XDG_CACHE_HOME="$WORK/cache" \
    "$WORK/env/bin/python" - <<'PY'
import shutil
from importlib.metadata import entry_points
from pathlib import Path

import torch

import kiln
from kiln.tools import find_tool

package = Path(kiln.__file__).resolve().parent
assert "site-packages" in package.parts, f"kiln imported from {package}"
assert shutil.which("kiln-compile") is None, "a kiln-compile on PATH"
tool = find_tool("kiln-compile")
assert package in tool.parents, f"kiln-compile found outside the wheel: {tool}"


model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(),
                            torch.nn.LayerNorm(32), torch.nn.Linear(32, 4)).eval()
compiled = kiln.compile(model, [torch.randn(8, 16)])
x = torch.randn(8, 16)
with torch.no_grad():
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
backends = entry_points(group="torch_dynamo_backends")
assert any(e.name == "kiln" and e.value == "kiln.backend:kiln_backend" for e in backends)
print(f"test-wheel: kiln {kiln.__version__} compiled and ran with {tool}")
PY
}

start=$(date +%s)
run_steps
status=$?
if [ -n "$XUNIT" ]; then
  failures=$([ $status -eq 0 ] && echo 0 || echo 1)
  printf '<testsuite name="wheel" tests="1" failures="%s" time="%s"><testcase name="install and compile"/></testsuite>\n' \
    "$failures" "$(( $(date +%s) - start ))" > "$XUNIT"
fi
[ $status -eq 0 ] && echo "test-wheel: passed" || echo "test-wheel: FAILED"
exit $status
