"""Tests for importing ATen-level FX graphs (make_fx) into the fx dialect.

Each test captures a function with kiln.capture, imports it, and has kiln-opt
parse and verify the text: the fx ops' verifiers recompute every result type
(broadcasting, type promotion), so a passing test means PyTorch and Kiln agree.
"""

import subprocess
import sys
from pathlib import Path

import re

import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402
from kiln.importer import UnsupportedDtypeError  # noqa: E402

try:
    from torch.func import functional_call
except ImportError:  # torch 1.13
    from torch.nn.utils.stateless import functional_call


def import_and_verify(fn, *inputs, **kwargs):
    """Captures fn on inputs, imports it, verifies it with kiln-opt; returns
    the importer's text."""
    gm = kiln.capture(fn, inputs)
    text = kiln.import_graph(gm, inputs, **kwargs)
    kiln.run_opt(text)
    return text


def op_lines(text, mnemonic):
    return [line.strip() for line in text.splitlines() if f"= {mnemonic} " in line]


def f32(*shape):
    return torch.randn(*shape)


# ===--- Each supported op ------------------------------------------------=== #


def test_add():
    text = import_and_verify(torch.add, f32(4, 8), f32(4, 8))
    assert op_lines(text, "fx.add") == [
        "%add = fx.add %arg0_1, %arg1_1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>"
    ]


def test_sub():
    text = import_and_verify(lambda x, y: x - y, f32(4, 8), f32(4, 8))
    assert op_lines(text, "fx.sub") == [
        "%sub = fx.sub %x_1, %y_1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>"
    ]


def test_mul():
    text = import_and_verify(lambda x, y: x * y, f32(3), f32(3))
    assert op_lines(text, "fx.mul") == [
        "%mul = fx.mul %x_1, %y_1 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>"
    ]


def test_neg():
    text = import_and_verify(lambda x: -x, torch.ones(2, 5, dtype=torch.int64))
    assert op_lines(text, "fx.neg") == ["%neg = fx.neg %x_1 : tensor<2x5xsi64>"]


def test_relu():
    text = import_and_verify(torch.relu, torch.randn(7, dtype=torch.bfloat16))
    assert op_lines(text, "fx.relu") == ["%relu = fx.relu %arg0_1 : tensor<7xbf16>"]


def test_pins_the_text_of_a_small_graph():
    def bias_relu_scale(x, b, y):
        return torch.relu(torch.sub(x, b, alpha=2.0)) * y

    inputs = (f32(2, 3), f32(3), f32(2, 1))
    text = kiln.import_graph(kiln.capture(bias_relu_scale, inputs), inputs, guards=False)
    assert text == (
        "fx.graph @forward(%x_1: tensor<2x3xf32>, %b_1: tensor<3xf32>, %y_1: tensor<2x1xf32>)"
        " -> tensor<2x3xf32> {\n"
        "  %sub = fx.sub %x_1, %b_1 {alpha = 2.000000e+00 : f64}"
        " : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>\n"
        "  %relu = fx.relu %sub : tensor<2x3xf32>\n"
        "  %mul = fx.mul %relu, %y_1 : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>\n"
        "  fx.output %mul : tensor<2x3xf32>\n"
        "}\n"
    )
    kiln.run_opt(text)


def test_lower_to_loop_fuses_bias_relu_scale():
    def bias_relu_scale(x, b, y):
        return torch.relu(x + b) * y

    text = import_and_verify(bias_relu_scale, f32(4, 8), f32(8), f32(4, 8))
    lowered = kiln.run_opt(text, ["--kiln-lower-to-loop"])
    assert lowered.count("loop.pointwise") == 1
    assert "fx.add" not in lowered and "fx.relu" not in lowered


# ===--- Broadcasting ------------------------------------------------------=== #


def test_broadcast_row_vector():
    text = import_and_verify(lambda x, b: x + b, f32(4, 8), f32(8))
    assert "(tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>" in text


def test_broadcast_column_vector():
    text = import_and_verify(lambda x, c: x * c, f32(4, 8), f32(4, 1))
    assert "(tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>" in text


def test_broadcast_leading_dims():
    def f(a, b, c):
        return a + b, b - c

    text = import_and_verify(f, f32(8, 1, 3), f32(5, 1), f32(2, 1, 5, 3))
    assert "(tensor<8x1x3xf32>, tensor<5x1xf32>) -> tensor<8x5x3xf32>" in text
    assert "(tensor<5x1xf32>, tensor<2x1x5x3xf32>) -> tensor<2x1x5x3xf32>" in text


# ===--- alpha -------------------------------------------------------------=== #


def test_int_alpha():
    ints = torch.arange(6, dtype=torch.int32)
    text = import_and_verify(lambda x, y: torch.add(x, y, alpha=2), ints, ints)
    assert "fx.add %x_1, %y_1 {alpha = 2 : i64} : " in text


def test_float_alpha():
    def f(x, y):
        return torch.add(x, y, alpha=2.0), torch.sub(x, y, alpha=0.1)

    text = import_and_verify(f, f32(3), f32(3))
    assert "{alpha = 2.000000e+00 : f64}" in text
    assert "{alpha = 1.000000e-01 : f64}" in text


def test_float_alpha_that_needs_all_its_digits():
    alpha = 0.123456789012345
    text = import_and_verify(lambda x, y: torch.sub(x, y, alpha=alpha), f32(3), f32(3))
    printed = kiln.run_opt(text)
    value = printed.split("alpha = ")[1].split(" : f64")[0]
    assert float(value) == alpha


@pytest.mark.parametrize("alpha", [1, 1.0])
def test_alpha_of_one_is_omitted(alpha):
    text = import_and_verify(lambda x, y: torch.sub(x, y, alpha=alpha), f32(3), f32(3))
    assert "alpha" not in text


# ===--- dtypes and promotion ------------------------------------------------=== #


@pytest.mark.parametrize(
    "lhs, rhs, result",
    [
        (torch.int32, torch.float16, "f16"),
        (torch.float16, torch.bfloat16, "f32"),
        (torch.uint8, torch.int32, "si32"),
        (torch.uint8, torch.int8, "si16"),
        (torch.bool, torch.float32, "f32"),
        (torch.bool, torch.uint8, "ui8"),
        (torch.int64, torch.float64, "f64"),
        (torch.complex64, torch.float64, "complex<f64>"),
    ],
)
def test_dtype_promotion(lhs, rhs, result):
    a = torch.ones(4, dtype=lhs)
    b = torch.ones(4, dtype=rhs)
    text = import_and_verify(lambda x, y: x + y, a, b)
    assert f"-> tensor<4x{result}>" in text


def test_bool_tensors():
    flags = torch.tensor([True, False])
    text = import_and_verify(lambda p, q: (p + q, p * q), flags, flags)
    assert "fx.add %p_1, %q_1 : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>" in text


def test_rank0_operands():
    def f(h, d, s):
        return h * d, d + s, torch.relu(s)

    half = torch.randn(4, dtype=torch.float16)
    scalar64 = torch.tensor(2.0, dtype=torch.float64)
    text = import_and_verify(f, half, scalar64, scalar64)
    assert "%d_1: tensor<f64>" in text
    # A zero-dim float64 does not widen a dimensioned float16.
    assert "(tensor<4xf16>, tensor<f64>) -> tensor<4xf16>" in text
    assert "(tensor<f64>, tensor<f64>) -> tensor<f64>" in text
    assert "fx.relu %s_1 : tensor<f64>" in text


# ===--- Graph inputs and outputs ------------------------------------------=== #


def test_multiple_outputs():
    def f(x, i):
        return x + x, i * i

    text = import_and_verify(f, f32(4, 8), torch.arange(4))
    assert ") -> (tensor<4x8xf32>, tensor<4xsi64>) {" in text
    assert "fx.output %add, %mul : tensor<4x8xf32>, tensor<4xsi64>" in text


def test_list_output():
    text = import_and_verify(lambda x: [torch.neg(x)], f32(2))
    assert ") -> tensor<2xf32> {" in text
    assert "fx.output %neg : tensor<2xf32>" in text


def test_returning_an_input_and_a_value_twice():
    def f(x, y):
        z = x * y
        return x, z, z

    text = import_and_verify(f, f32(3), f32(3))
    assert "fx.output %x_1, %mul, %mul : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>" in text


def test_same_tensor_passed_twice_stays_two_inputs():
    # make_fx alone would bind both uses to the second placeholder.
    x = f32(3)
    text = import_and_verify(lambda a, b: a - b, x, x)
    assert "fx.sub %a_1, %b_1 :" in text


@pytest.mark.parametrize("fn, expected", [
    # make_fx records `1.5 - x` as aten.rsub.Scalar, which decomposes to
    # aten.sub.Tensor(1.5, x): capture writes it -x + 1.5.
    (lambda x: 1.5 - x, ["%neg_default = fx.neg %x_1 : tensor<3xf32>",
                         "%sub = fx.add_scalar %neg_default {other = 1.500000e+00 : f64} : "
                         "(tensor<3xf32>) -> tensor<3xf32>"]),
    (lambda x: torch.add(2, x), ["%add = fx.add_scalar %x_1 {other = 2 : i64} : "
                                 "(tensor<3xf32>) -> tensor<3xf32>"]),
])
def test_scalar_on_the_left(fn, expected):
    text = import_and_verify(fn, f32(3))
    body = [line.strip() for line in text.splitlines() if " = fx." in line]
    assert body == expected


def test_module_with_parameters_passed_as_inputs():
    class BiasRelu(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bias = torch.nn.Parameter(torch.randn(8))

        def forward(self, x):
            return torch.relu(x + self.bias)

    module = BiasRelu()
    params = dict(module.named_parameters())

    def forward(params, x):
        return functional_call(module, params, (x,))

    # The parameter requires grad, so make_fx records a dead aten.detach that
    # capture drops.
    text = import_and_verify(forward, params, f32(4, 8), guards=False)
    assert "fx.graph @forward(%params_1: tensor<8xf32>, %x_1: tensor<4x8xf32>)" in text
    assert "fx.add %x_1, %params_1" in text
    assert "detach" not in text


def test_module_without_parameters_captures_directly():
    text = import_and_verify(torch.nn.ReLU(), f32(2, 2))
    assert "fx.relu" in text


def test_graph_name():
    text = import_and_verify(torch.neg, f32(2), name="my graph")
    assert text.startswith('fx.graph @"my graph"(')
    assert "fx.graph @block0" in import_and_verify(torch.neg, f32(2), name="block0")


def test_copy_into_a_fresh_tensor_imports_as_a_conversion():
    # torch 2.x traces in-place ops on fresh tensors so; readers before the
    # copy see the old values.
    def mask(x):
        fresh = torch.zeros_like(x)
        before = fresh + 1
        fresh.copy_(x > 0)
        return fresh * x, before

    text = import_and_verify(mask, f32(4, 3))
    assert "fx.copy" not in text and len(op_lines(text, "fx.to_copy")) == 1
    x = f32(4, 3)
    compiled = kiln.compile(mask, [x])
    for got, want in zip(compiled(x), mask(x)):
        assert torch.equal(got, want)


def test_copy_that_broadcasts_into_a_fresh_tensor():
    """Capture functionalizes the broadcasting copy_: into an expand_copy
    (expand with value semantics) and a cast on torch 1.13, a copy on 2.x."""
    def broadcasting(x):
        fresh = torch.empty(4, 3, dtype=torch.float64)
        fresh.copy_(x.sum(0))
        return fresh

    gm = kiln.capture(broadcasting, (f32(4, 3),))
    assert gm.kiln_input_updates == ()
    text = kiln.import_graph(gm, (f32(4, 3),))
    assert len(op_lines(text, "fx.expand") + op_lines(text, "fx.copy")) == 1
    x = f32(4, 3)
    assert torch.equal(kiln.compile(broadcasting, [x])(x), broadcasting(x))


def _assign_rows(x):
    x[2:6] = x[1:5].clone() + 1
    return x


def _scale_rows_and_shift(x, y):
    x[2:6].mul_(2)
    y.add_(1)
    return x.sum()


def _zero_first_row(x, i):
    x[0] = 0
    x.index_put_((i,), x[i.flip(0)] * 2)
    return x * 3


@pytest.mark.parametrize("fn, make", [
    (_assign_rows, lambda: [f32(8, 5)]),
    (_scale_rows_and_shift, lambda: [f32(8, 5), f32(3)]),
    (_zero_first_row, lambda: [f32(8, 5), torch.tensor([1, 2, 5])]),
], ids=["assign", "inplace-two-inputs", "fill-and-index-put"])
def test_writes_into_inputs_are_computed_and_copied_back(fn, make):
    """A function that writes into its inputs (a write into a view of an
    input that nothing reads afterwards included: ``x[2:6] = ...`` traces to
    a copy_ with no users) is captured functionalized: the graph returns
    the inputs' new values, which the compiled function copies into the
    caller's tensors. Compiling leaves the example inputs as they were."""
    example = make()
    before = [t.clone() for t in example]
    gm = kiln.capture(fn, example)
    written = [i for i, (a, b) in enumerate(zip(before, _eager_writes(fn, before)))
               if not torch.equal(a, b)]
    assert gm.kiln_input_updates == tuple(written)
    assert not any(n.target is torch.ops.aten.copy_.default for n in gm.graph.nodes)
    compiled = kiln.compile(fn, example)
    assert all(torch.equal(a, b) for a, b in zip(example, before))
    fresh = make()
    eager_inputs = [t.clone() for t in fresh]
    want = fn(*eager_inputs)
    got = compiled(*fresh)
    torch.testing.assert_close(got, want)
    for got_input, want_input in zip(fresh, eager_inputs):
        torch.testing.assert_close(got_input, want_input)


def _add_one_and_multiply(x, y):
    x.add_(1)
    return x * y


def test_writes_into_an_input_that_aliases_another_are_refused(tmp_path):
    """The compiled function reads every input before it writes one back;
    eager reads the write through any other input that shares its memory.
    So a call whose written input overlaps another is refused by name;
    disjoint parts of one tensor are fine."""
    compiled = kiln.compile(_add_one_and_multiply, [f32(4, 3), f32(4, 3)],
                            cache_dir=tmp_path)
    x = f32(4, 3)
    with pytest.raises(kiln.runtime.GuardError, match="input 0, which the function "
                       "writes into, shares memory with input 1"):
        compiled(x, x)
    whole = f32(8, 3)
    with pytest.raises(kiln.runtime.GuardError, match="shares memory"):
        compiled(whole[:4], whole[2:6])
    eager = whole.clone()
    want = _add_one_and_multiply(eager[:4], eager[4:])
    torch.testing.assert_close(compiled(whole[:4], whole[4:]), want)
    torch.testing.assert_close(whole, eager)


def _eager_writes(fn, inputs):
    """The inputs after an eager call of `fn` on copies of them."""
    copies = [t.clone() for t in inputs]
    fn(*copies)
    return copies


def test_a_write_into_a_module_buffer_is_refused():
    class Counter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("count", torch.zeros(3))

        def forward(self, x):
            self.count.add_(1)
            return x + self.count

    # The write is aten.copy_ into the buffer; torch 2.x's functionalization
    # leaves the update itself (prims.add) in place first. Either way the
    # error names the line that writes.
    with pytest.raises(kiln.UnsupportedOpError,
                       match=r"(aten\.copy_|prims\.add)\.default at .*test_importer\.py"):
        kiln.compile(Counter(), [f32(3)])


def test_capture_is_make_fx_or_export():
    with pytest.raises(ValueError, match="capture must be 'make_fx' or 'export'"):
        kiln.compile(torch.relu, [f32(3)], capture="dynamo")


@pytest.mark.skipif(hasattr(torch, "export"), reason="torch.export exists")
def test_capture_through_export_needs_torch_2():
    with pytest.raises(NotImplementedError, match="capture='export' needs torch.export"):
        kiln.compile(torch.relu, [f32(3)], capture="export")


# ===--- What is not supported yet ------------------------------------------=== #


@pytest.mark.skipif(
    tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 0),
    reason="make_fx on torch 2.x records no stack traces, even with "
    "record_stack_traces=True (seen on 2.11); Dynamo graphs carry them instead")
def test_unsupported_op_names_the_op_and_the_source_line():
    def uses_nonzero(x):
        y = x * x
        return torch.nonzero(y)

    sin_line = uses_nonzero.__code__.co_firstlineno + 2
    gm = kiln.capture(uses_nonzero, (f32(3),))
    with pytest.raises(kiln.UnsupportedOpError) as info:
        kiln.import_graph(gm, (f32(3),))
    message = str(info.value)
    assert "aten.nonzero.default" in message
    assert f"{Path(__file__).name}:{sin_line}" in message
    assert info.value.op == "aten.nonzero.default"
    assert info.value.location == (__file__, sin_line)
    assert isinstance(info.value, kiln.KilnImportError)


def test_every_unsupported_op_of_a_graph_is_named_at_once():
    """Two unsupported ops (each with getitems of its results, which fail
    with it and are not named again) raise one error naming both, the first
    one's attributes and each error in `errors`."""
    def two_decompositions(x):
        q = torch.linalg.qr(x)[0]
        return torch.linalg.svd(x)[0] + q

    first = two_decompositions.__code__.co_firstlineno + 1
    gm = kiln.capture(two_decompositions, (f32(4, 4),))
    with pytest.raises(kiln.UnsupportedOpError) as info:
        kiln.import_graph(gm, (f32(4, 4),))
    message = str(info.value)
    assert message.startswith("2 unsupported nodes: "), message
    assert "aten.linalg_qr.default" in message and "aten._linalg_svd.default" in message
    assert "getitem" not in message
    assert info.value.op == "aten.linalg_qr.default"
    assert info.value.location == (__file__, first)
    assert [e.op for e in info.value.errors] == ["aten.linalg_qr.default",
                                                 "aten._linalg_svd.default"]


def test_unsupported_op_without_stack_trace_names_the_node():
    gm = kiln.capture(torch.nonzero, (f32(3),))
    for node in gm.graph.nodes:
        node.meta.pop("stack_trace", None)
    with pytest.raises(kiln.UnsupportedOpError,
                       match=r"aten\.nonzero\.default.*FX node 'nonzero'"):
        kiln.import_graph(gm, (f32(3),))


@pytest.mark.parametrize("fn, expected", [
    (lambda x: x + 1.0, "fx.add_scalar %x_1 {other = 1.000000e+00 : f64}"),
    (lambda x: 1.0 + x, "fx.add_scalar %x_1 {other = 1.000000e+00 : f64}"),
    (lambda x: 2 * x, "fx.mul_scalar %x_1 {other = 2 : i64}"),
    (lambda x: x - 3, "fx.sub_scalar %x_1 {other = 3 : i64}"),
])
def test_scalar_operands_import_as_scalar_overloads(fn, expected):
    # Tracing records `x + 1.0` as aten.add.Tensor(x, 1.0): the scalar is a
    # wrapped number, which is what the .Scalar overloads mean.
    text = import_and_verify(fn, f32(3))
    assert expected in text


def test_complex_python_numbers_import_as_zero_dim_tensors():
    """No fx attribute holds a complex number: ``x * 1j`` multiplies by
    ``complex`` of two zero-dim tensors, in the dtype the number promotes
    x to (complex128 for f64), and ``eq.Scalar`` takes its .Tensor form."""
    text = import_and_verify(lambda x: (x * 1j, torch.eq(x.to(torch.complex64), 2j)),
                             torch.randn(3, dtype=torch.float64))
    assert "fx.scalar_tensor {s = 0.000000e+00 : f64, dtype = f64}" in text, text
    assert "fx.scalar_tensor {s = 1.000000e+00 : f64, dtype = f64}" in text, text
    assert "-> tensor<complex<f64>>" in text
    assert re.search(r"fx.mul %x_1, %\w+ : \(tensor<3xf64>, tensor<complex<f64>>\) "
                     r"-> tensor<3xcomplex<f64>>", text), text
    assert "fx.eq %" in text and "fx.eq_scalar" not in text


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_unsupported_dtype():
    chalf = torch.zeros(4, dtype=torch.complex32)
    gm = kiln.capture(lambda x: x, (chalf,))
    with pytest.raises(UnsupportedDtypeError, match="torch.complex32"):
        kiln.import_graph(gm, (chalf,))


def test_non_tensor_input():
    gm = kiln.capture(lambda x, n: x * x, (f32(3), 3))
    with pytest.raises(kiln.UnsupportedOpError, match="non-tensor graph input"):
        kiln.import_graph(gm, (f32(3), 3))


def test_module_parameters_as_attributes_are_rejected():
    module = torch.nn.Linear(4, 2)
    gm = kiln.capture(lambda x: x + module.bias, (f32(2),))
    with pytest.raises(kiln.UnsupportedOpError, match="must be graph inputs"):
        kiln.import_graph(gm, (f32(2),))


def test_nested_output_is_flattened():
    text = import_and_verify(lambda x: (x, [torch.neg(x), (x * x,)]), f32(2))
    assert "fx.output %x_1, %neg, %mul : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>" in text


def test_non_tensor_output_is_rejected():
    gm = kiln.capture(lambda x: (x, 3), (f32(2),))
    with pytest.raises(kiln.UnsupportedOpError, match="must return tensors"):
        kiln.import_graph(gm, (f32(2),))
    only_none = kiln.capture(lambda x: None, (f32(2),))
    with pytest.raises(kiln.UnsupportedOpError, match="at least one tensor"):
        kiln.import_graph(only_none, (f32(2),))


def test_none_outputs_are_no_graph_results(tmp_path):
    """A None among the results (a backward graph's gradient of an input
    that needs none) is no result of the fx graph; the compiled function
    returns it where the original does."""
    def fn(x):
        return x * 2, None, [x + 1, None]

    x = f32(3)
    gm = kiln.capture(fn, (x,))
    assert kiln.import_graph(gm, (x,)).count("fx.output") == 1
    compiled = kiln.compile(fn, [x], cache_dir=tmp_path)
    doubled, none, (plus, none_too) = compiled(x)
    assert none is None and none_too is None
    torch.testing.assert_close(doubled, x * 2)
    torch.testing.assert_close(plus, x + 1)


def test_returning_all_results_of_an_op_at_once_is_rejected():
    """A graph that returns a multi-result node itself (not its getitems)
    gets a clear refusal, not fx text that does not parse."""
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(torch.ops.aten.native_layer_norm.default,
                                     (x, [16], None, None, 1e-5)))
    gm = torch.fx.GraphModule(torch.nn.Module(), graph)
    with pytest.raises(kiln.UnsupportedOpError,
                       match="every result of aten.native_layer_norm.default at once"):
        kiln.import_graph(gm, (f32(4, 16),))


def test_wrong_number_of_example_inputs():
    gm = kiln.capture(torch.neg, (f32(2),))
    with pytest.raises(kiln.KilnImportError, match="1 inputs but 2 example inputs"):
        kiln.import_graph(gm, (f32(2), f32(2)))


def test_example_inputs_must_be_a_sequence():
    with pytest.raises(TypeError, match="tuple or list"):
        kiln.capture(torch.neg, f32(2))


def test_is_supported():
    gm = kiln.capture(lambda x, n: (torch.relu(x) + 1.0, torch.nonzero(x)), (f32(3), 3))
    supported = {node.name: kiln.is_supported(node) for node in gm.graph.nodes}
    assert supported == {
        "x_1": True,
        "n_1": False,  # not a tensor
        "relu": True,
        "add": True,  # imported as fx.add_scalar
        "nonzero": False,
        "output": True,
    }


def test_check_supported_says_why_with_the_op_and_the_line():
    def fn(x):
        y = torch.relu(x)
        return torch.nonzero(y)

    line = fn.__code__.co_firstlineno + 2
    gm = kiln.capture(fn, (f32(3),))
    nodes = {node.name: node for node in gm.graph.nodes}
    kiln.check_supported(nodes["relu"])
    with pytest.raises(kiln.UnsupportedOpError) as info:
        kiln.check_supported(nodes["nonzero"])
    assert info.value.op == "aten.nonzero.default"
    assert info.value.node_name == "nonzero"
    if nodes["nonzero"].meta.get("stack_trace"):  # make_fx of torch 1.13 records it.
        assert info.value.location == (__file__, line)
        assert f"{Path(__file__).name}:{line}" in str(info.value)
    assert str(info.value).startswith("unsupported op aten.nonzero.default")


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
def test_check_supported_of_parameters_and_dtypes():
    module = torch.nn.Linear(4, 2)
    gm = kiln.capture(module, (f32(3, 4),))
    get_attr = next(n for n in gm.graph.nodes if n.op == "get_attr")
    assert not kiln.is_supported(get_attr)
    with pytest.raises(kiln.UnsupportedOpError, match="lift_constants"):
        kiln.check_supported(get_attr)
    chalf = torch.zeros(2, dtype=torch.complex32)
    gm = kiln.capture(lambda x: x, (chalf,))
    placeholder = next(n for n in gm.graph.nodes if n.op == "placeholder")
    with pytest.raises(UnsupportedDtypeError, match="dtype torch.complex32"):
        kiln.check_supported(placeholder)


def test_import_kiln_works_without_torch():
    # Blocks torch in a fresh interpreter, as on a Python that lacks it.
    script = (
        "import sys; sys.modules['torch'] = None\n"
        f"sys.path.insert(0, {str(Path(kiln.__file__).parent.parent)!r})\n"
        "import kiln\n"
        "assert callable(kiln.run_opt) and 'kiln.importer' not in sys.modules\n"
        "try:\n"
        "    kiln.capture\n"
        "except ImportError:\n"
        "    print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


# ===--- Ops from the generated table ----------------------------------------=== #


def test_table_op_with_several_results_and_optional_operands():
    def fn(x, w, b):
        return torch.nn.functional.layer_norm(x, (16,), w, b, eps=1e-6)

    text = import_and_verify(fn, f32(4, 16), f32(16), f32(16))
    assert ("%native_layer_norm:3 = fx.native_layer_norm %x_1 weight(%w_1) bias(%b_1) "
            "{normalized_shape = array<i64: 16>, eps = 9.9999999999999995E-7 : f64}"
            in text.replace("1.000000e-06", "9.9999999999999995E-7"))
    assert "fx.output %native_layer_norm#0 : tensor<4x16xf32>" in text


def test_table_op_without_its_optional_operands():
    text = import_and_verify(
        lambda x: torch.nn.functional.layer_norm(x, (16,)), f32(4, 16))
    assert "fx.native_layer_norm %x_1 {normalized_shape" in text


@pytest.mark.parametrize("fn, expected", [
    (lambda x: x.sum(dim=1, keepdim=True), "fx.sum %x_1 {dim = array<i64: 1>, keepdim = true}"),
    (lambda x: x.sum(), "fx.sum %x_1 :"),
    (lambda x: x.to(torch.float16), "fx.to_copy %x_1 {dtype = f16}"),
    (lambda x: torch.softmax(x, dim=-1), "fx.softmax %x_1 {dim = -1 : i64, half_to_float = false}"),
    (lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
     'fx.gelu %x_1 {approximate = "tanh"}'),
    (lambda x: torch.exp(x) * torch.sigmoid(x), "fx.exp %x_1 : (tensor<4x6xf32>)"),
    (lambda x: x.permute(1, 0), "fx.permute %x_1 {dims = array<i64: 1, 0>}"),
    (lambda x: x.amax(dim=0), "fx.amax %x_1 {dim = array<i64: 0>}"),
    (lambda x: torch.where(x > 0, x, -x), "fx.where %gt, %x_1, %neg"),
])
def test_table_ops(fn, expected):
    text = import_and_verify(fn, f32(4, 6))
    assert expected in text, text


def test_table_op_with_a_tensor_list():
    text = import_and_verify(lambda a, b: torch.cat([a, b], dim=1), f32(2, 3), f32(2, 5))
    assert "fx.cat %a_1, %b_1 {dim = 1 : i64}" in text


def test_table_op_matmul_chain():
    def mlp(x, w1, b1, w2):
        return torch.relu(x @ w1 + b1) @ w2

    text = import_and_verify(mlp, f32(8, 16), f32(16, 32), f32(32), f32(32, 4))
    assert text.count("fx.mm ") == 2


def test_optional_operands_print_where_the_op_declares_them():
    """torch 2.x's `_native_batch_norm_legit_no_training` has optional
    weight and bias between required operands; the printed op must keep the
    fx op's operand order (kiln-opt parses it back)."""
    from kiln._fx_signatures import OPS
    from kiln.importer import TensorType, _Printer, _TableOp

    class Overload:
        """Stands in for the torch 2.x overload: a schema and a name."""
        __name__ = "_native_batch_norm_legit_no_training"
        _schema = torch._C.parse_schema(
            "aten::_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, "
            "Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, "
            "float eps) -> (Tensor, Tensor, Tensor)")

        def __call__(self, *args):
            raise NotImplementedError

        def __str__(self):
            return "aten._native_batch_norm_legit_no_training.default"

    graph = torch.fx.Graph()
    x, w, b, mean, var = (graph.placeholder(n) for n in ("x", "w", "b", "mean", "var"))
    node = graph.call_function(Overload(), (x, w, b, mean, var, 0.1, 1e-5))
    channel = TensorType((3,), torch.float32)
    types = {x: TensorType((2, 3, 4), torch.float32), w: channel, b: channel, mean: channel,
             var: channel, node: (TensorType((2, 3, 4), torch.float32),
                                  TensorType((0,), torch.float32), TensorType((0,), torch.float32))}
    printer = _Printer(types)
    for value in (x, w, b, mean, var):
        printer.declare(value)
    op = _TableOp(OPS["aten._native_batch_norm_legit_no_training.default"]).emit(printer, node)
    assert "%x weight(%w) bias(%b), %mean, %var" in op
    kiln.run_opt(
        "fx.graph @g(%x: tensor<2x3x4xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>, "
        "%mean: tensor<3xf32>, %var: tensor<3xf32>) -> tensor<2x3x4xf32> {\n"
        f"  {op}\n  fx.output %{node.name}#0 : tensor<2x3x4xf32>\n}}\n")


# ===--- as_strided reads its operand's storage ---------------------------=== #


def test_as_strided_needs_an_operand_that_owns_its_storage():
    # torch 2.x records the storage; on torch 1.13 an op that aliases
    # nothing and whose result is contiguous owns it.
    text = import_and_verify(lambda x: (x * 2).as_strided((2, 3), (1, 2), 1), f32(3, 4))
    assert "fx.as_strided" in text
    refusals = {
        "graph input": lambda x: x.as_strided((2, 2), (1, 2), 1),
        "view": lambda x: (x * 2)[1:].as_strided((2, 2), (1, 2), 1),
        "view, which may share": lambda x: (x * 2)[:2].as_strided((2, 2), (1, 2), 1),
        # _unsafe_view aliases its operand though its schema does not say so.
        "(view, which may share|needs its operand's storage)": lambda x: torch.as_strided(
            torch.ops.aten._unsafe_view(x[1], [4]), (4,), (1,), 0),
        # A piece of a split shares its operand's storage.
        "view, which may share ": lambda x: torch.unsafe_split(x * 2, 2)[1].as_strided(
            (2, 2), (1, 2), 0),
    }
    for message, fn in refusals.items():
        with pytest.raises(kiln.UnsupportedOpError, match=f"as_strided.* {message}"):
            import_and_verify(fn, f32(3, 4))


def test_as_strided_scatter_needs_a_contiguous_self():
    text = import_and_verify(
        lambda x, s: torch.as_strided_scatter(x * 2, s, (2, 2), (1, 3), 1), f32(3, 4), f32(2, 2))
    assert "fx.as_strided_scatter" in text
    refusals = {
        "into a graph input places by the strides": lambda x, s: torch.as_strided_scatter(
            x, s, (2, 2), (1, 3), 1),
        "into a tensor that is not contiguous": lambda x, s: torch.as_strided_scatter(
            (x * 2).t(), s, (2, 2), (1, 3), 1),
    }
    for message, fn in refusals.items():
        with pytest.raises(kiln.UnsupportedOpError, match=f"as_strided_scatter.* {message}"):
            import_and_verify(fn, f32(3, 4), f32(2, 2))


def test_freeze_stores_a_tensor_read_under_two_names_once():
    from kiln.importer import freeze_constants, import_graph

    root = torch.nn.Module()
    weight = torch.randn(3)
    root.register_buffer("a", weight)
    root.register_buffer("b", weight)
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    total = graph.call_function(torch.ops.aten.add.Tensor, (x, graph.get_attr("a")))
    total = graph.call_function(torch.ops.aten.add.Tensor, (total, graph.get_attr("b")))
    graph.output(total)
    gm = torch.fx.GraphModule(root, graph)
    assert freeze_constants(gm) == []
    text = import_graph(gm, [torch.randn(3)])
    assert text.count("fx.constant dense_resource<a>") == 2
    assert text.count(': "0x') == 1



def test_floor_chains_of_window_counts():
    """Dynamic sizes that strided windows count are chains of affine steps
    and floor divisions in one canonical form, so that equal sizes compare
    equal (a residual block's strided 3x3 and 1x1 branches)."""
    from kiln.importer import _FloorChain

    s = _FloorChain("s0")
    three_by_three = s.then(("affine", 1, 2 - 2 - 1), ("floordiv", 2), ("affine", 1, 1))
    one_by_one = s.then(("affine", 1, -1), ("floordiv", 2), ("affine", 1, 1))
    assert three_by_three == one_by_one == s.then(("affine", 1, 1), ("floordiv", 2))
    # ⌊(⌊(s + 1) / 2⌋ - 1) / 2⌋ is ⌊(s - 1) / 4⌋; a multiple of the divisor
    # divides out; a doubling after a division stays.
    twice = three_by_three.then(("affine", 1, -1), ("floordiv", 2))
    assert twice == s.then(("affine", 1, -1), ("floordiv", 4))
    assert s.then(("affine", 4, 6), ("floordiv", 2)) == s.then(("affine", 2, 3))
    # ⌊(2s + 1) / 4⌋ is ⌊s / 2⌋: a gcd of the scale and the divisor reduces.
    assert s.then(("affine", 2, 1), ("floordiv", 4)) == s.then(("floordiv", 2))
    doubled = three_by_three.then(("affine", 2, 0))
    assert doubled.steps[-1] == ("affine", 2, 0) and doubled != s.then(("affine", 1, 1))
    for value in range(2, 40):
        assert twice.evaluate(value) == ((value + 1) // 2 - 1) // 2
        assert doubled.evaluate(value) == 2 * ((value + 1) // 2)
    # As size_symbols writes them (fx::parseSizeExpression reads them).
    assert twice.text() == "(s0-1)//4" and doubled.text() == "2*((s0+1)//2)"
    assert s.then(("affine", 3, -1)).text() == "3*s0-1"
    # The least symbol value whose size is at least 2.
    assert twice.least(2) == 9 and twice.evaluate(8) == 1
    assert s.least(2) == 2 and s.then(("affine", 1, 40), ("floordiv", 64)).least(2) == 88
