#!/usr/bin/env python3
"""TensorBoard's own reader on tcc-run's event files (a venv's python with
the tensorboard package; scripts/tensorboard-tests.sh makes it).

  tensorboard_reader.py DIR METRICS.jsonl
      loads DIR with tensorboard's EventAccumulator and checks that every
      metrics line's loss, lr, grad_norm, val_loss and val_accuracy are the
      scalars train/loss, train/lr, train/grad_norm, val/loss, val/accuracy
      at that step (as f32: the event holds simple_value floats), that every
      step has train/samples_per_s > 0, and that the options text is there.
"""
import json
import struct
import sys

from tensorboard.backend.event_processing import event_accumulator


def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def main(folder, metrics):
    acc = event_accumulator.EventAccumulator(folder, size_guidance={
        event_accumulator.SCALARS: 0, event_accumulator.TENSORS: 0})
    acc.Reload()
    tags = acc.Tags()
    scalars = {t: {e.step: e.value for e in acc.Scalars(t)} for t in tags['scalars']}
    lines = [json.loads(l) for l in open(metrics)]
    keys = {'loss': 'train/loss', 'lr': 'train/lr', 'grad_norm': 'train/grad_norm',
            'val_loss': 'val/loss', 'val_accuracy': 'val/accuracy'}
    compared = 0
    for line in lines:
        step = line['step']
        for key, tag in keys.items():
            if key not in line:
                continue
            got = scalars[tag][step]
            if got != f32(line[key]):
                sys.exit('step %d: %s is %r in TensorBoard, %r in the metrics' % (step, tag, got, line[key]))
            compared += 1
        assert scalars['train/samples_per_s'][step] > 0
    # No more steps either (a resumed run's START purges the killed run's).
    for key, tag in keys.items():
        want = [l['step'] for l in lines if key in l]
        got = sorted(scalars.get(tag, {}))
        assert got == want, '%s at steps %s in TensorBoard, %s in the metrics' % (tag, got, want)
    assert 'options' in tags['tensors'], tags
    text = acc.Tensors('options')[0].tensor_proto.string_val[0].decode()
    assert '--lr' in text, text
    print('OK: %d values of %d steps agree; tags %s' % (compared, len(lines), sorted(scalars)))


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
