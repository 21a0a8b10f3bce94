"""make_stochastic_depth.py - writes stochastic_depth.onnx: a residual MLP
block with torchvision's StochasticDepth(0.25, 'row') on its branch,
exported for training by PyTorch 2.x's dynamo exporter (RandomUniformLike,
Less, CastLike, Div, Mul), as test/e2e/stochastic-depth-eval.test reads it.

    /opt/tcc/zoo-dynamo-venv/bin/python make_stochastic_depth.py OUT.onnx

Needs PyPI's torch 2.x and torchvision (test/zoo/setup_dynamo.sh makes such
a venv); the test itself does not: the file is committed."""
import sys

import torch
from torchvision.ops import StochasticDepth


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.sd = StochasticDepth(0.25, 'row')
        self.head = torch.nn.Linear(8, 3)

    def forward(self, x):
        return self.head(x + self.sd(torch.relu(self.fc(x))))


def main():
    torch.manual_seed(0)
    model = Block().train()
    program = torch.onnx.export(model, (torch.randn(4, 8),), dynamo=True, optimize=False,
                                input_names=['x'], output_names=['logits'])
    program.save(sys.argv[1])


if __name__ == '__main__':
    main()
