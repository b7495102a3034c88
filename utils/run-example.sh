#!/usr/bin/env bash
# Sets up Kiln from nothing and runs its main job on the bundled examples:
# an fx graph lowered to loop nodes (its elementwise chain fused into one
# node), then a PyTorch function and a small model compiled for this CPU,
# checked against eager PyTorch and timed next to it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EXAMPLE="${1:-$ROOT/examples/bias_relu_scale.mlir}"

"$ROOT/utils/build.sh" >/dev/null

echo "== $EXAMPLE (fx graph)"
grep -v '^//' "$EXAMPLE"
echo
echo "== kiln-opt --kiln-lower-to-loop"
"$ROOT/build/bin/kiln-opt" --kiln-lower-to-loop "$EXAMPLE"

echo
echo "== kiln.compile: examples/residual_gelu_like.py"
PYTHONPATH="$ROOT/python" /usr/bin/python3 "$ROOT/examples/residual_gelu_like.py"

echo
echo "== kiln.compile: examples/small_classifier.py"
PYTHONPATH="$ROOT/python" /usr/bin/python3 "$ROOT/examples/small_classifier.py"
