"""Kiln IR as text, built op by op.

The torch frontend writes the module the ONNX importer would build: one
`func.func @main` of kiln ops, graph inputs and outputs named with
`kiln.name`, weights as `dense_resource` blobs in the file's
`dialect_resources` section (bytes written once, as MLIR's own format:
a 4-byte alignment, then the raw little-endian data). Ops are printed in
MLIR's generic form (`"kiln.conv"(...) <{...}> : (...) -> ...`), so this
file needs no knowledge of each op's custom syntax; `kiln compile` parses
and verifies it like any kiln IR (docs/Contracts.md, the import contract).
"""

import io
import re

import numpy as np

# torch dtype name -> (MLIR element type, numpy dtype)
ELEMENT_TYPES = {
    "float32": ("f32", np.float32),
    "float64": ("f64", np.float64),
    "float16": ("f16", np.float16),
    "bfloat16": ("bf16", None),
    "int64": ("i64", np.int64),
    "int32": ("i32", np.int32),
    "int16": ("i16", np.int16),
    "int8": ("i8", np.int8),
    "uint8": ("ui8", np.uint8),
    "bool": ("i1", np.bool_),
}

# Largest constant printed inline; larger ones become resources.
MAX_INLINE_ELEMENTS = 16
# Bytes of a resource hex-encoded at a time when written.
_CHUNK = 1 << 22
# Each blob's offset in an external weights file is a multiple of this.
_WEIGHTS_ALIGNMENT = 64


class Value:
    """An SSA value: its name, element type and dims (None: dynamic)."""

    def __init__(self, name, element, dims):
        self.name = name
        self.element = element
        self.dims = list(dims)

    @property
    def rank(self):
        return len(self.dims)

    @property
    def type(self):
        return tensor_type(self.element, self.dims)

    def __repr__(self):
        return f"Value({self.name}: {self.type})"


def tensor_type(element, dims):
    shape = "x".join("?" if d is None else str(int(d)) for d in dims)
    return f"tensor<{shape + 'x' if shape else ''}{element}>"


def _float(value):
    text = repr(float(value))
    if text in ("inf", "-inf", "nan"):
        raise ValueError(f"{value} cannot be an attribute")
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + ("e" + exponent if exponent else "")


class Attr:
    """Attribute values in MLIR syntax."""

    @staticmethod
    def i64(v):
        return f"{int(v)} : i64"

    @staticmethod
    def i32(v):
        return f"{int(v)} : i32"

    @staticmethod
    def f32(v):
        return f"{_float(v)} : f32"

    @staticmethod
    def f64(v):
        return f"{_float(v)} : f64"

    @staticmethod
    def bool(v):
        return "true" if v else "false"

    @staticmethod
    def i64s(values):
        values = [int(v) for v in values]
        return "array<i64" + (": " + ", ".join(map(str, values)) if values else "") + ">"


def _dense_literal(array, element):
    """dense<...> for a small numpy array."""
    flat = array.reshape(-1)

    def one(x):
        if element == "i1":
            return "true" if bool(x) else "false"
        if element in ("f32", "f64", "f16", "bf16"):
            f = float(x)
            if np.isnan(f):
                return "0x7FC00000" if element == "f32" else "0x7FF8000000000000"
            if np.isinf(f):
                return {"f32": ("0x7F800000", "0xFF800000"),
                        "f64": ("0x7FF0000000000000", "0xFFF0000000000000"),
                        "f16": ("0x7C00", "0xFC00"), "bf16": ("0x7F80", "0xFF80")}[element][f < 0]
            return _float(f)
        return str(int(x))

    if flat.size == 0:
        return "dense<>"
    if flat.size == 1 or (flat == flat[0]).all():
        return f"dense<{one(flat[0])}>"

    def nest(a):
        if a.ndim == 0:
            return one(a)
        return "[" + ", ".join(nest(x) for x in a) + "]"

    return f"dense<{nest(array)}>"


class Function:
    """The body of @main being built."""

    def __init__(self):
        self.lines = []
        self.arguments = []   # (Value, name)
        self.results = []     # (Value, name)
        self.resources = {}   # key -> hex blob
        self.counter = 0
        self.location = None  # current loc(...) text, set per torch node

    def fresh(self):
        name = f"%{self.counter}"
        self.counter += 1
        return name

    def argument(self, name, element, dims):
        value = Value(f"%arg{len(self.arguments)}", element, dims)
        self.arguments.append((value, name))
        return value

    def op(self, name, operands, attrs, result_types, count=1):
        """Appends `"kiln.<name>"(operands) <{attrs}> : (...) -> (...)` and
        returns its result Values (one, or a list when count != 1)."""
        results = [Value(self.fresh(), element, dims) for element, dims in result_types]
        props = ""
        if attrs:
            props = " <{" + ", ".join(f"{k} = {v}" for k, v in sorted(attrs.items())) + "}>"
        head = ", ".join(r.name for r in results)
        operand_list = ", ".join(o.name for o in operands)
        types = ", ".join(o.type for o in operands)
        outs = ", ".join(r.type for r in results)
        if len(results) != 1:
            outs = f"({outs})"
        loc = f" {self.location}" if self.location else ""
        prefix = f"{head} = " if results else ""
        self.lines.append(f'    {prefix}"kiln.{name}"({operand_list}){props} : ({types}) -> {outs}{loc}')
        return results[0] if count == 1 else results

    def constant(self, array, element, key=None):
        """A kiln.constant of a numpy array: inline when small, else a
        dense_resource blob named `key`."""
        # (ascontiguousarray makes a rank-0 array rank 1: a scalar stays
        # rank 0, so that an op on rank-0 tensors keeps rank 0.)
        shape = np.shape(array)
        array = np.ascontiguousarray(array).reshape(shape)
        dims = list(shape)
        if array.size <= MAX_INLINE_ELEMENTS or element == "i1" or key is None:
            literal = _dense_literal(array, element)
        else:
            base = re.sub(r"[^A-Za-z0-9_]", "_", key) or "weight"
            if not re.match(r"[A-Za-z_]", base):
                base = "w_" + base
            unique, n = base, 1
            while unique in self.resources:
                unique, n = f"{base}_{n}", n + 1
            # The bytes are hex-encoded only when written (write: a chunk at
            # a time), so that a model's weights are not held twice more as
            # text (a 2.6 GB model took 23 GB before).
            self.resources[unique] = (max(array.dtype.itemsize, 1), array)
            literal = f"dense_resource<{unique}>"
        result = Value(self.fresh(), element, dims)
        loc = f" {self.location}" if self.location else ""
        self.lines.append(f'    {result.name} = "kiln.constant"() <{{value = {literal} : '
                          f'{result.type}}}> : () -> {result.type}{loc}')
        return result

    def ret(self, values_and_names):
        self.results = list(values_and_names)

    def text(self):
        out = io.StringIO()
        self.write(out)
        return out.getvalue()

    def write(self, out, weights=None):
        """Writes the module's text to the stream `out`; with `weights`, a
        (binary stream, its file name beside the text) pair, the blobs go
        to that stream as they are, each at a multiple of 64 bytes, and the
        module names the file and each blob's offset and size
        (`kiln.weights_file`, `kiln.weights`: docs/Contracts.md) instead
        of holding them as hex."""
        args = ", ".join(f'{v.name}: {v.type} {{kiln.name = "{n}"}}' for v, n in self.arguments)
        outs = ", ".join(f'{v.type} {{kiln.name = "{n}"}}' for v, n in self.results)
        body = "\n".join(self.lines)
        ret_values = ", ".join(v.name for v, _ in self.results)
        ret_types = ", ".join(v.type for v, _ in self.results)
        header = "module {"
        layout = []  # (key, array, offset)
        if weights is not None and self.resources:
            offset = 0
            for key, (_, array) in self.resources.items():
                offset = -(-offset // _WEIGHTS_ALIGNMENT) * _WEIGHTS_ALIGNMENT  # rounded up
                layout.append((key, array, offset))
                offset += array.nbytes
            index = ", ".join(f'"{key}" = array<i64: {offset}, {array.nbytes}>'
                              for key, array, offset in layout)
            header = (f'module attributes {{kiln.weights_file = "{weights[1]}", '
                      f"kiln.weights = {{{index}}}}} {{")
        parts = [header,
                 f"  func.func @main({args}) -> ({outs}) {{",
                 body,
                 f"    return {ret_values} : {ret_types}",
                 "  }",
                 "}"]
        out.write("\n".join(parts) + "\n")
        if layout:
            stream, written = weights[0], 0
            for _, array, offset in layout:
                stream.write(bytes(offset - written))
                stream.write(array.reshape(-1).view(np.uint8).data)  # no copy
                written = offset + array.nbytes
            return
        if not self.resources:
            return
        out.write("\n{-#\n  dialect_resources: {\n    builtin: {\n")
        for i, (key, (alignment, array)) in enumerate(self.resources.items()):
            separator = ",\n" if i else ""
            out.write(f'{separator}      {key}: "0x{alignment.to_bytes(4, "little").hex()}')
            data = array.reshape(-1).view(np.uint8)
            for start in range(0, data.size, _CHUNK):
                out.write(data[start:start + _CHUNK].tobytes().hex())
            out.write('"')
        out.write("\n    }\n  }\n#-}\n")
