"""Imports every case of the suite (suite_models.py) and has kiln-opt verify it.

A case captures with kiln.capture (make_fx with the importer's
decompositions), lifts the parameters, buffers and constants it reads into
graph inputs, imports with guards, and passes when kiln-opt parses the text
and every op's verifier agrees with the types PyTorch computed. A case whose
op the dialect gets wrong is a strict xfail naming the op: it fails once the
dialect is fixed, so the mark is removed then.
"""

import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402
from kiln.guards import GraphGuards  # noqa: E402
from kiln.importer import lift_constants  # noqa: E402

from suite_models import CASES  # noqa: E402


def _params():
    for name, case in CASES.items():
        marks = [pytest.mark.xfail(reason=case.xfail, strict=True)] if case.xfail else []
        yield pytest.param(case, id=name, marks=marks)


def test_the_suite_is_large_enough():
    assert len(CASES) >= 40


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", _params())
def test_import_and_verify(case):
    fn, inputs = case.make()
    gm = kiln.capture(fn, inputs)
    constants = lift_constants(gm)
    text = kiln.import_graph(gm, [*inputs, *constants], name=case.name)
    printed = kiln.run_opt(text)
    assert f"fx.graph @{case.name}(" in printed
    # Every argument is guarded, and the guards read back from kiln-opt's
    # output are the importer's.
    guards = GraphGuards.parse(text, case.name)
    assert len(guards.arguments) == len(inputs) + len(constants)
    assert all(guards.arguments)
    assert GraphGuards.parse(printed, case.name) == guards
