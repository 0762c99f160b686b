"""kiln_torch: trace a PyTorch nn.Module with torch.export straight into
Kiln's IR (not through ONNX) and compile it with `kiln compile`.

    import kiln_torch
    kiln_torch.export(model.eval(), (x,), "model.mlirbc", dynamic_batch=True)
    kiln_torch.compile(model.eval(), (x,), "model.so")

docs/PyTorch.md says what is supported and what is refused, and why.
"""

import os
import shutil
import subprocess
import tempfile

from .convert import KilnTorchError, convert
from .capture import check_mode, decompositions, export as _export

__all__ = ["export", "compile", "to_ir", "KilnTorchError", "kiln_binary", "supported_ops"]


def kiln_binary():
    """The `kiln` tool: $KILN, else `kiln` on the PATH, else the build tree
    of the repository this package sits in."""
    if os.environ.get("KILN"):
        return os.environ["KILN"]
    found = shutil.which("kiln")
    if found:
        return found
    here = os.path.dirname(os.path.abspath(__file__))
    candidate = os.path.normpath(os.path.join(here, "..", "..", "..", "build", "bin", "kiln"))
    if os.path.exists(candidate):
        return candidate
    raise KilnTorchError("cannot find the kiln tool: set KILN or put kiln on the PATH")


def _names(example_inputs, input_names):
    return list(input_names) if input_names else \
        ["input" if len(example_inputs) == 1 else f"input{i}" for i in range(len(example_inputs))]


def to_ir(module, example_inputs, dynamic_batch=True, allow_training_mode=False,
          input_names=None, output_names=None):
    """The module as kiln IR text (MLIR, weights as resources)."""
    return _trace(module, example_inputs, dynamic_batch, allow_training_mode, input_names,
                  output_names).text()


def _trace(module, example_inputs, dynamic_batch, allow_training_mode, input_names,
           output_names):
    """The module as kiln IR (an ir.Function, written when asked)."""
    check_mode(module, allow_training_mode)
    names, outputs = _names(example_inputs, input_names), list(output_names or [])
    # Fast path: when the op table takes every op torch.export gives, its
    # decomposition pass (seconds for a large model) is skipped; otherwise,
    # or when a form is not taken, the model goes through core aten.
    exported = _export(module, example_inputs, dynamic_batch, decompose=False)
    if all_supported(exported):
        try:
            return convert(exported, names, outputs, allow_training_mode)
        except KilnTorchError:
            pass
    decomposed = exported.run_decompositions(decompositions())
    return convert(decomposed, names, outputs, allow_training_mode)


def all_supported(exported):
    from .convert import op_name
    from .ops import load_all
    table = load_all()
    return all(op_name(n.target) in table for n in exported.graph.nodes
               if n.op == "call_function")


def export(module, example_inputs, path, dynamic_batch=True, allow_training_mode=False,
           input_names=None, output_names=None, external_weights=False):
    """Writes the module as kiln IR to `path`: MLIR bytecode when it ends
    in .mlirbc (through `kiln import`), text otherwise. With
    `external_weights`, text keeps the weights' bytes in a file beside it
    (`path` with .weights for .mlir) instead of hex at its end."""
    function = _trace(module, example_inputs, dynamic_batch, allow_training_mode, input_names,
                      output_names)
    if not path.endswith(".mlirbc"):
        _write_text(function, path, external_weights)
        return path
    with tempfile.TemporaryDirectory() as work:
        source = os.path.join(work, "model.mlir")
        _write_text(function, source, external_weights=True)
        _run([kiln_binary(), "import", source, "-o", path])
    return path


def _write_text(function, path, external_weights):
    """The kiln IR text at `path`; the weights in a file beside it (the
    same name, .weights for its extension) when `external_weights`."""
    if not external_weights:
        with open(path, "w") as f:
            function.write(f)
        return
    weights = os.path.splitext(path)[0] + ".weights"
    with open(path, "w") as f, open(weights, "wb") as blobs:
        function.write(f, weights=(blobs, os.path.basename(weights)))


def compile(module, example_inputs, path, target="cpu", dynamic_batch=True,
            allow_training_mode=False, input_names=None, output_names=None, **options):
    """Traces the module and compiles it to `path` (.so, .a or .o) with
    `kiln compile`; `options` become its flags (max_batch=8 ->
    --max-batch=8, no_libraries=True -> --no-libraries)."""
    with tempfile.TemporaryDirectory() as work:
        ir_path = os.path.join(work, "model.mlir")
        export(module, example_inputs, ir_path, dynamic_batch, allow_training_mode, input_names,
               output_names, external_weights=True)
        flags = [f"--target={target}"]
        for key, value in options.items():
            flag = "--" + key.replace("_", "-")
            if value is True:
                flags.append(flag)
            elif value is not False and value is not None:
                flags.append(f"{flag}={value}")
        return _run([kiln_binary(), "compile", ir_path, "-o", path] + flags)


def _run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise KilnTorchError(f"{os.path.basename(command[0])} {command[1]} failed:\n"
                             f"{result.stderr.strip() or result.stdout.strip()}")
    return result.stdout


def supported_ops():
    from .ops import load_all
    return sorted(load_all())
