"""Oracle for test/e2e/onnx-sequences.test: a model that splits into ONNX
sequences and picks, counts and joins their tensors (what PyTorch's
exporters make of torch.split, torch.unbind and torch.stack), run by tcc-run
--infer against numpy (Debian's python3 with numpy and onnx).

  seq_check.py make MODEL.onnx X.npy
  seq_check.py check X.npy OUT_DIR
"""
import sys
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

if sys.argv[1] == 'make':
    nodes = [
        h.make_node('Constant', [], ['two'], value=nh.from_array(np.array(2, np.int64))),
        h.make_node('SplitToSequence', ['x', 'two'], ['pieces'], axis=0),
        h.make_node('Constant', [], ['last'], value=nh.from_array(np.array(-1, np.int64))),
        h.make_node('SequenceAt', ['pieces', 'last'], ['tail']),
        h.make_node('SequenceLength', ['pieces'], ['count']),
        h.make_node('Constant', [], ['sizes'], value=nh.from_array(np.array([1, 3], np.int64))),
        h.make_node('SplitToSequence', ['x', 'sizes'], ['cols'], axis=1),
        h.make_node('Constant', [], ['one'], value=nh.from_array(np.array(1, np.int64))),
        h.make_node('SequenceAt', ['cols', 'one'], ['right']),
        h.make_node('SplitToSequence', ['x'], ['rows'], axis=1, keepdims=0),
        h.make_node('ConcatFromSequence', ['rows'], ['stacked'], axis=0, new_axis=1),
        h.make_node('SequenceConstruct', ['tail', 'tail'], ['pair']),
        h.make_node('ConcatFromSequence', ['pair'], ['joined'], axis=1),
    ]
    outs = [h.make_tensor_value_info('tail', T.FLOAT, [1, 4]),
            h.make_tensor_value_info('count', T.INT64, []),
            h.make_tensor_value_info('right', T.FLOAT, [5, 3]),
            h.make_tensor_value_info('stacked', T.FLOAT, [4, 5]),
            h.make_tensor_value_info('joined', T.FLOAT, [1, 8])]
    g = h.make_graph(nodes, 'g', [h.make_tensor_value_info('x', T.FLOAT, [5, 4])], outs)
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 17)]), sys.argv[2])
    np.save(sys.argv[3], np.random.default_rng(3).standard_normal((5, 4)).astype(np.float32))
else:
    x = np.load(sys.argv[2])
    d = sys.argv[3]
    expected = {'tail': x[4:5], 'count': np.array(3), 'right': x[:, 1:4], 'stacked': x.T,
                'joined': np.concatenate([x[4:5], x[4:5]], axis=1)}
    for name, want in expected.items():
        got = np.load('%s/%s.npy' % (d, name))
        assert got.shape == want.shape and np.array_equal(got, want), (name, got, want)
    print('OK: %d outputs of the sequence ops equal numpy' % len(expected))
