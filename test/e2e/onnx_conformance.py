#!/usr/bin/env python3
"""Conformance driver: compiles every case of ONNX's backend test suites
with `kiln compile` (CPU), runs each of its data sets with `kiln run` and
compares the outputs with the expected ones under ONNX's tolerance rule
(rtol 1e-3, atol 1e-7).

Statuses: passed (every data set matches), failed (compile error, run
error, mismatch, crash or timeout), skipped (the import reports the model
as unsupported). The model is compiled as it is, every input given at
run time, as a user runs it: an input the importer needs at compile time
is a failure. --freeze (not the headline; the GPU-emulated suite uses it)
freezes such inputs to the case's first data set, as the import sweep
does.

--mode dynamic compiles with --dynamic-batch: dim 0 of every graph input
is dynamic, so the same cases exercise the dynamic-shape code paths.
--data and --suite name another suite in the same layout: `make test` also
runs the node suite of PyPI's onnx 1.23 (test/e2e/onnx_suite_data.py
writes it); its OUT/excluded.txt names the cases that need training ops,
sequences, strings or optional types, and the summary states the pass
rate over the others too.
--mode gpu-emulated compiles with --target=cuda --emulate-gpu: the CUDA
backend's loop nests exactly as it maps them onto blocks and threads,
run on the CPU, so the mapping is checked numerically on every case.

Artifacts are cached in --work by a key over the kiln binary, the runtime
headers, the model, the mode and the frozen inputs: a rerun after a change
that does not touch the compiler compiles nothing.

The run fails on any case that passed in the expected list and does not
pass now; --update rewrites the list (with each case's reason) and, given
--report, regenerates docs/Conformance.md from both modes' lists. Ends with
the line `N passed, N failed, N skipped`. Exits 77 (ctest's skip) when the
suite's data is not there.
"""
import argparse
import glob
import hashlib
import os
import re
import sys
import threading
import time

from onnx_cases import (data_files, first_reason, freeze_args, list_cases, read_expected,
                        run, run_cases, write_expected)

MODES = {"static": [], "dynamic": ["--dynamic-batch"],
         # The CUDA backend's loop nests, as mapped onto GPU blocks and
         # threads, compiled for the CPU (no libraries: every op a loop nest).
         "gpu-emulated": ["--target=cuda", "--emulate-gpu"]}

# Why the failures that remain are not Kiln bugs to fix, by case-name
# pattern: written next to the driver's own reason in docs/Conformance.md.
EXPLANATIONS = [
    (r"test_cast_FLOAT_to_BFLOAT16$",
     "ONNX 1.12's expected data truncates float to bfloat16; Kiln rounds to nearest even "
     "(IEEE, ONNX >= 1.14, ONNX Runtime), one bfloat16 ulp apart"),
    (r"test_castlike_.*BFLOAT16",
     "the test data's `like` input has shape [1] (only its type matters) while the model "
     "declares [3, 4]; the runtime rejects inputs that contradict declared dims"),
    (r"_(bf16|bfloat16)(_|$)",
     "bfloat16 results one unit in the last place from the reference's (a bfloat16 ulp is "
     "7.8e-3 at 1.0, the rule's rtol 1e-3): Kiln sums bfloat16 in float32 and rounds once "
     "(as ONNX Runtime and PyTorch do), the reference (ml_dtypes) sums in bfloat16; measured "
     "against the float64 result, both are as close (the attention cases' mean error 7e-4 to "
     "1.2e-3 for each)"),
    (r"_(fp16|float16)(_|$)",
     "float16 results one float16 unit in the last place from the reference's (the rule's "
     "rtol 1e-3 is about one ulp): Kiln and the reference round float16 intermediates at "
     "different points (Kiln's contractions accumulate in float32)"),
    (r"test_adam_multiple$",
     "ONNX 1.12's expected data were computed with epsilon 1e-2 while the model leaves "
     "epsilon at its default, 1e-6 (ONNX 1.23's data for the same model match Kiln's)"),
    (r"test_dft_inverse",
     "the expected data holds the reference's float32 FFT noise (1.9e-7) where the exact "
     "result is 0, above the rule's atol 1e-7; Kiln's result (computed in float64) is within "
     "4e-15 of numpy's float64 inverse FFT"),
]


def explain(name):
    for pattern, why in EXPLANATIONS:
        if re.search(pattern, name):
            return why
    return ""


def compiler_identity(kiln):
    """A digest of what decides an artifact's bytes besides the model."""
    digest = hashlib.sha256()
    files = [kiln] + sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "..",
                                                   "runtime", "include", "kiln", "*.h")))
    for path in files:
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def cache_key(identity, mode, model, freeze):
    digest = hashlib.sha256(identity.encode())
    digest.update(mode.encode())
    digest.update(b"frozen" if freeze else b"as-is")
    with open(model, "rb") as f:
        digest.update(f.read())
    return digest.hexdigest()[:32]


def compile_cached(kiln, identity, mode, name, case_dir, work, timeout, freeze):
    """(artifact or None, frozen names, failure status and reason)."""
    model = os.path.join(case_dir, "model.onnx")
    base = os.path.join(work, cache_key(identity, mode, model, freeze))
    artifact, frozen_list = base + ".so", base + ".frozen"
    if os.path.exists(artifact) and os.path.exists(frozen_list):
        with open(frozen_list) as f:
            return artifact, set(f.read().split()), None
    # Cases with identical models share a key and may compile at the same
    # time: each writes its own file and moves it into place.
    private = f"{base}.{os.getpid()}.{threading.get_ident()}"
    extra = ["-o", private + ".so"] + MODES[mode]
    if freeze:
        code, out, frozen_names, _ = freeze_args(kiln, "compile", model, case_dir, extra, timeout)
    else:
        (code, out), frozen_names = run([kiln, "compile", model] + extra, timeout), set()
    if code != 0:
        # An input needed at compile time is Kiln's limitation, not an
        # unsupported model.
        if code == 1 and "needs a constant" in out:
            return None, set(), ("failed", "compile: " + first_reason(out))
        if code == 1 and "cannot be imported" in out and "invalid (" not in out:
            return None, set(), ("skipped", first_reason(out))
        return None, set(), ("failed", "compile: " + first_reason(out))
    os.replace(private + ".so", artifact)
    os.replace(private + ".h", base + ".h")
    with open(private + ".frozen", "w") as f:
        f.write(" ".join(sorted(frozen_names)))
    os.replace(private + ".frozen", frozen_list)
    return artifact, frozen_names, None


def check(kiln, identity, mode, name, case_dir, work, timeout, freeze):
    artifact, frozen_names, failure = compile_cached(kiln, identity, mode, name, case_dir,
                                                     work, timeout, freeze)
    if failure:
        return failure
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
    return "passed", ""


def stable_reason(reason):
    """The reason without machine-specific paths (for the expected lists)."""
    reason = re.sub(r"/\S*/(node|pytorch-converted|pytorch-operator|simple)/", r"\1/", reason)
    reason = re.sub(r"\S*[0-9a-f]{32}\S*\.so", "ARTIFACT", reason)
    return " ".join(reason.split())


def read_reasons(path):
    """name -> (status, reason) from an expected list with reasons."""
    entries = {}
    if os.path.exists(path):
        for line in open(path):
            if line.startswith("#") or not line.strip():
                continue
            head, _, reason = line.partition("#")
            name, status = head.split()
            entries[name] = (status, reason.strip())
    return entries


def skipped_op_types(results):
    """op type (or input kind) -> number of skipped cases."""
    counts = {}
    for status, reason in results.values():
        if status != "skipped":
            continue
        m = re.search(r"\((\w+)\):", reason)
        key = m.group(1) if m else ("graph inputs that are not tensors or whose type kiln lacks"
                                    if "graph input" in reason else reason[:60])
        counts[key] = counts.get(key, 0) + 1
    return counts


SECTION_BEGIN = "<!-- suite: {} -->"
SECTION_END = "<!-- end of suite: {} -->"


def read_sections(path):
    """{suite: text} of the generated sections of other suites in a report."""
    sections = {}
    if not os.path.exists(path):
        return sections
    text = open(path).read()
    for m in re.finditer(r"<!-- suite: (.+?) -->\n(.*?)<!-- end of suite: \1 -->\n", text, re.S):
        sections[m.group(1)] = m.group(0)
    return sections


def read_excluded(data):
    """{case: why} from the suite's excluded.txt (cases the goal leaves out)."""
    path = os.path.join(data, "excluded.txt")
    excluded = {}
    if os.path.exists(path):
        for line in open(path):
            if line.strip() and not line.startswith("#"):
                name, why = line.split()
                excluded[name] = why.replace("_", " ")
    return excluded


def goal_line(results, excluded):
    counted = [n for n in results if n not in excluded]
    passed = sum(1 for n in counted if results[n][0] == "passed")
    rate = 100.0 * passed / len(counted) if counted else 0
    return passed, len(counted), rate


def write_section(path, suite, results, excluded):
    """Writes (or replaces) the report's section on `suite`."""
    c = {s: sum(1 for v in results.values() if v[0] == s) for s in ("passed", "failed", "skipped")}
    total = len(results)
    passed, counted, rate = goal_line(results, excluded)
    lines = [
        SECTION_BEGIN.format(suite),
        f"## {suite}: the newest backend suite",
        "",
        f"The node suite of PyPI's onnx {suite.split()[-1]} ({total} cases, opsets up to 28), written at",
        "test time by ONNX's own case generators (`test/e2e/onnx_suite_data.py`,",
        "in the venv `scripts/onnx-venv.sh` makes) and driven like the suite above:",
        "compiled as it is, statically, every input given at run time. Its",
        "expected list is `test/e2e/onnx_1_23_conformance_expected.txt`.",
        "",
        "| suite | passed | failed | skipped | pass rate |",
        "| --- | --- | --- | --- | --- |",
        f"| all cases | {c['passed']} | {c['failed']} | {c['skipped']} | "
        f"{100.0 * c['passed'] / total if total else 0:.1f}% |",
        f"| without the {len(excluded)} cases that need training ops, sequences, strings or "
        f"optional types | {passed} | | | {rate:.1f}% of {counted} |",
        "",
        f"### Failures ({suite})",
        "",
        "| case | reason | why |",
        "| --- | --- | --- |",
    ]
    for name, (status, reason) in sorted(results.items()):
        if status == "failed":
            lines.append(f"| {name} | {reason.replace('|', '/')} | {explain(name)} |")
    lines += ["", f"### Skipped ({suite}): what the importer does not support", "",
              "| op type or input | cases |", "| --- | --- |"]
    for key, n in sorted(skipped_op_types(results).items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"| {key} | {n} |")
    lines.append(SECTION_END.format(suite))
    section = "\n".join(lines) + "\n"
    text = open(path).read() if os.path.exists(path) else ""
    old = read_sections(path).get(suite)
    text = text.replace(old, section) if old else text.rstrip("\n") + "\n\n" + section
    with open(path, "w") as f:
        f.write(text)


def write_report(path, static, dynamic):
    total = len(static)

    def row(label, results):
        c = {s: sum(1 for v in results.values() if v[0] == s)
             for s in ("passed", "failed", "skipped")}
        rate = 100.0 * c["passed"] / total if total else 0
        return f"| {label} | {c['passed']} | {c['failed']} | {c['skipped']} | {rate:.1f}% |"

    lines = [
        "# ONNX conformance",
        "",
        "Generated by `test/e2e/onnx_conformance.py` (`make conformance-update`); do not",
        "edit. Every case of Debian's libonnx-testdata (ONNX 1.12) suites node,",
        f"pytorch-converted, pytorch-operator and simple ({total} cases) is compiled for the",
        "CPU and run on each of its data sets; outputs are compared under ONNX's rule",
        "`|got - want| <= 1e-7 + 1e-3 * |want|` (NaN matches NaN, infinities match by",
        "sign). Each model is compiled as it is, every graph input given at run time,",
        "as a user runs it: nothing is frozen to the test data, so shapes, axes, counts",
        "and sizes given as inputs are read when the model runs. Forced-dynamic mode",
        "compiles with `--dynamic-batch` (dim 0 of every graph input dynamic, but of",
        "inputs read only as shapes, axes or counts). `make test` fails on any case",
        "listed as passing here that no longer passes.",
        "",
        "| mode | passed | failed | skipped | pass rate |",
        "| --- | --- | --- | --- | --- |",
        row("static", static),
        row("forced-dynamic", dynamic),
        "",
        "## Failures (static mode)",
        "",
        "| case | reason | why |",
        "| --- | --- | --- |",
    ]
    for name, (status, reason) in sorted(static.items()):
        if status == "failed":
            lines.append(f"| {name} | {reason.replace('|', '/')} | {explain(name)} |")
    lines += ["", "## Failures only in forced-dynamic mode", "",
              "Cases that pass (or are skipped) statically but fail with dim 0 of every",
              "input dynamic. Most need a dim at compile time that the forced-dynamic mode",
              "hides (a weight's channels, a reshape of a dynamic dim into several), which",
              "real models keep static.", "",
              "| case | reason | why |", "| --- | --- | --- |"]
    for name, (status, reason) in sorted(dynamic.items()):
        if status == "failed" and static.get(name, ("", ""))[0] != "failed":
            lines.append(f"| {name} | {reason.replace('|', '/')} | {explain(name)} |")
    lines += ["", "## Skipped (static mode): what the importer does not support", "",
              "Reasons per case are in `test/e2e/onnx_conformance_expected.txt`;",
              "[OnnxSupport.md](OnnxSupport.md) says why each is out of scope.", "",
              "| op type or input | cases |", "| --- | --- |"]
    for key, n in sorted(skipped_op_types(static).items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"| {key} | {n} |")
    # Other suites' sections (written by their own runs) stay.
    sections = "".join("\n" + text for text in read_sections(path).values())
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n" + sections)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--suite", default="ONNX 1.12",
                    help="the suite's name in the expected list and the report")
    ap.add_argument("--mode", choices=sorted(MODES), default="static")
    ap.add_argument("--expected", required=True)
    ap.add_argument("--other-expected",
                    help="the other mode's expected list (for --report)")
    ap.add_argument("--report", help="docs/Conformance.md to regenerate with --update")
    ap.add_argument("--work", required=True, help="folder for the cached artifacts")
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--freeze", action="store_true",
                    help="freeze the inputs the importer needs at compile time to the first "
                         "data set (not how a user runs a model; not the headline)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--shard", default="1/1",
                    help="I/N: only every N-th case, starting with the I-th (1-based), so that "
                         "no single test entry runs for minutes; the expected list is checked "
                         "for those cases only")
    args = ap.parse_args()
    try:
        shard, shards = (int(x) for x in args.shard.split("/"))
        assert 1 <= shard <= shards
    except (ValueError, AssertionError):
        ap.error(f"--shard takes I/N with 1 <= I <= N, got '{args.shard}'")
    if args.update and shards != 1:
        ap.error("--update records every case: run it without --shard")
    if not os.path.isdir(args.data):
        print(f"SKIPPED: ONNX test data not found at {args.data}")
        return 77
    os.makedirs(args.work, exist_ok=True)
    start = time.time()
    identity = compiler_identity(args.kiln)
    cases = list_cases(args.data)[shard - 1::shards]
    results = run_cases(cases, lambda name, folder: check(args.kiln, identity, args.mode, name,
                                                         folder, args.work, args.timeout,
                                                         args.freeze),
                        args.jobs)
    results = {n: (s, stable_reason(r)) for n, (s, r) in results.items()}
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
    # The command that regenerates this mode's list.
    regenerate = ("cmake --build build --target conformance-gpu-emulated-update"
                  if args.mode == "gpu-emulated" else "make conformance-update")
    if args.update:
        write_expected(args.expected, results,
                       f"Expected conformance status ({args.mode} mode) of every "
                       f"{args.suite} backend test case, with the reason of each failure or skip.",
                       regenerate)
        if args.report and args.suite != "ONNX 1.12":
            write_section(args.report, args.suite, results, read_excluded(args.data))
        elif args.report and args.other_expected:
            mine, other = read_reasons(args.expected), read_reasons(args.other_expected)
            static, dynamic = (mine, other) if args.mode == "static" else (other, mine)
            write_report(args.report, static, dynamic)
    elif improvements:
        print(f"{len(improvements)} cases pass that the expected list does not record "
              f"({regenerate})")
    for line in regressions:
        print("REGRESSION:", line)
    skipped = skipped_op_types(results)
    if skipped:
        print("skipped op types: " + ", ".join(
            f"{k} ({n})" for k, n in sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0]))))
    excluded = read_excluded(args.data)
    if excluded:
        passed, counted, rate = goal_line(results, excluded)
        print(f"{args.suite}: {passed} of the {counted} cases that need no training ops, "
              f"sequences, strings or optional types pass ({rate:.1f}%)")
    print(f"{args.suite}, {args.mode} mode (shard {shard}/{shards}): conformance run took "
          f"{time.time() - start:.0f} s")
    print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    return 1 if regressions and not args.update else 0


if __name__ == "__main__":
    sys.exit(main())
