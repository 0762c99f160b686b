"""torch.export with the checks Kiln adds: a module in training mode is
refused (BatchNorm and Dropout would be traced in their training form),
data-dependent control flow is reported with the line that caused it, and
the batch dim is made symbolic."""

import warnings

import torch

from .convert import KilnTorchError, model_frame


def training_layers(module):
    return [f"{name or '(the module)'} ({type(m).__name__})" for name, m in module.named_modules()
            if m.training and isinstance(m, (torch.nn.modules.batchnorm._BatchNorm,
                                             torch.nn.Dropout, torch.nn.modules.dropout._DropoutNd))]


def check_mode(module, allow_training_mode):
    if not module.training:
        return
    layers = training_layers(module)
    if not allow_training_mode:
        detail = ("; these layers behave differently in training: " + ", ".join(layers)) if layers \
            else ""
        raise KilnTorchError(
            f"the module is in training mode{detail}. Call module.eval() before compiling, or "
            "pass allow_training_mode=True (--allow-training-mode) to trace it as it is")
    for layer in layers:
        warnings.warn(f"kiln_torch: {layer} is traced in training mode", stacklevel=3)


def user_frame(text):
    """'file.py:12 in forward: `code`' of the model's frame of a traceback
    text, or None."""
    frame = model_frame(text)
    if frame is None:
        return None
    path, line, function, code = frame
    return f"{path}:{line} in {function}: `{code.strip()}`"


def decompositions():
    """torch's core-aten table, less the ops Kiln takes whole: linear and
    matmul (kiln.matmul broadcasts batch dims, where their decompositions
    expand weights to the batch), scaled dot-product attention, and the
    reflect and replicate pads (kiln.pad's modes, where their
    decompositions index with computed tensors)."""
    table = torch.export.default_decompositions()
    aten = torch.ops.aten
    for op in (aten.linear.default, aten.matmul.default,
               aten.scaled_dot_product_attention.default,
               aten.reflection_pad1d.default, aten.reflection_pad2d.default,
               aten.reflection_pad3d.default, aten.replication_pad1d.default,
               aten.replication_pad2d.default, aten.replication_pad3d.default):
        table.pop(op, None)
    return table


def export(module, example_inputs, dynamic_batch, decompose=True):
    """An ExportedProgram: as torch.export gives it, or (`decompose`) in
    core aten."""
    import traceback
    from torch.export import Dim
    inputs = tuple(example_inputs)
    dynamic_shapes = None
    if dynamic_batch:
        # A batch of 1 would be specialised (0/1 specialisation): trace
        # with 2 rows, which torch then keeps symbolic.
        inputs = tuple(t.expand(2, *t.shape[1:]).contiguous()
                       if isinstance(t, torch.Tensor) and t.dim() > 0 and t.shape[0] == 1 else t
                       for t in inputs)
        batch = Dim("batch", min=1, max=2**31 - 2)
        dynamic_shapes = tuple({0: batch} if isinstance(t, torch.Tensor) and t.dim() > 0 else None
                               for t in inputs)
    try:
        with torch.no_grad():
            exported = torch.export.export(module, inputs, dynamic_shapes=dynamic_shapes,
                                           strict=False)
        if not decompose:
            return exported
        return exported.run_decompositions(decompositions()) if decompose else exported
    except Exception as error:  # torch raises many kinds; each becomes one clear message
        text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        where = user_frame(text)
        name = type(error).__name__
        message = str(error).strip().splitlines()[0] if str(error).strip() else name
        data_dependent = "data-dependent" in text or "GuardOnDataDependent" in name or \
            "Could not guard on data-dependent" in text
        if data_dependent:
            raise KilnTorchError(
                "the module's control flow depends on tensor values"
                + (f" at {where}" if where else "")
                + ". Kiln compiles one graph for every input, so a branch on data cannot be "
                "traced (use torch.where, or move the decision out of the model)") from None
        if dynamic_batch and ("Constraints violated" in text or "specialized" in text):
            raise KilnTorchError(
                "the batch dim cannot stay dynamic"
                + (f" ({where})" if where else "")
                + f": {message}. Trace with dynamic_batch=False for a fixed batch") from None
        raise KilnTorchError(f"torch.export failed{' at ' + where if where else ''}: "
                             f"{name}: {message}") from None
