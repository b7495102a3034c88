#!/usr/bin/env python3
"""Sums JUnit/xUnit XML reports into one line: `kiln tests: N passed, N failed`.

Exits non-zero when any test failed or errored, or when a report is missing.
"""

import sys
import xml.etree.ElementTree as ET


def count(path):
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.iter("testsuite")
    tests = failed = skipped = 0
    for suite in suites:
        tests += int(suite.get("tests", 0))
        failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skipped += int(suite.get("skipped", 0))
    return tests, failed, skipped


def main(paths):
    tests = failed = skipped = 0
    for path in paths:
        try:
            t, f, s = count(path)
        except (OSError, ET.ParseError) as err:
            print(f"summarize-tests: cannot read {path}: {err}", file=sys.stderr)
            failed += 1
            continue
        tests, failed, skipped = tests + t, failed + f, skipped + s
    passed = tests - failed - skipped
    suffix = f", {skipped} skipped" if skipped else ""
    print(f"kiln tests: {passed} passed, {failed} failed{suffix}")
    return 1 if failed or not paths else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
