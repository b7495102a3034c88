#!/usr/bin/env python3
"""Runs a pytest suite as several pytest processes at once, for machines
with many cores and a limit on how long one command runs (the GPU check).

    utils/pytest-shards.py [--shards N] [pytest options...] TESTS...

Collects the test ids once (relative to the working directory), deals them round-robin to N shards (so that
each test file's slow cases spread out), runs each shard in its own process
with its own --basetemp (pytest prunes other runs' temporary directories),
and prints each shard's failures, then one line:
    pytest shards: N passed, N failed, N skipped
Exits non-zero if any shard fails or collects nothing. pytest options are
single tokens (``--tb=line``, ``-x``); collection applies them all, the
shards those that start with a dash.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

TEST_ID_RE = re.compile(r"\S+\.py::\S")
SUMMARY_RE = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)")


def collect(pytest_args):
    """The test ids that pytest collects from `pytest_args`."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:cacheprovider", f"--rootdir={os.getcwd()}",
                           *pytest_args],
                          capture_output=True, text=True)
    ids = [line for line in done.stdout.splitlines() if TEST_ID_RE.match(line)]
    if done.returncode != 0 or not ids:
        sys.stdout.write(done.stdout + done.stderr)
        sys.exit("pytest-shards: collection failed")
    return ids


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shards", type=int, default=min(8, os.cpu_count() or 1))
    parser.add_argument("--log-dir", help="where each shard's log goes (default: a new "
                        "temporary directory)")
    options, pytest_args = parser.parse_known_args()
    ids = collect(pytest_args)
    flags = [a for a in pytest_args if a.startswith("-")]
    shards = [ids[k::options.shards] for k in range(options.shards) if ids[k::options.shards]]
    root = tempfile.mkdtemp(prefix="kiln-pytest-shards.")
    logs = options.log_dir or root
    os.makedirs(logs, exist_ok=True)
    # Summary lines whole, not cut to a terminal's width.
    environment = {**os.environ, "COLUMNS": "400"}
    running = []
    for k, shard in enumerate(shards):
        log = open(os.path.join(logs, f"shard{k}.log"), "w+")
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   "-rfE", f"--rootdir={os.getcwd()}",
                   f"--basetemp={os.path.join(root, f'tmp{k}')}", *flags, *shard]
        running.append((k, subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                            env=environment), log))
    totals = {}
    status = 0
    for k, process, log in running:
        status |= process.wait() != 0
        log.seek(0)
        lines = log.read().splitlines()
        for line in lines:
            if line.startswith(("FAILED", "ERROR")):
                print(line)
        last = lines[-1] if lines else ""
        for count, kind in SUMMARY_RE.findall(last):
            kind = "errors" if kind.startswith("error") else kind
            totals[kind] = totals.get(kind, 0) + int(count)
        print(f"shard {k}: {last.strip('= ')}", file=sys.stderr)
    summary = ", ".join(f"{totals.get(kind, 0)} {kind}"
                        for kind in ("passed", "failed", "skipped"))
    errors = totals.get("errors", 0)
    print(f"shard logs: {logs}", file=sys.stderr)
    print(f"pytest shards: {summary}" + (f", {errors} errors" if errors else ""))
    return 1 if status or totals.get("failed") or errors else 0


if __name__ == "__main__":
    sys.exit(main())
