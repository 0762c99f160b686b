"""The aten op table: each aten overload Kiln converts, mapped to the
function that builds its kiln ops. One module per op family registers its
ops with `@converts(...)`; `python3 -m kiln_torch ops` lists them."""

TABLE = {}


def converts(*names):
    """Registers a converter for aten overloads named like
    "aten.convolution.default"."""
    def register(fn):
        for name in names:
            TABLE[name] = fn
        return fn
    return register


def load_all():
    from . import (elementwise, indexing, nn, predispatch, reduction,  # noqa: F401
                   resampling, shape, sort)  # (they register)
    return TABLE
