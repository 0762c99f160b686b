"""Kiln's runtime for Python: load a compiled model and run it on NumPy arrays.

    import kiln, numpy as np
    model = kiln.load("model.so")               # or kiln.load(path, sha256=...)
    session = model.session(threads=2)
    outputs = session.run({"input": np.zeros((1, 3, 224, 224), np.float32)})
    outputs["output"]                           # a numpy array

Inputs are read in place (any C-contiguous array, by name or in the model's
order). Each output is copied once out of the session's arena into memory
of its own and handed to NumPy over DLPack; `run(..., dlpack=True)` returns
kiln.Tensor objects instead, for torch.from_dlpack and other consumers.
String tensors go in as str or bytes (a list, an object or 'U' array) and
come out as NumPy arrays of str.
Failures raise kiln.Error with the runtime's message (.status names it).
Training steps (`kiln compile --train`): `model.parameters` lists what the
session owns, `session.parameter(name)` is a writable view of it (on a
GPU, of its host copy: each call refreshes it from GPU memory), and
`kiln.export_weights(session, "model.onnx", "trained.onnx")` writes the
trained values back into the ONNX model.
A session is used by one thread at a time (the GIL is released while it
runs); make one per thread.
"""
from ._kiln import Error, Model, Session, Tensor, load

__all__ = ["Error", "Model", "Session", "Tensor", "load", "export_weights"]


def export_weights(session, model_path, out_path):
    """Writes a training session's current parameters into the ONNX model
    they came from: a copy of `model_path` (the model given to `kiln
    compile --train`) whose initializers of the same names hold the
    session's values, saved as `out_path`. Needs the `onnx` package.
    Returns the names written."""
    import numpy
    import onnx
    from onnx import numpy_helper

    model = onnx.load(model_path)
    names = {name for name, _, _ in session.model.parameters}
    written = []
    for initializer in model.graph.initializer:
        if initializer.name in names:
            value = numpy.asarray(session.parameter(initializer.name))
            initializer.CopyFrom(numpy_helper.from_array(value.copy(), initializer.name))
            written.append(initializer.name)
    onnx.save(model, out_path)
    return written
