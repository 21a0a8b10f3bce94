"""tcc.compile(module, example_inputs, output): a torch.nn.Module exported for
training (tcc.torch_export) trains as PyTorch trains it. Needs PyTorch 2.5 or
later with onnxscript; skipped, saying so, where they are absent."""

import copy

import numpy as np
import pytest

import tcc
from tcc import torch_export


def _torch_or_reason():
    try:
        import torch
    except ImportError:
        return None, "torch is not installed"
    if torch_export._torch_version(torch) < torch_export.MIN_TORCH:
        return None, "torch %s predates the dynamo exporter tcc.compile(module) uses (needs %d.%d)" % (
            (torch.__version__,) + torch_export.MIN_TORCH)
    try:
        import onnxscript  # noqa: F401
    except ImportError:
        return None, "onnxscript (torch.onnx's dynamo exporter) is not installed"
    return torch, ""


torch, _reason = _torch_or_reason()
needs_torch = pytest.mark.skipif(torch is None, reason="tcc.compile(module) not tested: " + _reason)


def test_is_module_needs_no_torch(tmp_path):
    """Files and other objects are not modules, and a file takes no third argument."""
    assert not torch_export.is_module("model.onnx")
    assert not torch_export.is_module(object())
    with pytest.raises(TypeError, match="takes no third argument"):
        tcc.compile("model.onnx", tmp_path / "m.so", tmp_path / "x.so")


def _net():
    """Conv -> BatchNorm (training mode) -> ReLU -> mean -> + a registered
    buffer -> Linear: batch statistics, running statistics and a buffer."""

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 6, 3, padding=1)
            self.bn = torch.nn.BatchNorm2d(6)
            self.fc = torch.nn.Linear(6, 4)
            self.register_buffer("offset", torch.linspace(-1.0, 1.0, 6))

        def forward(self, x):
            h = torch.relu(self.bn(self.conv(x))).mean(dim=(2, 3))
            return self.fc(h + self.offset)

    torch.manual_seed(0)
    return Net()


@needs_torch
def test_compile_module_trains_as_pytorch(tmp_path):
    """Six SGD steps: tcc's losses are PyTorch fp32's to 1e-5, the batch norm's
    running statistics follow PyTorch's, the buffer is not trained, and the
    module itself is left as it was."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 3, 8, 8)).astype(np.float32)
    y = rng.integers(0, 4, 16).astype(np.int64)
    net = _net()
    net.eval()
    before = copy.deepcopy(net.state_dict())
    art = tcc.compile(net, (torch.from_numpy(x[:8]),), tmp_path / "net.so", input_names=["x"],
                      output_names=["logits"], loss="cross_entropy", optimizer="sgd", momentum=0.9)
    assert (tmp_path / "net.onnx").exists()
    assert not net.training
    for k, v in net.state_dict().items():
        assert torch.equal(v, before[k]), k

    result = tcc.train(art, data={"x": x, "y": y}, steps=6, lr=0.1, shuffle=False, threads=1)

    ref = copy.deepcopy(net).train()
    opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for step in range(6):
        i = step % 2
        xb, yb = torch.from_numpy(x[i * 8:(i + 1) * 8]), torch.from_numpy(y[i * 8:(i + 1) * 8])
        loss = torch.nn.functional.cross_entropy(ref(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    np.testing.assert_allclose(result.losses, losses, rtol=1e-5)

    params = result.session.params()
    np.testing.assert_array_equal(params["offset"], before["offset"].numpy())
    np.testing.assert_allclose(params["bn.running_mean"], ref.bn.running_mean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(params["bn.running_var"], ref.bn.running_var.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(params["fc.weight"], ref.fc.weight.detach().numpy(), rtol=1e-4, atol=1e-6)


@needs_torch
def test_compile_module_with_another_batch(tmp_path):
    """batch=4 with an example batch of 8: the export's batch is symbolic, tcc
    binds it, and four steps on batches of 4 are PyTorch's to 1e-5."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((8, 3, 8, 8)).astype(np.float32)
    y = rng.integers(0, 4, 8).astype(np.int64)
    net = _net()
    art = tcc.compile(net, (torch.from_numpy(x),), tmp_path / "net4.so", input_names=["x"],
                      output_names=["logits"], loss="cross_entropy", optimizer="adam", batch=4)
    shapes = {t.name: t.shape for t in art.inputs("train_step")}
    assert shapes["x"] == (4, 3, 8, 8)
    result = tcc.train(art, data={"x": x, "y": y}, steps=4, lr=0.01, shuffle=False, threads=1)
    ref = copy.deepcopy(net).train()
    opt = torch.optim.Adam(ref.parameters(), lr=0.01)
    losses = []
    for step in range(4):
        i = step % 2
        loss = torch.nn.functional.cross_entropy(ref(torch.from_numpy(x[i * 4:(i + 1) * 4])),
                                                 torch.from_numpy(y[i * 4:(i + 1) * 4]))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    np.testing.assert_allclose(result.losses, losses, rtol=1e-5)


@needs_torch
def test_compile_module_needs_example_inputs_and_output(tmp_path):
    with pytest.raises(TypeError, match=r"tcc.compile\(module, example_inputs, output"):
        tcc.compile(_net(), tmp_path / "net.so")
