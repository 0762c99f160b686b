#!/usr/bin/env python3
"""Conformance driver: compiles every case of ONNX's backend test suites
with `kiln compile` (CPU), runs each of its data sets with `kiln run` and
compares the outputs with the expected ones under ONNX's tolerance rule
(rtol 1e-3, atol 1e-7).

Statuses: passed (every data set matches), failed (compile error, run
error, mismatch, crash or timeout), skipped (the import reports the model
as unsupported). Inputs that must be known at compile time are frozen to
the case's first data set, as in the import sweep.

The run fails on any case that passed in the expected list
(test/e2e/onnx_conformance_expected.txt) and does not pass now; --update
rewrites the list. Ends with the line `N passed, N failed, N skipped`.
"""
import argparse
import os
import sys
import time

from onnx_cases import (data_files, first_reason, freeze_args, list_cases, read_expected,
                        run, run_cases, write_expected)


def check(kiln, name, case_dir, work, timeout):
    model = os.path.join(case_dir, "model.onnx")
    artifact = os.path.join(work, name.replace("/", "__") + ".so")
    code, out, frozen_names, _ = freeze_args(kiln, "compile", model, case_dir,
                                             ["-o", artifact], timeout)
    if code != 0:
        if code == 1 and "cannot be imported" in out and "invalid (" not in out:
            return "skipped", first_reason(out)
        return "failed", "compile: " + first_reason(out)
    sets = sorted(d for d in os.listdir(case_dir) if d.startswith("test_data_set_"))
    for data_set in sets:
        args = [kiln, "run", artifact]
        for n, path in data_files(case_dir, "input_", data_set).items():
            if n not in frozen_names:
                args += ["--input", f"{n}={path}"]
        for n, path in data_files(case_dir, "output_", data_set).items():
            args += ["--expected", f"{n}={path}"]
        code, out = run(args, timeout)
        if code != 0:
            why = "mismatch" if "MISMATCH" in out else f"run exit {code}"
            return "failed", f"{data_set}: {why}: {first_reason(out)}"
    try:
        os.remove(artifact)
        os.remove(artifact[:-3] + ".h")
    except OSError:
        pass
    return "passed", ""


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--expected", required=True)
    ap.add_argument("--work", required=True, help="folder for the artifacts")
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    if not os.path.isdir(args.data):
        print(f"SKIPPED: ONNX test data not found at {args.data}")
        return 0
    os.makedirs(args.work, exist_ok=True)
    start = time.time()
    cases = list_cases(args.data)
    results = run_cases(cases, lambda name, folder: check(args.kiln, name, folder, args.work,
                                                         args.timeout), args.jobs)
    expected = read_expected(args.expected)
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    regressions, improvements = [], []
    for n, (status, reason) in sorted(results.items()):
        counts[status] += 1
        want = expected.get(n)
        if want == "passed" and status != "passed":
            regressions.append(f"{n}: {status}: {reason}")
        elif status == "passed" and want != "passed":
            improvements.append(n)
        if args.verbose and status != "passed":
            print(f"{n}: {status}: {reason}")
    if args.update:
        write_expected(args.expected, results,
                       "Expected conformance status of every ONNX backend test case.",
                       "make conformance-update")
    elif improvements:
        print(f"{len(improvements)} cases pass that the expected list does not record "
              "(make conformance-update)")
    for line in regressions:
        print("REGRESSION:", line)
    print(f"conformance run took {time.time() - start:.0f} s")
    print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    return 1 if regressions and not args.update else 0


if __name__ == "__main__":
    sys.exit(main())
