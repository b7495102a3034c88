#!/usr/bin/env bash
# Sets up Kiln from nothing and runs its main job on the bundled example:
# an fx graph lowered to loop nodes, with its elementwise chain fused into one
# node. Prints the graph before and after.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EXAMPLE="${1:-$ROOT/examples/bias_relu_scale.mlir}"

"$ROOT/utils/build.sh" kiln-opt >/dev/null

echo "== $EXAMPLE (fx graph)"
grep -v '^//' "$EXAMPLE"
echo
echo "== kiln-opt --kiln-lower-to-loop"
"$ROOT/build/bin/kiln-opt" --kiln-lower-to-loop "$EXAMPLE"
