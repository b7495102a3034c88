"""Tests for driving kiln-opt from Python."""

import os
import re
from pathlib import Path

import pytest
import torch

import kiln
from kiln.diagnostics import parse_diagnostics

RESIDUAL = """
fx.graph @forward(%x: tensor<?x64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %0 = fx.add %x, %b : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %1 = fx.relu %0 : tensor<?x64xf32>
  fx.output %1 : tensor<?x64xf32>
}
"""


def test_find_tool_locates_kiln_opt():
    path = kiln.find_tool("kiln-opt")
    assert path.name == "kiln-opt"
    assert path.is_file()


def test_find_tool_reports_where_it_looked(tmp_path):
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        kiln.find_tool("kiln-opt", tool_dir=tmp_path)


def test_kiln_tools_dir_overrides_where_tools_are_found(tmp_path, monkeypatch):
    """KILN_TOOLS_DIR names the only folder searched (an installed Python
    package with tools elsewhere, or a second build)."""
    real = kiln.find_tool("kiln-opt")
    (tmp_path / "kiln-opt").symlink_to(real)
    monkeypatch.setenv("KILN_TOOLS_DIR", str(tmp_path))
    assert kiln.find_tool("kiln-opt") == tmp_path / "kiln-opt"
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        kiln.find_tool("kiln-compile")


def test_round_trip_prints_the_graph():
    out = kiln.run_opt(RESIDUAL)
    assert "fx.graph @forward" in out
    assert "fx.relu" in out


def test_lower_to_loop_fuses_into_one_node():
    out = kiln.run_opt(RESIDUAL, ["--kiln-lower-to-loop"])
    assert out.count("loop.pointwise") == 1
    assert "fx.add" not in out and "fx.relu" not in out
    assert "arith.maximumf" in out


def test_pipeline_option_disables_inlining():
    out = kiln.run_opt(RESIDUAL, ["--kiln-lower-to-loop=inline=false"])
    assert out.count("loop.pointwise") == 2


def test_misspelt_pipeline_options_fail_before_capture():
    """kiln.compile checks the target pipeline's options before it captures
    the function (which here would raise), naming the closest option; GPU
    options are not the CPU's."""
    def never_captured(x):
        raise AssertionError("captured before the options were checked")

    with pytest.raises(ValueError, match=r"kiln-cpu-pipeline options 'chanels-last=true'.*"
                                         r"did you mean 'channels-last'\?"):
        kiln.compile(never_captured, [torch.randn(3)], options={"chanels-last": True})
    with pytest.raises(ValueError, match="no such option block-size.*kiln-cpu-pipeline takes"):
        kiln.compile(never_captured, [torch.randn(3)], options={"block-size": 128})


def test_kiln_compile_takes_the_backends_options():
    """kiln.compile takes the backend's option dict: pipeline options at the
    top level or under pipeline_options, and cache_dir; options of the
    backend alone are errors, before any capture."""
    def never_captured(x):
        raise AssertionError("captured before the options were checked")

    x = torch.randn(3)
    with pytest.raises(ValueError, match=r"\['cuda_graphs', 'fallback'\] apply to "
                                         "torch.compile's backend"):
        kiln.compile(never_captured, [x], options={"cuda_graphs": True, "fallback": "error"})
    with pytest.raises(ValueError, match="is 'cache_dirs' the Kiln option 'cache_dir'"):
        kiln.compile(never_captured, [x], options={"cache_dirs": "/tmp"})
    with pytest.raises(ValueError, match="cache_dir given twice"):
        kiln.compile(never_captured, [x], cache_dir="/tmp/a", options={"cache_dir": "/tmp/b"})

    def scale(x):
        return torch.relu(x) * 2

    for options in ({"openmp": False}, {"pipeline_options": {"openmp": False}}):
        compiled = kiln.compile(scale, [x], options=options)
        assert torch.equal(compiled(x), scale(x))


def test_pass_options_are_the_compilers():
    """The backend reads pass options (the direct-convolution depth) from
    kiln-compile's pipeline, defaults and given values alike."""
    from kiln.compiler import pipeline_pass_options
    cuda = pipeline_pass_options("cuda", None, "kiln-fx-to-loop")
    assert cuda["direct-convolution-depth"] == "64" and cuda["device-asserts"] == "true"
    given = pipeline_pass_options("cuda", {"direct-convolution-depth": 9,
                                           "device-asserts": False}, "kiln-fx-to-loop")
    assert given["direct-convolution-depth"] == "9" and given["device-asserts"] == "false"
    assert pipeline_pass_options("cpu", None, "kiln-fx-to-loop")["runtime-checks"] == "true"
    with pytest.raises(ValueError, match="no kiln-no-such-pass"):
        pipeline_pass_options("cpu", None, "kiln-no-such-pass")
    with pytest.raises(ValueError, match="direct-depth"):
        pipeline_pass_options("cpu", {"direct-depth": 3}, "kiln-fx-to-loop")


def test_kiln_run_runs_an_artifact_on_npy_inputs(tmp_path):
    """kiln-run: an artifact's graph on .npy inputs, a dynamic batch, the
    results saved as .npy (against eager) or summarized, the time per run,
    and clear errors for inputs the graph does not take."""
    import subprocess
    import numpy as np
    from kiln.tools import find_tool

    graph = tmp_path / "graph.mlir"
    graph.write_text("""
fx.graph @g(%x: tensor<?x4xf32>, %i: tensor<?xsi64>) -> (tensor<?x4xf32>, tensor<si64>) {
  %0 = fx.relu %x : tensor<?x4xf32>
  %1 = fx.sum %i {dims = array<i64: 0>, keepdim = false} : (tensor<?xsi64>) -> tensor<si64>
  fx.output %0, %1 : tensor<?x4xf32>, tensor<si64>
}
""")
    artifact = tmp_path / "graph.so"
    subprocess.run([str(find_tool("kiln-compile")), str(graph), "-o", str(artifact)],
                   check=True)
    x = torch.randn(5, 4)
    i = torch.randint(-9, 9, (7,))
    np.save(tmp_path / "x.npy", x.numpy())
    np.save(tmp_path / "i.npy", i.numpy())
    run = [str(find_tool("kiln-run")), str(artifact), str(tmp_path / "x.npy"),
           str(tmp_path / "i.npy")]
    out = tmp_path / "out"
    out.mkdir()
    result = subprocess.run(run + ["--output-dir", str(out), "--repeat", "3"],
                            capture_output=True, text=True, check=True)
    assert re.match(r"3 runs: [0-9.]+ ms per run", result.stdout)
    torch.testing.assert_close(torch.from_numpy(np.load(out / "result0.npy")), torch.relu(x))
    assert np.load(out / "result1.npy").shape == () and \
        int(np.load(out / "result1.npy")) == int(i.sum())
    summary = subprocess.run(run, capture_output=True, text=True, check=True).stdout
    assert summary.splitlines()[0].startswith("result 0: [5, 4] f32 [")
    assert summary.splitlines()[1] == f"result 1: [] si64 [{int(i.sum())}]"

    np.save(tmp_path / "wrong.npy", x.double().numpy())
    wrong = subprocess.run(run[:2] + [str(tmp_path / "wrong.npy"), run[3]],
                           capture_output=True, text=True)
    assert wrong.returncode == 1
    assert "input 0" in wrong.stderr and "is [5, 4] f64; the graph takes [?, 4] f32" in wrong.stderr
    missing = subprocess.run(run[:3], capture_output=True, text=True)
    assert missing.returncode == 1 and "takes 2 inputs" in missing.stderr
    (tmp_path / "junk.npy").write_bytes(b"not numpy")
    junk = subprocess.run(run[:2] + [str(tmp_path / "junk.npy"), run[3]],
                          capture_output=True, text=True)
    assert junk.returncode == 1 and "is not a .npy file" in junk.stderr


def test_kiln_log_prints_the_logger_at_its_level(tmp_path):
    """KILN_LOG=debug prints Kiln's records with one prefix, a compile's too;
    an unknown level is said once and ignored."""
    import subprocess
    import sys

    script = ("import torch, kiln; "
              f"kiln.compile(lambda x: x.exp(), [torch.randn(3)], cache_dir={str(tmp_path)!r})")
    env = dict(os.environ, KILN_LOG="debug",
               PYTHONPATH=os.pathsep.join(filter(None, [str(Path(kiln.__file__).parents[1]),
                                                        os.environ.get("PYTHONPATH")])))
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True)
    assert re.search(r"^kiln: artifact \w+: kiln-compile --target=cpu took", run.stderr,
                     re.MULTILINE), run.stderr
    env["KILN_LOG"] = "loud"
    run = subprocess.run([sys.executable, "-c", "import kiln.logs"], env=env,
                         capture_output=True, text=True, check=True)
    assert run.stderr == "kiln: KILN_LOG='loud' is not a level (debug, info, warning, error); " \
        "ignored\n"


def test_invalid_graph_raises_with_location():
    bad = RESIDUAL.replace("tensor<64xf32>", "tensor<63xf32>")
    with pytest.raises(kiln.KilnError) as info:
        kiln.run_opt(bad, filename="graph.mlir")
    errors = [d for d in info.value.diagnostics if d.severity == "error"]
    assert len(errors) == 1
    assert errors[0].file.endswith("graph.mlir")
    assert errors[0].line == 3
    assert "not broadcastable" in errors[0].message


def test_syntax_error_raises_with_location():
    with pytest.raises(kiln.KilnError) as info:
        kiln.run_opt("fx.graph @g(%x: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = fx.relu %x\n}\n")
    first = info.value.diagnostics[0]
    assert first.severity == "error"
    assert first.line == 2


def test_unknown_pass_raises():
    with pytest.raises(kiln.KilnError, match="kiln-no-such-pass"):
        kiln.run_opt(RESIDUAL, ["--kiln-no-such-pass"])


def test_parse_diagnostics_without_location():
    diags = parse_diagnostics(
        "x.mlir:0:0: error: attempting to parse 17 bytes\n"
        "error: something global\nnot a diagnostic\n"
    )
    assert [d.severity for d in diags] == ["error", "error"]
    assert diags[1].file is None and diags[1].message == "something global"


def test_log_lines_carry_one_prefix():
    """Unconfigured, Kiln's warnings print as "kiln: ..."; configured, the
    configuration's format names the logger once ("WARNING:kiln:...")."""
    import subprocess
    import sys
    from pathlib import Path

    program = "\n".join([
        "import logging",
        "from kiln.logs import log",
        "log.warning('before %d', 1)",
        "logging.basicConfig(format='%(levelname)s:%(name)s:%(message)s')",
        "log.warning('after %d', 2)",
    ])
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parents[1], check=True)
    assert result.stderr.splitlines() == ["kiln: before 1", "WARNING:kiln:after 2"]


def test_the_debug_folder_keeps_what_reproduces_a_compile(tmp_path, monkeypatch):
    """KILN_DEBUG_DIR: per compile, the fx source, the graphs after fusion,
    the command that compiles them as Kiln did, and what the compile printed;
    the command runs by itself and builds the same artifact."""
    import subprocess

    torch = pytest.importorskip("torch")
    debug = tmp_path / "debug"
    monkeypatch.setenv("KILN_DEBUG_DIR", str(debug))
    x, y = torch.randn(4, 8), torch.randn(4, 8)
    compiled = kiln.compile(lambda a, b: torch.relu(a * b) + 1, [x, y],
                            cache_dir=tmp_path / "cache")
    torch.testing.assert_close(compiled(x, y), torch.relu(x * y) + 1)
    [folder] = list(debug.iterdir())
    assert sorted(p.name for p in folder.iterdir()) == [
        "command.sh", "compile.log", "fusion-report.txt", "graph.mlir", "loop.mlir"]
    assert "1 kernel" in (folder / "fusion-report.txt").read_text()
    assert "fx.graph" in (folder / "graph.mlir").read_text()
    loop = (folder / "loop.mlir").read_text()
    assert "loop.pointwise" in loop and "fx.mul" not in loop
    assert (folder / "compile.log").read_text().startswith("exit status 0")
    subprocess.run([str(folder / "command.sh")], check=True, capture_output=True)
    assert (folder / "graph.so").stat().st_size > 0
    # A second compile of the same graph is served from the cache, and says so.
    kiln.compile(lambda a, b: torch.relu(a * b) + 1, [x, y], cache_dir=tmp_path / "cache")
    assert (folder / "compile.log").read_text().startswith("served from the cache")


def test_diagnostics_name_files_that_exist(tmp_path, monkeypatch):
    """A failed compile's diagnostics point into the debug folder's copy of
    the graph, which stays; without a debug folder they name no file (the
    compile's own folder is gone) and the error says how to keep one."""
    from kiln.compiler import compile_graph_text

    bad = (
        "fx.graph @forward(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = fx.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<5xf32>\n"
        "  fx.output %0 : tensor<5xf32>\n"
        "}\n")
    with pytest.raises(kiln.KilnError, match="KILN_DEBUG_DIR=<dir> keeps the graph") as info:
        compile_graph_text(bad, cache_dir=tmp_path / "cache")
    [error] = [d for d in info.value.diagnostics if d.severity == "error"]
    assert error.file == "<kiln graph>" and error.line == 2

    debug = tmp_path / "debug"
    monkeypatch.setenv("KILN_DEBUG_DIR", str(debug))
    with pytest.raises(kiln.KilnError) as info:
        compile_graph_text(bad, cache_dir=tmp_path / "cache")
    [error] = [d for d in info.value.diagnostics if d.severity == "error"]
    assert Path(error.file).parent.parent == debug and error.line == 2
    assert Path(error.file).read_text() == bad
    assert "keeps the graph" not in str(info.value)


def test_extra_args_reach_kiln_compile_and_the_cache_key(tmp_path, monkeypatch):
    """kiln.compile(extra_args=...) passes flags to kiln-compile: a bad one is
    kiln-compile's error; a good one compiles another artifact (its own cache
    entry) that computes the same."""
    torch = pytest.importorskip("torch")
    debug = tmp_path / "debug"
    monkeypatch.setenv("KILN_DEBUG_DIR", str(debug))
    x = torch.randn(16)
    fn = lambda a: torch.tanh(a) * 2  # noqa: E731
    with pytest.raises(kiln.KilnError, match="no-such-flag"):
        kiln.compile(fn, [x], cache_dir=tmp_path, extra_args=["--no-such-flag"])
    plain = kiln.compile(fn, [x], cache_dir=tmp_path)
    unoptimized = kiln.compile(fn, [x], cache_dir=tmp_path, extra_args=["-O0"])
    torch.testing.assert_close(unoptimized(x), plain(x))
    commands = [p.read_text() for p in debug.glob("*/command.sh")]
    assert len(commands) == 3 and sum("-O0" in c for c in commands) == 1


def test_cuda_code_is_for_the_device_at_hand(tmp_path, monkeypatch):
    """The CUDA pipeline's chip comes from the device's compute capability
    (sm_90a on Hopper, the PTX version each chip needs), from
    KILN_CUDA_CHIP, or from the options; devices newer than Kiln knows get
    portable sm_90 PTX, devices older than ptxas assembles for an error. The
    chip reaches kiln-compile's command and the cache key."""
    from kiln import chips

    assert chips.chip_for_capability((9, 0)) == "sm_90a"
    assert chips.chip_for_capability((8, 0)) == "sm_80"
    assert chips.chip_for_capability((8, 9)) == "sm_89"
    assert chips.chip_for_capability((12, 0)) == "sm_120"
    assert chips.chip_for_capability((15, 0)) == "sm_90"
    with pytest.raises(ValueError, match="compute capability 7.5 and newer, not 7.0"):
        chips.chip_for_capability((7, 0))
    assert chips.ptx_features("sm_80") == "+ptx80"
    assert chips.ptx_features("sm_100a") == "+ptx86"
    assert chips.ptx_features("sm_120") == "+ptx87"
    with pytest.raises(ValueError, match="'gfx942' is not an NVIDIA chip"):
        chips.ptx_features("gfx942")

    monkeypatch.setenv("KILN_CUDA_CHIP", "sm_80")
    assert chips.with_device_chip(None) == {"chip": "sm_80", "features": "+ptx80"}
    assert chips.with_device_chip({"chip": "sm_100a"}) == {"chip": "sm_100a",
                                                            "features": "+ptx86"}
    given = {"chip": "sm_90a", "features": "+ptx85", "block-size": 128}
    assert chips.with_device_chip(given) == given

    from kiln.compiler import compile_graph_text
    if not any(Path(root, "bin", "ptxas").exists() for root in (
            os.environ.get("CUDA_ROOT") or "/usr/local/cuda", "/usr/local/cuda")):
        pytest.skip("no CUDA toolkit to assemble kernels")
    debug = tmp_path / "debug"
    monkeypatch.setenv("KILN_DEBUG_DIR", str(debug))
    text = ("fx.graph @forward(%x: tensor<64xf32>) -> tensor<64xf32> {\n"
            "  %0 = fx.relu %x : tensor<64xf32>\n"
            "  fx.output %0 : tensor<64xf32>\n"
            "}\n")
    sm80 = compile_graph_text(text, target="cuda", cache_dir=tmp_path / "cache")
    monkeypatch.setenv("KILN_CUDA_CHIP", "sm_90a")
    sm90 = compile_graph_text(text, target="cuda", cache_dir=tmp_path / "cache")
    assert sm80.read_bytes() != sm90.read_bytes()
    commands = sorted(p.read_text() for p in debug.glob("*/command.sh"))
    assert len(commands) == 2
    assert "chip=sm_80 features=+ptx80" in commands[0]
    assert "chip=sm_90a features=+ptx80" in commands[1]


def test_cuda_products_multiply_in_tf32_where_pytorch_does(tmp_path, monkeypatch):
    """f32 products on the GPU follow PyTorch's allow_tf32 (and float32
    matmul precision) at compile time: kiln-compile then gets
    tf32-products, which reaches the command and the cache key; options
    that name it win."""
    from kiln.compiler import _with_torch_tf32, compile_graph_text, torch_allows_tf32

    matmul = torch.backends.cuda.matmul
    monkeypatch.setattr(matmul, "allow_tf32", False)
    monkeypatch.setattr(torch, "get_float32_matmul_precision", lambda: "highest")
    assert not torch_allows_tf32()
    assert _with_torch_tf32({"chip": "sm_90a"}) == {"chip": "sm_90a"}
    monkeypatch.setattr(torch, "get_float32_matmul_precision", lambda: "high")
    assert torch_allows_tf32()
    assert _with_torch_tf32({}) == {"tf32-products": True}
    assert _with_torch_tf32({"tf32-products": False}) == {"tf32-products": False}

    if not any(Path(root, "bin", "ptxas").exists() for root in (
            os.environ.get("CUDA_ROOT") or "/usr/local/cuda", "/usr/local/cuda")):
        pytest.skip("no CUDA toolkit to assemble kernels")
    monkeypatch.setenv("KILN_CUDA_CHIP", "sm_90a")
    debug = tmp_path / "debug"
    monkeypatch.setenv("KILN_DEBUG_DIR", str(debug))
    text = ("fx.graph @forward(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>)"
            " -> tensor<64x16xf32> {\n"
            "  %0 = fx.mm %a, %b : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>\n"
            "  fx.output %0 : tensor<64x16xf32>\n"
            "}\n")
    tf32 = compile_graph_text(text, target="cuda", cache_dir=tmp_path / "cache")
    exact = compile_graph_text(text, target="cuda", cache_dir=tmp_path / "cache",
                               options={"tf32-products": False})
    assert tf32 != exact
    commands = [p.read_text() for p in debug.glob("*/command.sh")]
    assert sum("tf32-products" in command for command in commands) == 2
    assert any("tf32-products=false" in command for command in commands)
