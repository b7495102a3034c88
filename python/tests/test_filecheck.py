"""The importer's exact output for a few small functions, checked by FileCheck.

Each test imports a function and runs FileCheck with the test's own prefix
on this file, as lit tests do: the CHECK lines below each test pin the text
the importer prints (names, attributes, types, guards), line by line.
"""

import subprocess
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402
from kiln.importer import import_function  # noqa: E402

FILECHECK = Path("/usr/lib/llvm-22/bin/FileCheck")
pytestmark = pytest.mark.skipif(not FILECHECK.is_file(), reason=f"no {FILECHECK}")


def filecheck(prefix, fn, *inputs, **kwargs):
    """Imports fn on inputs (parameters lifted; `kwargs` for import_function),
    has kiln-opt verify the text, and checks it against this file's `prefix`
    lines."""
    text = import_function(fn, inputs, **kwargs).text
    kiln.run_opt(text)
    result = subprocess.run(
        [str(FILECHECK), __file__, f"--check-prefix={prefix}", "--match-full-lines"],
        input=text, capture_output=True, text=True)
    assert result.returncode == 0, f"{result.stderr}\n--- importer output ---\n{text}"


# BIAS:      fx.graph @forward(
# BIAS-NEXT:     %x_1: tensor<4x8xf32> {fx.guard = #fx.tensor_guard<sizes = [4, 8], align = 16, device = "cpu">},
# BIAS-NEXT:     %b_1: tensor<8xf32> {fx.guard = #fx.tensor_guard<sizes = [8], align = 16, device = "cpu">}) -> tensor<4x8xf32> {
# BIAS-NEXT:   %add = fx.add %x_1, %b_1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
# BIAS-NEXT:   %relu = fx.relu %add : tensor<4x8xf32>
# BIAS-NEXT:   %mul = fx.mul_scalar %relu {other = 2.000000e+00 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
# BIAS-NEXT:   fx.output %mul : tensor<4x8xf32>
# BIAS-NEXT: }
def test_bias_relu_scale():
    filecheck("BIAS", lambda x, b: torch.relu(x + b) * 2.0, torch.randn(4, 8), torch.randn(8))


# LN:      fx.graph @layer_norm(
# LN-NEXT:     %x_1: tensor<3x8xbf16> {fx.guard = #fx.tensor_guard<sizes = [3, 8], align = 16, device = "cpu">},
# LN-NEXT:     %w_1: tensor<8xbf16> {fx.guard = #fx.tensor_guard<sizes = [8], align = 16, device = "cpu">}) -> (tensor<3x8xbf16>, tensor<3x1xbf16>) {
# LN-NEXT:   %native_layer_norm:3 = fx.native_layer_norm %x_1 weight(%w_1) {normalized_shape = array<i64: 8>, eps = 1.000000e-05 : f64} : (tensor<3x8xbf16>, tensor<8xbf16>) -> (tensor<3x8xbf16>, tensor<3x1xbf16>, tensor<3x1xbf16>)
# LN-NEXT:   fx.output %native_layer_norm#0, %native_layer_norm#1 : tensor<3x8xbf16>, tensor<3x1xbf16>
# LN-NEXT: }
def test_layer_norm_results_and_optional_operands():
    def layer_norm(x, w):
        out, mean, _ = torch.ops.aten.native_layer_norm(x, [8], w, None, 1e-5)
        return out, mean

    filecheck("LN", layer_norm, torch.randn(3, 8, dtype=torch.bfloat16),
              torch.randn(8, dtype=torch.bfloat16), name="layer_norm")


# IDX:      fx.graph @forward(
# IDX-NEXT:     %x_1: tensor<3x4xf32> {fx.guard = #fx.tensor_guard<sizes = [3, 4], align = 16, device = "cpu">},
# IDX-NEXT:     %i_1: tensor<2xsi64> {fx.guard = #fx.tensor_guard<sizes = [2], align = 16, device = "cpu">}) -> (tensor<3x2xf32>, tensor<3xsi64>, tensor<3x4xf32>) {
# IDX-NEXT:   %slice_1 = fx.slice %x_1 {dim = 0 : i64, start = 0 : i64, end = 9223372036854775807 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
# IDX-NEXT:   %index = fx.index %slice_1, %i_1 {index_positions = array<i64: 1>} : (tensor<3x4xf32>, tensor<2xsi64>) -> tensor<3x2xf32>
# IDX-NEXT:   %gt = fx.gt_scalar %x_1 {other = 0 : i64} : (tensor<3x4xf32>) -> tensor<3x4xi1>
# IDX-NEXT:   %sum_1 = fx.sum %gt {dim = array<i64: 1>} : (tensor<3x4xi1>) -> tensor<3xsi64>
# IDX-NEXT:   %neg_default = fx.neg %x_1 : tensor<3x4xf32>
# IDX-NEXT:   %sub = fx.add_scalar %neg_default {other = 1.000000e+00 : f64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
# IDX-NEXT:   fx.output %index, %sum_1, %sub : tensor<3x2xf32>, tensor<3xsi64>, tensor<3x4xf32>
# IDX-NEXT: }
def test_index_positions_bool_sum_and_scalar_on_the_left():
    filecheck("IDX", lambda x, i: (x[:, i], (x > 0).sum(1), 1.0 - x),
              torch.randn(3, 4), torch.tensor([0, 2]))


# LIN:      fx.graph @forward(
# LIN-NEXT:     %arg0_1: tensor<3x4xf32> {fx.guard = #fx.tensor_guard<sizes = [3, 4], align = 16, device = "cpu">},
# LIN-NEXT:     %_param_constant0_1: tensor<2x4xf32> {fx.guard = #fx.tensor_guard<sizes = [2, 4], align = 16, device = "cpu">},
# LIN-NEXT:     %_param_constant1_1: tensor<2xf32> {fx.guard = #fx.tensor_guard<sizes = [2], align = 16, device = "cpu">}) -> tensor<3x2xf32> {
# LIN-NEXT:   %permute = fx.permute %_param_constant0_1 {dims = array<i64: 1, 0>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
# LIN-NEXT:   %addmm = fx.addmm %_param_constant1_1, %arg0_1, %permute : (tensor<2xf32>, tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
# LIN-NEXT:   fx.output %addmm : tensor<3x2xf32>
# LIN-NEXT: }
def test_linear_module_parameters_become_inputs():
    # aten.t, which the fx dialect lacks, decomposes to aten.permute.
    filecheck("LIN", torch.nn.Linear(4, 2), torch.randn(3, 4))


# DYN:      fx.graph @forward(
# DYN-NEXT:     %x_1: tensor<?x8xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 8], align = 16, device = "cpu">},
# DYN-NEXT:     %y_1: tensor<?x1xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 1], align = 16, device = "cpu">}) -> (tensor<?x8xf32>, tensor<?xf32>)
# DYN-NEXT:     attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
# DYN-NEXT:   %mul = fx.mul %x_1, %y_1 : (tensor<?x8xf32>, tensor<?x1xf32>) -> tensor<?x8xf32>
# DYN-NEXT:   %view = fx.view %mul : (tensor<?x8xf32>) -> tensor<?xf32>
# DYN-NEXT:   fx.output %mul, %view : tensor<?x8xf32>, tensor<?xf32>
# DYN-NEXT: }
def test_dynamic_rows_shared_by_two_inputs():
    def scale_and_flatten(x, y):
        z = x * y
        return z, z.view(-1)

    filecheck("DYN", scale_and_flatten, torch.randn(3, 8), torch.randn(3, 1),
              dynamic={0: [0], 1: [0]})
