"""What the docs and the lit tests claim about the project holds: the
numbers the docs state (the fx dialect's Core ATen ops, the import suite's
cases) are the code's, every fx op has a lowering lit test, every backend
option is in the options table, every pass option is exercised by a RUN
line, and no CHECK-NOT sits where it checks next to nothing. A change that
breaks one fails here until the docs or the tests follow."""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def fx_aten_ops():
    text = (ROOT / "include/kiln/Dialect/FX/IR/FXAtenOps.td").read_text()
    return len(re.findall(r"^def FX_\w+Op\b", text, re.MULTILINE))


def suite_cases():
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import suite_models

    return len(suite_models.CASES)


def stated(path, pattern):
    """Every number that `pattern` (one group) finds in the doc at `path`."""
    text = (ROOT / path).read_text()
    found = [int(n) for n in re.findall(pattern, text)]
    assert found, f"{path} no longer states /{pattern}/: update this test"
    return found


def test_the_docs_count_the_fx_dialects_ops():
    ops = fx_aten_ops()
    assert ops > 200
    for path, pattern in [("README.md", r"(\d+) Core ATen ops"),
                          ("docs/Architecture.md", r"(\d+) Core ATen ops"),
                          ("docs/Architecture.md", r"Core ATen \((\d+) ops")]:
        for number in stated(path, pattern):
            assert number == ops, f"{path} says {number} Core ATen ops; FXAtenOps.td has {ops}"


def test_the_docs_count_the_import_suites_cases():
    pytest = __import__("pytest")
    pytest.importorskip("torch")
    cases = suite_cases()
    for number in stated("docs/Importer.md", r"suite_models\.py`: (\d+) cases"):
        assert number == cases, f"docs/Importer.md says {number} cases; the suite has {cases}"


def lit_tests():
    return sorted((ROOT / "test").rglob("*.mlir"))


def test_every_fx_op_has_a_lowering_test():
    defs = (ROOT / "include/kiln/Dialect/FX/IR/FXAtenOps.td").read_text()
    mnemonics = re.findall(r'^def FX_\w+Op\b[^<]*<\s*"([a-z0-9_]+)"', defs, re.MULTILINE)
    assert len(mnemonics) == fx_aten_ops()
    tests = "".join(p.read_text() for p in (ROOT / "test/Conversion/FXToLoop").glob("*.mlir"))
    untested = [m for m in mnemonics if not re.search(rf"fx\.{m}\b", tests)]
    assert not untested, f"fx ops without a test in test/Conversion/FXToLoop: {untested}"


def test_every_backend_option_is_documented():
    import dataclasses

    sys.path.insert(0, str(ROOT / "python"))
    from kiln.options import Options

    table = (ROOT / "docs/TorchCompile.md").read_text()
    documented = set(re.findall(r"^\| `(\w+)` \|", table, re.MULTILINE))
    fields = {f.name for f in dataclasses.fields(Options)}
    assert fields <= documented, \
        f"docs/TorchCompile.md's options table lacks {sorted(fields - documented)}"


def test_every_pass_option_has_a_run_line():
    runs = "\n".join(line for path in lit_tests() for line in path.read_text().splitlines()
                     if "RUN:" in line)
    missing = []
    for td in sorted((ROOT / "include/kiln").rglob("Passes.td")):
        text = td.read_text()
        for name, body in re.findall(r'def \w+ : (?:Interface)?Pass<"([\w-]+)".*?\n(.*?)\n}',
                                     text, re.DOTALL):
            for option in re.findall(r'Option<"\w+",\s*"([\w-]+)"', body):
                if not re.search(r"[{ ='\"]" + re.escape(option) + r"\b", runs):
                    missing.append(f"{name}: {option}")
    assert not missing, f"options no RUN line exercises: {missing}"


def test_check_nots_come_after_their_labels():
    """A CHECK-NOT before the first CHECK-LABEL of its prefix in a split
    checks only the text before that label's match (the module's first
    line, say), not the output it means: such checks belong to a prefix of
    their own, which has no labels, or after the label."""
    misplaced = []
    for path in lit_tests():
        chunks = path.read_text().split("\n// -----\n")
        for chunk in chunks:
            labelled = set(re.findall(r"//\s*([A-Z][A-Z0-9_-]*?)-LABEL:", chunk))
            seen = set()
            for line in chunk.splitlines():
                match = re.search(r"//\s*([A-Z][A-Z0-9_-]*?)-(LABEL|NOT):", line)
                if not match:
                    continue
                prefix, kind = match.groups()
                if kind == "LABEL":
                    seen.add(prefix)
                elif prefix in labelled and prefix not in seen:
                    misplaced.append(f"{path.relative_to(ROOT)}: {line.strip()}")
    assert not misplaced, "CHECK-NOTs before their prefix's first label:\n" + \
        "\n".join(misplaced)


def test_the_mutation_catalogue_is_current():
    """utils/mutation-check.py plants its bugs by replacing text that must be
    in the source exactly once: a change that moves it makes the mutation
    stale, which this reports."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mutation_check",
                                                  ROOT / "utils/mutation-check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert len(module.CATALOGUE) >= 20
    assert len({m.name for m in module.CATALOGUE}) == len(module.CATALOGUE)
    stale = [m.name for m in module.stale_mutations()]
    assert not stale, f"stale mutations (update utils/mutation-check.py): {stale}"
