#!/usr/bin/env python3
"""models.py - generates the ONNX models of the inference benchmark.

Two models, built with the `onnx` helper API (opset 17), with every shape
static (the batch size is part of the model, so tcc and onnxruntime run
exactly the same graph and neither needs a symbolic dimension bound):

  mlp  784 -> 512 -> 512 -> 10: Gemm + Relu, Gemm + Relu, Gemm
       (input "x" float[B, 784], output "logits" float[B, 10]; B = 64).
  cnn  input "x" float[B, 3, 32, 32] (B = 32):
         Conv 3->16 3x3 pad 1, BatchNormalization, Relu, MaxPool 2x2
         Conv 16->32 3x3 pad 1, BatchNormalization, Relu, MaxPool 2x2
         Flatten, Gemm 2048 -> 10 (output "logits" float[B, 10]).
       BatchNormalization is in its inference form (running mean/variance
       as initializers), as an exported PyTorch model has it.

Weights are random float32 (He-scaled normal, so activations neither vanish
nor explode through the layers; never zero) drawn from a fixed seed, so a
given seed always produces byte-identical models.

The models are build products: write them to an ignored folder (infer_bench.py
uses bench/out/models/), never commit them.

Usage:
    python bench/models.py OUT_DIR [--mlp-batch 64] [--cnn-batch 32] [--seed 0]
"""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
# IR version 8 is what opset 17 shipped with; it keeps the files loadable by
# older onnx/onnxruntime releases as well as by tcc's importer.
IR_VERSION = 8


class _Params:
    """Collects the initializers of one model, drawn from one RNG."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.initializers = []

    def add(self, name, array):
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array, np.float32), name))
        return name

    def weight(self, name, shape, fan_in):
        """He-scaled normal weights: std sqrt(2 / fan_in)."""
        return self.add(name, self.rng.standard_normal(shape) * np.sqrt(2.0 / fan_in))

    def bias(self, name, size):
        return self.add(name, self.rng.uniform(-0.1, 0.1, size))


def _model(graph, name):
    model = helper.make_model(
        graph,
        producer_name="tcc bench/models.py",
        opset_imports=[helper.make_opsetid("", OPSET)],
    )
    model.ir_version = IR_VERSION
    model.graph.name = name
    onnx.checker.check_model(model, full_check=True)
    return model


def make_mlp(batch=64, seed=0, sizes=(784, 512, 512, 10)):
    """An MLP of Gemm (+ Relu between layers) with weights in PyTorch's
    [out, in] layout (transB = 1)."""
    p = _Params(seed)
    nodes = []
    x = "x"
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        last = i == len(sizes) - 2
        w = p.weight(f"fc{i}.weight", (n_out, n_in), n_in)
        b = p.bias(f"fc{i}.bias", n_out)
        y = "logits" if last else f"fc{i}"
        nodes.append(helper.make_node("Gemm", [x, w, b], [y], name=f"fc{i}", transB=1))
        if not last:
            nodes.append(helper.make_node("Relu", [y], [f"relu{i}"], name=f"relu{i}"))
            y = f"relu{i}"
        x = y
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, sizes[0]])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, sizes[-1]])],
        p.initializers,
    )
    return _model(graph, "mlp")


def make_cnn(batch=32, seed=0, channels=(3, 16, 32), image=32, classes=10):
    """A small CNN: (Conv 3x3 pad 1, BatchNormalization, Relu, MaxPool 2x2)
    per stage, then Flatten and a Gemm classifier."""
    p = _Params(seed)
    nodes = []
    x = "x"
    size = image
    for i, (c_in, c_out) in enumerate(zip(channels[:-1], channels[1:])):
        w = p.weight(f"conv{i}.weight", (c_out, c_in, 3, 3), c_in * 9)
        b = p.bias(f"conv{i}.bias", c_out)
        nodes.append(
            helper.make_node(
                "Conv", [x, w, b], [f"conv{i}"], name=f"conv{i}", kernel_shape=[3, 3], pads=[1, 1, 1, 1]
            )
        )
        scale = p.add(f"bn{i}.weight", p.rng.uniform(0.5, 1.5, c_out))
        shift = p.add(f"bn{i}.bias", p.rng.uniform(-0.1, 0.1, c_out))
        mean = p.add(f"bn{i}.running_mean", p.rng.uniform(-0.1, 0.1, c_out))
        var = p.add(f"bn{i}.running_var", p.rng.uniform(0.5, 1.5, c_out))
        nodes.append(
            helper.make_node(
                "BatchNormalization",
                [f"conv{i}", scale, shift, mean, var],
                [f"bn{i}"],
                name=f"bn{i}",
                epsilon=1e-5,
            )
        )
        nodes.append(helper.make_node("Relu", [f"bn{i}"], [f"relu{i}"], name=f"relu{i}"))
        nodes.append(
            helper.make_node(
                "MaxPool", [f"relu{i}"], [f"pool{i}"], name=f"pool{i}", kernel_shape=[2, 2], strides=[2, 2]
            )
        )
        x = f"pool{i}"
        size //= 2
    features = channels[-1] * size * size
    nodes.append(helper.make_node("Flatten", [x], ["flat"], name="flatten", axis=1))
    w = p.weight("fc.weight", (classes, features), features)
    b = p.bias("fc.bias", classes)
    nodes.append(helper.make_node("Gemm", ["flat", w, b], ["logits"], name="fc", transB=1))
    graph = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, channels[0], image, image])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, classes])],
        p.initializers,
    )
    return _model(graph, "cnn")


def write_models(out_dir, mlp_batch=64, cnn_batch=32, seed=0):
    """Writes mlp.onnx and cnn.onnx into OUT_DIR; returns {name: path}."""
    os.makedirs(out_dir, exist_ok=True)
    paths = {}
    for name, model in (("mlp", make_mlp(mlp_batch, seed)), ("cnn", make_cnn(cnn_batch, seed))):
        path = os.path.join(out_dir, f"{name}.onnx")
        onnx.save(model, path)
        paths[name] = path
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", help="folder to write mlp.onnx and cnn.onnx into (created if missing)")
    parser.add_argument("--mlp-batch", type=int, default=64, help="batch size of the MLP (default: %(default)s)")
    parser.add_argument("--cnn-batch", type=int, default=32, help="batch size of the CNN (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random weights (default: %(default)s)")
    args = parser.parse_args(argv)
    for name, path in write_models(args.out_dir, args.mlp_batch, args.cnn_batch, args.seed).items():
        print(f"{name}: {path} ({os.path.getsize(path)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
