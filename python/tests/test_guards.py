"""Tests for the shape guards: printing, parsing, checking, and the guards
the importer emits (verified by kiln-opt and read back by the runtime)."""

import pytest

import kiln
from kiln.guards import GraphGuards, GuardError, SizeSymbol, TensorGuard

torch = pytest.importorskip("torch")

SHARED = GraphGuards(
    (SizeSymbol("s0"), SizeSymbol("s1", min=4, max=64, divisor=4)),
    (TensorGuard(("s0", 8), align=16, device="cpu"),
     TensorGuard(("s0", "s1"), strides=(None, 1), device="cpu"),
     None),
)

SHARED_TEXT = """
fx.graph @g(
    %x: tensor<?x8xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, 8], align = 16, device = "cpu">},
    %y: tensor<?x?xf32> {fx.guard = #fx.tensor_guard<sizes = [s0, s1], strides = [?, 1], device = "cpu">},
    %z: tensor<3xsi64>) -> tensor<?x8xf32>
    attributes {symbols = [#fx.symbol<"s0", min = 2>, #fx.symbol<"s1", min = 4, max = 64, divisor = 4>]} {
  fx.output %x : tensor<?x8xf32>
}
"""


def test_printing():
    assert SHARED.symbols[1].to_mlir() == '#fx.symbol<"s1", min = 4, max = 64, divisor = 4>'
    assert SHARED.arguments[1].to_mlir() == (
        '#fx.tensor_guard<sizes = [s0, s1], strides = [?, 1], device = "cpu">')
    assert TensorGuard(()).to_mlir() == "#fx.tensor_guard<sizes = []>"


def test_parse_reads_what_kiln_opt_verifies_and_prints():
    assert GraphGuards.parse(SHARED_TEXT, "g") == SHARED
    # kiln-opt's generic printing of the same graph reads back the same.
    assert GraphGuards.parse(kiln.run_opt(SHARED_TEXT), "g") == SHARED


def test_parse_a_graph_without_guards():
    text = ("fx.graph @forward(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  fx.output %x : tensor<4xf32>\n}")
    assert GraphGuards.parse(text) == GraphGuards((), (None,))
    with pytest.raises(ValueError, match="no fx.graph @other"):
        GraphGuards.parse(text, "other")


def test_check_binds_symbols():
    x, y, z = torch.zeros(5, 8), torch.zeros(5, 12), torch.zeros(3, dtype=torch.int64)
    assert SHARED.check([x, y, z]) == {"s0": 5, "s1": 12}


@pytest.mark.parametrize("shapes, message", [
    ([(5, 8), (6, 12)], r"input 1: size 6 at dimension 0 differs from size 5 of input 0 "
                        r"at dimension 0; both are size symbol 's0'"),
    ([(1, 8), (1, 12)], r"input 0: size 1 at dynamic dimension 0 is outside the guarded "
                        r"range 2 <= s0 \(sizes 0 and 1 are specialised"),
    ([(5, 8), (5, 13)], r"range 4 <= s1 <= 64, a multiple of 4"),
    ([(5, 8), (5, 68)], r"size 68 at dynamic dimension 1"),
    ([(5, 9), (5, 12)], r"input 0: size 9 at dimension 1"),
    ([(5, 8, 1), (5, 12)], r"input 0: rank is 3"),
])
def test_check_refuses(shapes, message):
    tensors = [torch.zeros(s) for s in shapes] + [torch.zeros(3)]
    with pytest.raises(GuardError, match=message):
        SHARED.check(tensors)


RELATED = GraphGuards(
    (SizeSymbol("s0"), SizeSymbol("e0", min=5, of="s0", scale=2, offset=1)),
    (TensorGuard(("e0",)), TensorGuard(("s0",))),
)


def test_derived_symbols_print_parse_and_check():
    text = RELATED.symbols[1].to_mlir()
    assert text == '#fx.symbol<"e0", min = 5, of = "s0", scale = 2, offset = 1>'
    graph = (f"fx.graph @g(%x: tensor<?xf32> {{fx.guard = {RELATED.arguments[0].to_mlir()}}}, "
             f"%y: tensor<?xf32> {{fx.guard = {RELATED.arguments[1].to_mlir()}}}) "
             f"attributes {{{RELATED.symbols_attribute()}}} {{\n  fx.output\n}}")
    assert GraphGuards.parse(kiln.run_opt(graph), "g") == RELATED
    assert RELATED.check([torch.zeros(7), torch.zeros(3)]) == {"e0": 7, "s0": 3}
    with pytest.raises(GuardError, match=r"input 0: size 9 at dimension 0 is size symbol 'e0' "
                                         r"= 2\*s0 \+ 1, which is 7 for s0 = 3"):
        RELATED.check([torch.zeros(9), torch.zeros(3)])
    with pytest.raises(ValueError, match="derives from no symbol"):
        SizeSymbol("e1", scale=2)


def test_check_strides_and_layout():
    y = torch.zeros(12, 5).t()  # Strides (1, 5): the guarded inner stride is not 1.
    with pytest.raises(GuardError, match="input 1: stride 5 at dimension 1, expected 1"):
        SHARED.check([torch.zeros(5, 8), y, torch.zeros(3)])
    misaligned = torch.zeros(41)[1:].view(5, 8)
    with pytest.raises(GuardError, match="input 0: data is not 16-byte aligned"):
        SHARED.check_layout([misaligned, torch.zeros(5, 12), torch.zeros(3)])
    with pytest.raises(GuardError, match="input 0: the graph was compiled for a contiguous"):
        SHARED.check_layout([torch.zeros(8, 5).t(), torch.zeros(5, 12), torch.zeros(3)])


def test_check_devices():
    guards = GraphGuards((), (TensorGuard((2,), device="cuda:1"),))
    with pytest.raises(GuardError, match="tensor is on cpu, the graph runs on cuda:1"):
        guards.check([torch.zeros(2)])
    current = GraphGuards((), (TensorGuard((2,), device="cuda"),))
    with pytest.raises(GuardError, match="the graph runs on cuda:0"):
        current.check([torch.zeros(2)], current_cuda=0)


def test_invalid_guards_are_refused():
    with pytest.raises(ValueError, match="min 1; sizes 0 and 1 are specialised"):
        SizeSymbol("s0", min=1)
    with pytest.raises(ValueError, match="not a power of two"):
        TensorGuard((2,), align=12)
    with pytest.raises(ValueError, match="undefined size symbols: \\['s1'\\]"):
        GraphGuards((SizeSymbol("s0"),), (TensorGuard(("s0", "s1")),))
    with pytest.raises(ValueError, match="that no guard names: \\['s2'\\]"):
        GraphGuards((SizeSymbol("s2"),), (TensorGuard((3,)),))


# ===--- Guards from the importer ---------------------------------------------=== #


def test_importer_guards_every_input():
    def f(x, i):
        return x * 2, i + 1

    inputs = (torch.randn(4, 8)[:, :6], torch.arange(3))  # A non-contiguous view.
    text = kiln.import_graph(kiln.capture(f, inputs), inputs)
    kiln.run_opt(text)
    assert GraphGuards.parse(text) == GraphGuards((), (
        TensorGuard((4, 6), align=16, device="cpu"),
        TensorGuard((3,), align=16, device="cpu"),
    ))
    assert ('%x_1: tensor<4x6xf32> {fx.guard = #fx.tensor_guard<sizes = [4, 6], align = 16, '
            'device = "cpu">}') in text


def test_importer_guards_a_zero_dim_input():
    inputs = (torch.tensor(2.0),)
    text = kiln.import_graph(kiln.capture(torch.neg, inputs), inputs)
    kiln.run_opt(text)
    assert "tensor<f32> {fx.guard = #fx.tensor_guard<sizes = [], align = 16" in text


def test_importer_without_guards():
    inputs = (torch.randn(3),)
    text = kiln.import_graph(kiln.capture(torch.neg, inputs), inputs, guards=False)
    assert "fx.guard" not in text
    assert GraphGuards.parse(text) == GraphGuards((), (None,))
