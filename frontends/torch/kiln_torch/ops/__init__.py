"""The aten op table: each aten overload Kiln converts, mapped to the
function that builds its kiln ops. One module per op family registers its
ops with `@converts(...)`; `python3 -m kiln_torch ops` lists them."""

TABLE = {}

# The most pairs a composition that compares every element of one set with
# every element of another builds (a scatter's positions x updates per
# row, EmbeddingBag's bags x indices, bucketize's elements x boundaries,
# histc's elements x bins): past it the conversion is refused, naming the
# sizes, rather than building a tensor of that many flags.
MAX_PAIRS = 1 << 24


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
