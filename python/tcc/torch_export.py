"""tcc.torch_export - a PyTorch module to an ONNX file that trains as the module does.

tcc trains the model an ONNX file describes, so the export must describe the
module as ``model.train()`` runs it. Current PyTorch's default exporter
(``torch.onnx.export``, dynamo, from PyTorch 2.9) does not by default:

- its optimizer (``optimize=True``) merges initializers with equal values,
  drops zero biases, pre-transposes weights and folds batch norms into the
  convolutions before them: ``optimize=False`` here;
- onnxscript's translation of ``aten._native_batch_norm_legit_functional``
  writes BatchNormalization in inference mode even in training:
  :data:`TRAINING_TRANSLATIONS` writes it in the mode PyTorch ran it;
- dropout is exported as the module runs it: in training mode here.

Buffers (``register_buffer``) are recorded by the exporter itself (its graph
signature), and tcc keeps them out of training. torch is imported only when a
function here is called; this module imports nothing of tcc, so the zoo's
generator (test/zoo/make_zoo_dynamo.py) loads it by path and exports as
:func:`tcc.compile` does.
"""
from __future__ import annotations

import os
import warnings
from typing import Any, Optional, Sequence

#: The oldest PyTorch whose torch.onnx.export has the dynamo exporter with
#: optimize= and custom_translation_table=.
MIN_TORCH = (2, 5)


def is_module(obj: Any) -> bool:
    """Whether OBJ is a torch.nn.Module, without importing torch."""
    return any(c.__module__ == "torch.nn.modules.module" and c.__name__ == "Module"
               for c in type(obj).__mro__)


def _bn_training(input, weight=None, bias=None, running_mean=None, running_var=None, training=False,
                 momentum=0.9, eps=1e-05):
    """aten._native_batch_norm_legit_functional as ONNX BatchNormalization in the
    mode PyTorch ran it (ONNX momentum = 1 - PyTorch's). The op's saved mean and
    inverse deviation feed only PyTorch's own backward pass, which nothing in
    the exported forward reads: the running statistics stand in for them."""
    from onnxscript import opset18 as op
    if weight is None or bias is None or running_mean is None or running_var is None:
        raise NotImplementedError("a batch norm without affine parameters or running statistics "
                                  "(affine=False, track_running_stats=False) is not translated for training")
    if not training:
        norm = op.BatchNormalization(input, weight, bias, running_mean, running_var, epsilon=eps,
                                     momentum=1.0 - momentum, training_mode=0)
        return norm, running_mean, running_var, running_mean, running_var
    norm, new_mean, new_var = op.BatchNormalization(input, weight, bias, running_mean, running_var,
                                                    epsilon=eps, momentum=1.0 - momentum, training_mode=1)
    return norm, new_mean, new_var, new_mean, new_var


def training_translations() -> dict:
    """The custom_translation_table that keeps training-mode batch norms."""
    import torch
    return {torch.ops.aten._native_batch_norm_legit_functional.default: _bn_training}


def _torch_version(torch) -> tuple:
    parts = []
    for p in torch.__version__.split("+")[0].split(".")[:2]:
        digits = "".join(ch for ch in p if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def export_for_training(module: Any, example_inputs: Any, path: "os.PathLike | str",
                        input_names: Optional[Sequence[str]] = None,
                        output_names: Optional[Sequence[str]] = None,
                        dynamic_batch: bool = False) -> str:
    """Exports MODULE in training mode to PATH (ONNX) with the dynamo exporter
    configured for training (module docstring) and returns PATH. The module's
    mode and state (batch-norm statistics that tracing could touch) are as
    before. EXAMPLE_INPUTS: a tensor or a tuple of tensors, the shapes compiled;
    with DYNAMIC_BATCH their first dimension is one symbol instead, which
    tcc --batch=N binds."""
    import torch
    if _torch_version(torch) < MIN_TORCH:
        raise RuntimeError(
            "exporting a torch.nn.Module for training needs PyTorch %d.%d or later with onnxscript "
            "(its dynamo exporter); this is PyTorch %s. Export by hand with "
            "torch.onnx.export(..., training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False) "
            "and compile the file (docs/training.md, \"Exporting from PyTorch\")"
            % (MIN_TORCH + (torch.__version__,)))
    try:
        import onnxscript  # noqa: F401
    except ImportError as e:
        raise RuntimeError("exporting a torch.nn.Module needs onnxscript (pip install onnxscript), "
                           "which torch.onnx's dynamo exporter uses") from e
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    dynamic_shapes = None
    if dynamic_batch:
        batch = torch.export.Dim("batch")
        dynamic_shapes = tuple({0: batch} if isinstance(x, torch.Tensor) and x.dim() else None
                               for x in example_inputs)
    was_training = module.training
    state = {k: v.detach().clone() for k, v in module.state_dict(keep_vars=True).items()}
    module.train()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = torch.onnx.export(
                module, example_inputs, dynamo=True, optimize=False,
                input_names=list(input_names) if input_names else None,
                output_names=list(output_names) if output_names else None,
                custom_translation_table=training_translations(), dynamic_shapes=dynamic_shapes,
                verbose=False)
    except Exception as e:
        if not dynamic_batch:
            raise
        raise RuntimeError("exporting with a symbolic batch (for tcc's batch=) failed: %s; give example "
                           "inputs of the batch to compile instead, without batch=" % e) from e
    finally:
        with torch.no_grad():
            module.load_state_dict(state)
        module.train(was_training)
    path = os.fspath(path)
    program.save(path)
    return path
