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
Failures raise kiln.Error with the runtime's message (.status names it).
A session is used by one thread at a time (the GIL is released while it
runs); make one per thread.
"""
from ._kiln import Error, Model, Session, Tensor, load

__all__ = ["Error", "Model", "Session", "Tensor", "load"]
