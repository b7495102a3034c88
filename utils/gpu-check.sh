#!/usr/bin/env bash
# Checks Kiln's bundle on the GPU machine (no LLVM/MLIR there). Run from the
# repository root with the bundle carried in dist/:
#   utils/gpu-check.sh [dist/kiln-bundle.tar.xz]
# Logs go to $OUT when it is set. The last lines are a table of the checks.
# GPU_CHECK_PART=tests runs the checks up to the Python tests,
# GPU_CHECK_PART=perf the benchmarks and the models' inference and
# GPU_CHECK_PART=train the training step and GPU_CHECK_PART=sm80 the GPU
# tests once more with code for A100-class GPUs (sm_80 PTX, which the
# driver compiles for the GPU at hand), each after the bundle's basic
# checks, for machines that limit how long one command runs; the default
# runs all.
set -uo pipefail

BUNDLE="${1:-dist/kiln-bundle.tar.xz}"
LOG_DIR="${OUT:-$(mktemp -d)}"
LOG="$LOG_DIR/gpu-check.log"
UNPACK="$(mktemp -d /tmp/kiln-bundle.XXXXXX)"
KILN="$UNPACK/kiln"
RESULTS=()
failures=0
PART="${GPU_CHECK_PART:-all}"
case "$PART" in all|tests|perf|train|sm80) ;; *) echo "gpu-check: GPU_CHECK_PART is all, tests, perf, train or sm80" >&2; exit 2 ;; esac
in_part() { [ "$PART" = all ] || [ "$PART" = "$1" ]; }

record() { # name, status, detail
  RESULTS+=("$(printf '%-28s %-5s %s' "$1" "$2" "$3")")
  [ "$2" = ok ] || failures=$((failures + 1))
}

check() { # name, command...
  local name="$1"; shift
  echo "== $name: $*" >>"$LOG"
  local start=$SECONDS
  # A hung check must not use up the machine's time.
  if out="$(timeout --kill-after=10 "${CHECK_TIMEOUT:-200}" "$@" 2>&1)"; then
    echo "$out" >>"$LOG"
    record "$name" ok "$((SECONDS - start))s $(echo "$out" | tail -1 | cut -c1-60)"
  else
    echo "$out" >>"$LOG"
    record "$name" FAIL "$((SECONDS - start))s $(echo "$out" | tail -1 | cut -c1-60)"
  fi
}

{
  echo "host: $(uname -srm), $(nproc) cores"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  command -v ptxas >/dev/null && ptxas --version | tail -1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1
} >"$LOG" 2>&1

check "unpack bundle" tar -C "$UNPACK" -xJf "$BUNDLE"
check "no LLVM/MLIR libraries" bash -c "! ldd '$KILN/bin/kiln-opt' | grep -E 'libLLVM|libMLIR|libz3|libicu|not found' && echo 'needs only: '\$(ldd '$KILN/bin/kiln-opt' | awk '{print \$1}' | tr '\n' ' ')"
check "kiln-opt --help" bash -c "'$KILN/bin/kiln-opt' --help | grep -c -- '--kiln-' | sed 's/^/kiln passes listed: /'"
check "lower-to-loop pipeline" bash -c "'$KILN/bin/kiln-opt' --kiln-lower-to-loop '$KILN/examples/bias_relu_scale.mlir' > '$LOG_DIR/example-loop.mlir' && n=\$(grep -c loop.pointwise '$LOG_DIR/example-loop.mlir') && [ \"\$n\" = 1 ] && echo \"fused into \$n node\""
check "bad input rejected" bash -c "echo 'fx.graph @g(' > /tmp/kiln-bad.mlir; if '$KILN/bin/kiln-opt' /tmp/kiln-bad.mlir 2>/tmp/kiln-bad.err; then echo 'malformed input accepted'; exit 1; fi; grep -m1 -o 'kiln-bad.mlir:[0-9]*:[0-9]*: error.*' /tmp/kiln-bad.err"
check "python package" env PYTHONPATH="$KILN/python" python3 -c "
import kiln
out = kiln.run_opt(open('$KILN/examples/bias_relu_scale.mlir').read(), ['--kiln-lower-to-loop'])
assert out.count('loop.pointwise') == 1, out
print('kiln', kiln.__version__, 'via', kiln.find_tool('kiln-opt'))"
check "kiln.compile on CPU" env PATH="$KILN/bin:$PATH" PYTHONPATH="$KILN/python" XDG_CACHE_HOME="$UNPACK/cache" python3 -c "
import torch, kiln
f = lambda x, b, s: torch.relu(x + b) * s - x
args = [torch.randn(512, 1024), torch.randn(1024), torch.randn(512, 1)]
compiled = kiln.compile(f, args)
fresh = [torch.randn_like(a) for a in args]
err = (compiled(*fresh) - f(*fresh)).abs().max().item()
assert err == 0.0, err
print('torch', torch.__version__, 'max error', err)"
in_part tests && CHECK_TIMEOUT=90 check "kiln.compile on GPU" env PATH="$KILN/bin:$PATH" PYTHONPATH="$KILN/python" XDG_CACHE_HOME="$UNPACK/cache" python3 -c "
import torch, kiln
f = lambda x, b: torch.relu(x + b) * x
args = [torch.randn(1000, 300, device='cuda'), torch.randn(300, device='cuda')]
compiled = kiln.compile(f, args)
fresh = [torch.randn_like(a) for a in args]
got = compiled(*fresh)
torch.cuda.synchronize()
err = (got - f(*fresh)).abs().max().item()
assert err == 0.0, err
print('max error', err)"
in_part tests && CHECK_TIMEOUT=90 check "TORCH_LOGS=kiln" env PATH="$KILN/bin:$PATH" PYTHONPATH="$KILN/python" XDG_CACHE_HOME="$UNPACK/cache" TORCH_LOGS=kiln bash -c "python3 -c \"
import torch, kiln.backend
f = torch.compile(lambda x: (x.exp() + 1).relu(), backend='kiln')
f(torch.randn(64, device='cuda'))
\" 2>&1 | grep -m1 'regions compiled'"
in_part tests && check "cuBLASLt GEMM smoke" python3 utils/gemm-smoke.py "$KILN/lib/libkiln_cuda_runtime.so"
in_part tests && check "cuDNN convolution smoke" python3 utils/conv-smoke.py "$KILN/lib/libkiln_cuda_runtime.so"
in_part tests && check "compile for sanitizer" env PATH="$KILN/bin:$PATH" PYTHONPATH="$KILN/python" XDG_CACHE_HOME="$UNPACK/cache" python3 utils/sanitize-check.py --compile-only
in_part tests && CHECK_TIMEOUT=300 check "compute-sanitizer memcheck" env PATH="$KILN/bin:$PATH" PYTHONPATH="$KILN/python" XDG_CACHE_HOME="$UNPACK/cache" compute-sanitizer --tool memcheck --error-exitcode 1 python3 utils/sanitize-check.py
# The suite in shards, one process each, so that it fits one command's time.
in_part tests && CHECK_TIMEOUT=360 check "python tests (CPU+GPU)" env PATH="$KILN/bin:$PATH" XDG_CACHE_HOME="$UNPACK/cache" python3 utils/pytest-shards.py --shards 8 --log-dir "$LOG_DIR/pytest" --tb=short python/tests
in_part sm80 && CHECK_TIMEOUT=360 check "GPU tests with sm_80 code" env PATH="$KILN/bin:$PATH" XDG_CACHE_HOME="$UNPACK/cache" KILN_CUDA_CHIP=sm_80 python3 utils/pytest-shards.py --shards 8 --log-dir "$LOG_DIR/pytest-sm80" --tb=short -kcuda python/tests
in_part perf && check "benchmarks (GPU)" env PATH="$KILN/bin:$PATH" PYTHONPATH="$KILN/python" XDG_CACHE_HOME="$UNPACK/cache" bash -c "python3 '$KILN/bench/bench.py' --json '$LOG_DIR/bench.json' > '$LOG_DIR/bench.txt' 2>&1; status=\$?; cat '$LOG_DIR/bench.txt'; exit \$status"
in_part perf && CHECK_TIMEOUT=420 check "anchor models under kiln" env PATH="$KILN/bin:$PATH" PYTHONPATH="$KILN/python" XDG_CACHE_HOME="$UNPACK/cache" bash -c "python3 '$KILN/bench/models.py' --device cuda --dtype bf16 --systems kiln,kiln-cudagraphs --small --check > '$LOG_DIR/models-check.txt' 2>&1; status=\$?; tail -1 '$LOG_DIR/models-check.txt'; exit \$status"
in_part train && CHECK_TIMEOUT=200 check "a training step under kiln" env PATH="$KILN/bin:$PATH" PYTHONPATH="$KILN/python" XDG_CACHE_HOME="$UNPACK/cache" bash -c "python3 '$KILN/bench/models.py' --device cuda --dtype bf16 --systems kiln --small --train --models gpt2 --check > '$LOG_DIR/models-train-check.txt' 2>&1; status=\$?; tail -1 '$LOG_DIR/models-train-check.txt'; exit \$status"
in_part train && check "OpenMP layer loads" python3 -c "import ctypes, torch; lib = ctypes.CDLL('$KILN/lib/libkiln_openmp.so'); lib.kiln_openmp_library.restype = ctypes.c_char_p; print('on', lib.kiln_openmp_library().decode())"

head -4 "$LOG"
[ -f "$LOG_DIR/bench.txt" ] && { echo; cat "$LOG_DIR/bench.txt"; }
echo
printf '%-28s %-5s %s\n' check result detail
printf '%s\n' "${RESULTS[@]}"
echo "gpu-check: $(( ${#RESULTS[@]} - failures )) passed, $failures failed"
[ "$failures" -eq 0 ]
