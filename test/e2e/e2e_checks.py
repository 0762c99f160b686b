"""What the e2e scripts share: a tally of checks that ends with the line CI
reads (`N passed, N failed`), and small ONNX models written to a work
folder."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Tally:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
            print(f"PASS: {what}")
        else:
            self.failed += 1
            print(f"FAIL: {what}\n{detail}")

    def finish(self):
        """Prints the summary and exits 1 if any check failed."""
        print(f"{self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed else 0)


class Suite(Tally):
    """A tally whose models and tensors go to the work folder `work`."""

    def __init__(self, work, opset):
        super().__init__()
        self.work, self.opset = work, opset
        os.makedirs(work, exist_ok=True)

    def model(self, name, nodes, inputs, outputs, initializers=None):
        return save_model(self.work, name, nodes, inputs, outputs, initializers, self.opset)

    def run_args(self, kiln, so, name, feeds, expected, tolerance):
        """`kiln run` of artifact `so` on `feeds` (name -> array), its
        output y compared with `expected` within `tolerance` (relative):
        the arrays saved as .npy files in the work folder."""
        args = [kiln, "run", so]
        for k, v in feeds.items():
            f = os.path.join(self.work, f"{name}.{k}.npy")
            np.save(f, v)
            args += ["--input", f"{k}={f}"]
        f = os.path.join(self.work, f"{name}.expected.npy")
        np.save(f, expected)
        return args + ["--expected", f"y={f}", "--max-relative-error", str(tolerance)]


def save_model(work, name, nodes, inputs, outputs, initializers=None, opset=13):
    """`nodes` as an ONNX model `work`/`name`.onnx with `initializers`
    (name -> array); returns its path."""
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              [numpy_helper.from_array(v, k)
                               for k, v in (initializers or {}).items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    path = os.path.join(work, f"{name}.onnx")
    onnx.save(m, path)
    return path


def tensor(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)
