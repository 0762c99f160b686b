"""Walks an exported (core aten) graph and builds kiln IR through the op
table; every unsupported op is collected with its source line before
anything fails."""

import operator
import os
import re

import torch

from . import ir
from .ops import load_all


class KilnTorchError(Exception):
    """A model Kiln cannot trace or convert; the message lists every
    problem with the source line that caused it."""


class Unsupported(Exception):
    """Raised by a converter for a form of an op Kiln does not take."""


class AfterFailure(Exception):
    """An input comes from a node that already failed (reported there)."""


class NotComputed:
    """A result Kiln does not produce (a max pool's indices, a batch
    norm's saved statistics); an error only where something reads it."""

    def __init__(self, why):
        self.why = why


_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)\n\s*(.*)')


def model_frame(text):
    """(path, line, function, code) of the innermost frame of a traceback
    text outside torch and kiln_torch (the model's own code), or None."""
    torch_dir = os.path.dirname(torch.__file__) + os.sep
    for frame in reversed(_FRAME.findall(text)):
        if not frame[0].startswith(torch_dir) and "/kiln_torch/" not in frame[0]:
            return frame
    return None


def _user_frame(node):
    """The model's frame of the node's stack trace, else its innermost."""
    trace = node.meta.get("stack_trace") or ""
    frames = _FRAME.findall(trace)
    return model_frame(trace) or (frames[-1] if frames else None)


def source_line(node):
    """'file.py:12 (forward): text' of the model's code that made `node`."""
    frame = _user_frame(node)
    if frame is None:
        return None
    path, line, function, code = frame
    return f"{path}:{line} ({function}): {code.strip()}"


def location(node):
    frame = _user_frame(node)
    return f'loc("{frame[0]}":{frame[1]}:0)' if frame else None


def element_of(dtype):
    name = str(dtype).replace("torch.", "")
    if name not in ir.ELEMENT_TYPES:
        raise Unsupported(f"element type {name}")
    return ir.ELEMENT_TYPES[name][0]


def dims_of(fake):
    """Static dims as ints, symbolic ones as None."""
    return [int(d) if isinstance(d, int) or (hasattr(d, "node") and d.node.is_constant())
            else None for d in fake.shape]


class Context:
    """What a converter sees: the torch node, its arguments as kiln values
    and the function being built."""

    def __init__(self, function, values):
        self.f = function
        self.values = values
        self.node = None
        # (argument name, symbol) -> the argument's axis of that size
        self.symbol_sources = {}

    # --- the node --------------------------------------------------------
    @property
    def args(self):
        return self.node.args

    @property
    def kwargs(self):
        return self.node.kwargs

    def arg(self, i, default=None, name=None):
        if name and name in self.node.kwargs:
            return self.node.kwargs[name]
        return self.node.args[i] if i < len(self.node.args) else default

    def out_meta(self, index=None):
        val = self.node.meta["val"]
        return val[index] if index is not None else val

    def out_type(self, index=None):
        meta = self.out_meta(index)
        return (element_of(meta.dtype), dims_of(meta))

    # --- values ----------------------------------------------------------
    def value(self, arg, like=None):
        """The kiln value of an fx node, or a constant for a Python scalar
        (of `like`'s element type)."""
        if isinstance(arg, torch.fx.Node):
            v = self.values.get(arg)
            if v is None:
                raise AfterFailure()
            if isinstance(v, NotComputed):
                raise Unsupported(v.why)
            if isinstance(v, tuple):
                raise Unsupported(f"{arg.name} is a tuple, used as a tensor")
            return v
        if isinstance(arg, (bool, int, float)):
            element = like.element if like is not None else ("f32" if isinstance(arg, float) else "i64")
            return self.scalar(arg, element)
        raise Unsupported(f"argument {arg!r}")

    def scalar(self, number, element):
        import numpy as np
        dtype = next(t for (e, t) in ir.ELEMENT_TYPES.values() if e == element)
        return self.f.constant(np.array(number, dtype=dtype), element)

    def dim_carrier(self, symbol, position, rank):
        """An all-true i1 tensor of `rank` dims, 1 everywhere but `position`,
        whose size there is the graph input dim called `symbol` (None when
        no input has it)."""
        for value, name in self.f.arguments:
            source = self.symbol_sources.get((value.name, symbol))
            if source is None:
                continue
            axis = source
            starts = [0] * value.rank
            ends = [1 if a != axis else 2**63 - 1 for a in range(value.rank)]
            one = self.f.op("slice", [value], {"starts": ir.Attr.i64s(starts),
                                               "ends": ir.Attr.i64s(ends),
                                               "steps": ir.Attr.i64s([1] * value.rank)},
                            [(value.element, [None if a == axis else 1 for a in range(value.rank)])])
            shape = [1] * rank
            shape[position] = -1
            dims = [1] * rank
            dims[position] = None
            line = self.f.op("reshape", [one], {"shape": ir.Attr.i64s(shape)},
                             [(value.element, dims)])
            flag = self.f.op("cast", [line], {}, [("i1", dims)])
            negated = self.f.op("not", [flag], {}, [("i1", dims)])
            return self.f.op("or", [flag, negated], {}, [("i1", dims)])
        return None

    def op(self, name, operands, attrs=None, result=None):
        """One kiln op whose result type is the node's (or `result`)."""
        return self.f.op(name, operands, attrs or {}, [result or self.out_type()])


def convert(exported, input_names, output_names, allow_training_mode=False):
    """kiln IR for an ExportedProgram (core aten): an ir.Function, whose
    text() or write(stream) gives the MLIR."""
    table = load_all()
    from torch.export.graph_signature import InputKind
    f = ir.Function()
    ctx = Context(f, {})
    graph = exported.graph_module.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    specs = exported.graph_signature.input_specs
    problems = []
    user = 0
    for node, spec in zip(placeholders, specs):
        fake = node.meta["val"]
        if spec.kind == InputKind.USER_INPUT:
            name = input_names[user] if user < len(input_names) else node.name
            user += 1
            ctx.values[node] = f.argument(name, element_of(fake.dtype), dims_of(fake))
            for axis, d in enumerate(fake.shape):
                if not isinstance(d, int):
                    ctx.symbol_sources.setdefault((ctx.values[node].name, str(d)), axis)
            continue
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            tensor = exported.state_dict.get(spec.target)
            if tensor is None:
                tensor = exported.constants[spec.target]
        elif spec.kind == InputKind.CONSTANT_TENSOR:
            tensor = exported.constants[spec.target]
        else:
            problems.append(f"input {node.name}: kind {spec.kind.name} is not supported")
            continue
        f.location = None
        ctx.values[node] = f.constant(tensor.detach().cpu().contiguous().numpy(),
                                      element_of(tensor.dtype), key=spec.target)

    unsupported = {}
    for node in graph.nodes:
        if node.op != "call_function":
            continue
        name = op_name(node.target)
        convert_fn = table.get(name)
        line = source_line(node) or "(no source line)"
        if convert_fn is None:
            unsupported.setdefault(name, []).append(line)
            continue
        ctx.node = node
        f.location = location(node)
        try:
            ctx.values[node] = convert_fn(ctx)
        except AfterFailure:
            pass
        except Unsupported as e:
            problems.append(f"{name} at {line}: {e}")
    if unsupported or problems:
        lines = []
        for name, where in sorted(unsupported.items()):
            lines.append(f"unsupported op {name} ({len(where)} use{'s' if len(where) > 1 else ''}):")
            lines += [f"  {w}" for w in sorted(set(where))]
        lines += problems
        raise KilnTorchError("Kiln cannot convert this model:\n" + "\n".join(lines))

    from torch.export.graph_signature import OutputKind
    output = next(n for n in graph.nodes if n.op == "output")
    results, mutated = [], []
    for arg, spec in zip(output.args[0], exported.graph_signature.output_specs):
        if spec.kind != OutputKind.USER_OUTPUT:
            mutated.append(f"{spec.target} ({spec.kind.name.lower().replace('_', ' ')})")
            continue
        i = len(results)
        name = output_names[i] if i < len(output_names) else f"output{i}" if i else "output"
        value = ctx.values.get(arg)
        if value is None or isinstance(value, (tuple, NotComputed)):
            raise KilnTorchError(f"output {i} ({arg}) is not a tensor Kiln computes")
        results.append((value, name))
    if mutated and not allow_training_mode:
        raise KilnTorchError(
            "the module updates state in place: " + ", ".join(mutated) + ". Kiln compiles "
            "inference graphs whose weights are constants; remove the update (or, for "
            "BatchNorm's running statistics in training mode, pass allow_training_mode=True: "
            "the update is then not kept)")
    if mutated:
        import warnings
        warnings.warn("kiln_torch: not kept: " + ", ".join(mutated), stacklevel=3)
    f.ret(results)
    return f


def op_name(target):
    if target is operator.getitem:
        return "getitem"
    name = str(target)
    return name if name.startswith("aten.") else getattr(target, "__name__", name)
