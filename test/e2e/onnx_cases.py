"""Shared helpers of the ONNX test-suite drivers: listing the cases of
Debian's libonnx-testdata and reading tensor names from .pb files."""
import concurrent.futures
import os
import re
import subprocess
import sys
import threading
import time

SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
FREEZE = re.compile(r"--freeze-input (\S+)=<file>")


def list_cases(data):
    """(suite/case, folder) of every case with a model."""
    cases = []
    for suite in SUITES:
        root = os.path.join(data, suite)
        if not os.path.isdir(root):
            continue
        for case in sorted(os.listdir(root)):
            if os.path.exists(os.path.join(root, case, "model.onnx")):
                cases.append((f"{suite}/{case}", os.path.join(root, case)))
    return cases


def tensor_name(pb_path):
    """The `name` field of a serialised TensorProto (field 8), read without
    the onnx package so the drivers have no Python dependencies."""
    data = open(pb_path, "rb").read()
    i = 0
    while i < len(data):
        key = data[i]
        i += 1
        field, wire = key >> 3, key & 7
        if wire == 0:
            while data[i] & 0x80:
                i += 1
            i += 1
        elif wire == 2:
            length, shift = 0, 0
            while True:
                b = data[i]
                i += 1
                length |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
            if field == 8:
                return data[i:i + length].decode("utf-8", "replace")
            i += length
        elif wire == 5:
            i += 4
        elif wire == 1:
            i += 8
        else:
            return None
    return None


def data_files(case_dir, prefix, data_set="test_data_set_0"):
    """name -> path of the input_* or output_* files of a data set. A file
    without a tensor name is keyed `@I` by its position (as `kiln run`
    accepts)."""
    folder = os.path.join(case_dir, data_set)
    files = {}
    if os.path.isdir(folder):
        numbered = [f for f in os.listdir(folder) if f.startswith(prefix)]
        numbered.sort(key=lambda f: int(f[len(prefix):].split(".")[0]))
        for index, f in enumerate(numbered):
            path = os.path.join(folder, f)
            files[tensor_name(path) or f"@{index}"] = path
    return files


def run(args, timeout):
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""


def freeze_args(kiln, command, model, case_dir, extra, timeout):
    """Runs `kiln COMMAND model --constant-shapes ...` (shapes, axes and
    counts that are inputs are asked for, not read at run time), freezing
    the graph inputs the importer asks for (from the case's first data set)
    until it asks for no more. Returns (exit code, output, frozen names,
    the extra arguments used)."""
    inputs = data_files(case_dir, "input_")
    names, frozen = set(), []
    extra = ["--constant-shapes"] + extra
    code, out = run([kiln, command, model] + extra, timeout)
    while code == 1 and "needs a constant" in out and "invalid (" not in out:
        wanted = set(FREEZE.findall(out)) - names
        if not wanted or not wanted <= set(inputs):
            break
        names |= wanted
        frozen = []
        for name in sorted(names):
            frozen += ["--freeze-input", f"{name}={inputs[name]}"]
        code, out = run([kiln, command, model] + frozen + extra, timeout)
    return code, out, names, frozen


def first_reason(out):
    lines = [l.strip() for l in out.splitlines() if l.startswith("  ") or "error" in l]
    return lines[0][:200] if lines else (out.strip().splitlines() or [""])[-1][:200]


class Progress:
    """Progress over `total` cases on standard error: a bar redrawn on a
    terminal, else a line at every tenth of the way (so logs show it too)."""

    def __init__(self, total, what="cases"):
        self.total, self.what, self.done = total, what, 0
        self.start = time.time()
        self.terminal = sys.stderr.isatty()
        self.lock = threading.Lock()
        self.next_line = 1

    def step(self):
        with self.lock:
            self.done += 1
            elapsed = time.time() - self.start
            if self.terminal:
                filled = 30 * self.done // max(self.total, 1)
                sys.stderr.write(f"\r[{'=' * filled}{' ' * (30 - filled)}] {self.done}/{self.total} "
                                 f"{self.what}  {elapsed:.0f} s")
                if self.done == self.total:
                    sys.stderr.write("\r\033[K")
                sys.stderr.flush()
            elif self.done * 10 >= self.next_line * self.total:
                self.next_line = self.done * 10 // max(self.total, 1) + 1
                print(f"progress: {self.done}/{self.total} {self.what} "
                      f"({100 * self.done // max(self.total, 1)}%), {elapsed:.0f} s",
                      file=sys.stderr, flush=True)


def run_cases(cases, check, jobs):
    """{name: check(name, folder)} over every case, `jobs` at a time, with
    progress on standard error."""
    progress = Progress(len(cases))

    def one(case):
        result = check(*case)
        progress.step()
        return result

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        return dict(zip([c[0] for c in cases], pool.map(one, cases)))


def read_expected(path):
    """name -> status from an expected-status list (missing file: empty)."""
    expected = {}
    if os.path.exists(path):
        for line in open(path):
            line = line.split("#")[0].strip()
            if line:
                name, status = line.split()
                expected[name] = status
    return expected


def write_expected(path, results, title, command):
    """Records `results` ({name: (status, reason)}) as an expected list."""
    with open(path, "w") as f:
        f.write(f"# {title}\n# Regenerate with: {command}\n")
        for name in sorted(results):
            status, reason = results[name][0], results[name][1] if len(results[name]) > 1 else ""
            note = f"  # {reason}" if reason and status != "passed" else ""
            f.write(f"{name} {status}{note}\n")
