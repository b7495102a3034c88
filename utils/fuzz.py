#!/usr/bin/env python3
"""Mutation fuzzing of Kiln's tools: damaged IR must give diagnostics, never a crash.

Takes the lit tests' inputs (each `// -----` case of test/**/*.mlir) and the
kept corpus (test/fuzz/corpus/*.mlir: inputs that once crashed, run first,
unmutated), damages them in ways a user or a buggy front end could (a line
dropped or repeated, a number, a type, a shape or an op name changed, two
values swapped, the text cut short), and runs kiln-opt's pipelines on each,
or kiln-compile down to an object file. A tool may accept the input or
reject it with a diagnostic; anything else
is a failure: a signal, an exit status other than 0 or 1, an LLVM fatal
error, a failed assertion, or a run past the time limit. Each failure is
written to the crash folder with the command that shows it.

    utils/fuzz.py [--seconds 60] [--seed 1] [--jobs 2] [--tools-dir build/bin]
                  [--crashes build/fuzz-crashes] [--xunit report.xml]

The same seed and the same inputs give the same mutations. CI runs it for a
minute; run it for longer (--seconds 1800) before a release.
"""

import argparse
import concurrent.futures
import hashlib
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parent.parent

# What each run does to the mutated input: a tool and its arguments. The GPU
# pipeline stops at PTX text: ptxas is not part of what is fuzzed.
PIPELINES = [
    ("kiln-opt", ["--kiln-lower-to-loop"]),
    ("kiln-opt", ["--kiln-cpu-pipeline"]),
    ("kiln-opt", ["--kiln-gpu-pipeline=format=isa"]),
    # Kiln's own tensor-core products, chosen against the library's.
    ("kiln-opt", ["--kiln-gpu-pipeline=matmul-kernels format=isa"]),
    # ... with TMA copies and their tensor-map parameters.
    ("kiln-opt", ["--kiln-gpu-pipeline=matmul-kernels warpgroup-tma format=isa"]),
    ("kiln-opt", ["--kiln-lower-to-loop", "--kiln-loop-to-scf-cpu"]),
    # Through LLVM IR to an object: the translation and code generation.
    ("kiln-compile", ["--emit=obj"]),
]

CRASH_MARKERS = ("crashed: this is a bug", "LLVM ERROR", "Assertion", "UNREACHABLE",
                 "Stack dump", "PLEASE submit")

TYPES = ["f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64", "si64", "ui8", "index",
         "complex<f32>", "f8E4M3FN"]
NUMBERS = ["0", "1", "-1", "2", "3", "7", "64", "65536", "2147483647", "-2147483648",
           "9223372036854775807", "-9223372036854775808", "4294967296", "1.0e+300",
           "0.0", "-0.0", "0x7FC00000"]
DIMS = ["0", "1", "?", "3", "1024", "9223372036854775807", "4611686018427387904"]


def split_cases(text):
    return [case for case in re.split(r"^// -----\s*$", text, flags=re.M) if case.strip()]


def load_seeds():
    """(name, text) of every lit case that holds IR, then the kept corpus."""
    seeds = []
    for path in sorted((ROOT / "test").rglob("*.mlir")):
        if "fuzz" in path.parts:
            continue
        for index, case in enumerate(split_cases(path.read_text(errors="replace"))):
            body = "\n".join(l for l in case.splitlines() if not l.lstrip().startswith("//"))
            if re.search(r"\b(fx\.graph|loop\.|func\.func)", body):
                seeds.append((f"{path.relative_to(ROOT)}#{index}", body))
    return seeds


def load_corpus(folder):
    return [(str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p), p.read_text())
            for p in sorted(folder.glob("*.mlir"))]


class Mutator:
    def __init__(self, rng, seeds):
        self.rng = rng
        names = set()
        for _, text in seeds:
            names.update(re.findall(r"\b((?:fx|loop|arith|math)\.[a-z_0-9]+)\b", text))
        self.op_names = sorted(names)

    def mutate(self, text):
        for _ in range(self.rng.choice([1, 1, 1, 2, 3])):
            mutation = self.rng.choice([
                self.drop_line, self.repeat_line, self.swap_lines, self.change_number,
                self.change_type, self.change_dim, self.change_op, self.swap_values,
                self.cut_short])
            text = mutation(text)
        return text

    def _lines(self, text):
        lines = text.splitlines()
        return lines, self.rng.randrange(len(lines)) if lines else None

    def drop_line(self, text):
        lines, i = self._lines(text)
        if i is not None:
            del lines[i]
        return "\n".join(lines)

    def repeat_line(self, text):
        lines, i = self._lines(text)
        if i is not None:
            lines.insert(i, lines[i])
        return "\n".join(lines)

    def swap_lines(self, text):
        lines, i = self._lines(text)
        if i is not None and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        return "\n".join(lines)

    def _replace_one(self, text, pattern, choices):
        matches = list(re.finditer(pattern, text))
        if not matches:
            return text
        m = self.rng.choice(matches)
        return text[:m.start()] + self.rng.choice(choices) + text[m.end():]

    def change_number(self, text):
        return self._replace_one(text, r"(?<![%\w#.])-?\d+(\.\d+)?(e[+-]?\d+)?\b", NUMBERS)

    def change_type(self, text):
        return self._replace_one(text, r"\b(bf16|f16|f32|f64|i1|i8|i32|i64|si64|index)\b", TYPES)

    def change_dim(self, text):
        return self._replace_one(text, r"(?<=[<x])(\d+|\?)(?=x)", DIMS)

    def change_op(self, text):
        if not self.op_names:
            return text
        return self._replace_one(text, r"\b(?:fx|loop|arith|math)\.[a-z_0-9]+\b",
                                 self.op_names)

    def swap_values(self, text):
        lines, i = self._lines(text)
        if i is None:
            return text
        names = re.findall(r"%[\w]+", lines[i])
        if len(names) >= 2:
            a, b = self.rng.sample(names, 2)
            lines[i] = lines[i].replace(a, "\0").replace(b, a).replace("\0", b)
        return "\n".join(lines)

    def cut_short(self, text):
        return text[:self.rng.randrange(len(text) + 1)]


def run_case(tools_dir, text, pipeline, timeout):
    """None when the tool accepted or diagnosed the input, else why it failed."""
    tool, args = pipeline
    try:
        done = subprocess.run([str(tools_dir / tool), "-", "-o", os.devnull, *args],
                              input=text, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"ran past {timeout} s", ""
    marker = next((m for m in CRASH_MARKERS if m in done.stderr), None)
    if done.returncode < 0:
        return f"killed by signal {-done.returncode}", done.stderr
    if done.returncode not in (0, 1):
        return f"exit status {done.returncode}", done.stderr
    if marker:
        return f"'{marker}' in its output", done.stderr
    if done.returncode == 1 and "error" not in done.stderr:
        return "exit status 1 without a diagnostic", done.stderr
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--tools-dir", type=Path, default=ROOT / "build" / "bin",
                        help="the folder of kiln-opt and kiln-compile")
    parser.add_argument("--corpus", type=Path, default=ROOT / "test" / "fuzz" / "corpus")
    parser.add_argument("--crashes", type=Path, default=ROOT / "build" / "fuzz-crashes")
    parser.add_argument("--timeout", type=float, default=60,
                        help="seconds one kiln-opt run may take")
    parser.add_argument("--xunit", type=Path, help="write a JUnit report here")
    parser.add_argument("--write-seeds", type=Path, metavar="DIR",
                        help="write the lit cases and the kept corpus to DIR, a "
                             "file each (kiln-fuzz's starting corpus), and exit")
    args = parser.parse_args()
    if args.write_seeds:
        args.write_seeds.mkdir(parents=True, exist_ok=True)
        cases = load_seeds() + load_corpus(args.corpus)
        for name, text in cases:
            digest = hashlib.sha1(text.encode()).hexdigest()[:16]
            (args.write_seeds / f"{digest}.mlir").write_text(text)
        print(f"{len(cases)} seeds in {args.write_seeds}")
        return 0
    for tool in {tool for tool, _ in PIPELINES}:
        if not (args.tools_dir / tool).exists():
            parser.error(f"no {args.tools_dir / tool}: build Kiln first")

    seeds = load_seeds()
    corpus = load_corpus(args.corpus)
    rng = random.Random(args.seed)
    mutator = Mutator(rng, seeds)
    failures = []
    runs = 0
    deadline = time.monotonic() + args.seconds

    def work():
        # The kept corpus first, as it is, then mutations until the deadline.
        for name, text in corpus:
            for pipeline in PIPELINES:
                yield name, text, pipeline
        while time.monotonic() < deadline:
            name, text = rng.choice(seeds)
            yield f"{name} (mutated)", mutator.mutate(text), rng.choice(PIPELINES)

    def check(item):
        name, text, pipeline = item
        return item, run_case(args.tools_dir, text, pipeline, args.timeout)

    def record(futures):
        nonlocal runs
        for future in futures:
            runs += 1
            (name, text, pipeline), failure = future.result()
            if failure:
                failures.append((name, text, pipeline, failure))

    # A few runs in flight at a time: the mutations are made as they are
    # needed, until the deadline.
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        pending = set()
        for item in work():
            pending.add(pool.submit(check, item))
            if len(pending) >= 2 * args.jobs:
                done, pending = concurrent.futures.wait(
                    pending, return_when=concurrent.futures.FIRST_COMPLETED)
                record(done)
        record(concurrent.futures.as_completed(pending))

    if failures:
        args.crashes.mkdir(parents=True, exist_ok=True)
    for name, text, pipeline, (reason, stderr) in failures:
        digest = hashlib.sha1(text.encode()).hexdigest()[:12]
        path = args.crashes / f"crash-{digest}.mlir"
        command = f"{pipeline[0]} {path.name} {' '.join(pipeline[1])}"
        path.write_text(f"// {command}\n// from {name}: {reason}\n" + text + "\n")
        print(f"fuzz: FAIL {command}: {reason} (from {name})")
        for line in stderr.strip().splitlines()[-5:]:
            print(f"fuzz:   {line}")
    print(f"fuzz: {runs} runs of Kiln's tools over {len(seeds)} lit cases and "
          f"{len(corpus)} kept inputs (seed {args.seed}), {len(failures)} failures"
          + (f", inputs in {args.crashes}" if failures else ""))
    if args.xunit:
        body = "".join(
            f'<testcase name="{escape(name)} {escape(" ".join([pipeline[0], *pipeline[1]]))}">'
            f'<failure message="{escape(reason)}"/></testcase>'
            for name, _, pipeline, (reason, _) in failures)
        if not failures:
            body = '<testcase name="fuzz"/>'
        args.xunit.write_text(f'<testsuite name="fuzz" tests="{max(len(failures), 1)}" '
                              f'failures="{len(failures)}">{body}</testsuite>\n')
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
