#!/usr/bin/python3
"""table.py [--run --tcc PATH --tcc-run PATH] --results DIR [--out docs/zoo.md]

Writes docs/zoo.md, the model zoo's table, from check_zoo.py's --json results
in DIR (RESULTS/<name>.json). With --run it first runs check_zoo.py on every
model under test/zoo/ (work folders under DIR). numpy only.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

METHOD = """\
# Model zoo

Third-party architectures as users bring them: torchvision and Hugging Face
transformers models (and torch.nn's recurrent layers), made small with the
architectures' own width / depth knobs, exported with `torch.onnx.export` in
training mode (opset 17, no constant folding). `test/zoo/check_zoo.py` checks
that tcc trains each one as PyTorch 1.13 does; the tests (`test/zoo/*.test`)
need numpy, not PyTorch. The `dynamo_*` models are exported by current
PyTorch (2.15, onnxscript 0.7.2, transformers 5.25) with its default dynamo
exporter configured for training as `tcc.compile(module, ...)` does
(`test/zoo/make_zoo_dynamo.py`: `optimize=False`, batch norm in training mode;
buffers found from the exporter's graph signature alone, no `--buffers`) and
checked against PyTorch 2.15's training; for every model, a tensor PyTorch does
not train (a causal mask, rotary frequencies) must keep its value.

## Method

- **Weights.** Each model is built with PyTorch's default initialization under
  a fixed seed; every float parameter and batch-norm running statistic is then
  replaced by regenerated values (a tensor whose values are all equal stays
  that constant; any other becomes `float32(mean + std sqrt(3) u)`, `u` from a
  counter-based generator, splitmix64 of `seed 2^32 + index`, so the same mean
  and spread as PyTorch's init). The ONNX file keeps them as external data in
  `weights.bin`, which is not committed: `zoo_common.write_weights` rebuilds it
  from `ref.json` (the generator checks that it reproduces the exported bytes).
  Dropout and stochastic depth are off, except in the `*_dropout` models ("Random ops"
  below).
- **Data.** Real and committed: 128 Fashion-MNIST images (Debian's
  dataset-fashion-mnist; 28x28 padded to 32x32, three channels, normalized) for
  the image models; byte tokens of `/usr/share/common-licenses/GPL-3` for the
  text models (next-byte labels for language models; for classifiers, whether
  a sequence has more spaces than the median; `text_cls_mask`: the same
  sequences padded to several lengths, with an attention mask). Batches as
  `tcc-run --no-shuffle` takes them.
- **Oracles and tolerances.** (1) The first step: for every parameter and
  batch-norm running statistic, the change after one tcc step against one
  float64 PyTorch step from the same weights, compared through statistics of
  the change (sum of |d|, max |d|, and two projections on fixed pseudo-random
  directions normalized by the reference's L2 norm, i.e. about the relative L2
  error in a random direction): the largest relative error of any statistic
  must be below 1e-3. (2) The losses of 30 steps against PyTorch's fp32 run:
  every step within 1e-3 relative.
- **Exclusions.** A tensor whose float64 update is zero, or below 1e-4 of
  PyTorch's own fp32 update (zero in exact arithmetic: biases whose shift a
  later batch norm or softmax removes, such as attention key biases, and the
  running mean of a batch norm whose input has batch mean zero), has no
  meaningful reference: `ref.json` lists it under "excluded" with the reason.
  Frozen parameters are excluded as well.
- **PyTorch's own error.** The "PyTorch fp32" columns measure PyTorch's fp32
  first step against its float64 step with the same statistics, and PyTorch's
  fp32 losses against its float64 losses: what rounding alone does. Where the
  latter exceeds 1e-3 the training trajectory is chaotic at fp32 rounding and
  the loss check cannot pass for any fp32 implementation.
- **Loss horizon.** The losses are held to 1e-3 for the steps where PyTorch's
  fp32 curve stays within 1e-4 of its float64 curve (all 30 for most models;
  `loss_horizon` in `ref.json`); later steps are reported, not checked. The
  batch-norm ReLU CNNs part within 1-12 steps; their one-step check, which
  is well conditioned, covers every tensor.
- **Why the ReLU CNNs part (measured, not fixed).** On resnet18 (batch 16,
  SGD momentum 0.9), at the same weights PyTorch's fp32 gradient is within
  5e-6 of float64 at most steps; at some steps a ReLU input within fp32
  rounding of zero flips, and the gradient of every layer below moves by
  about 1/sqrt(elements of that layer) (7.8e-3 for one flip in a 2x2 map).
  Along the line from the float64 to the fp32 weights the gradient is linear
  up to 1% of the way and then jumps by 2% of its norm: kinks, not smooth
  chaos, so a smaller learning rate does not cure it (the curves part at step
  2 at lr 0.05, 0.01 and 2e-3, at step 4 at 5e-4, 8 at 2e-4, still 11 at
  2e-5; batch 32 at lr 1e-3: step 3). Fashion-MNIST's exactly constant
  background makes it worse (one value per channel repeated at thousands of
  positions, which flip together): with uniform pixel noise of standard
  deviation 0.3 densenet held 30 steps within 5e-5 at lr 1e-3 with one
  PyTorch thread, but parted at step 3 with two threads (another rounding
  order), so no fp32 implementation could be held to that curve. A small
  learning rate also breaks the one-step check: the first update of a
  batch-norm weight near 1.0 is then a few ulps (regnet at lr 1e-3: PyTorch's
  own fp32 update is 16% off float64). What would work, not built: the
  one-step check at the model's learning rate, and the losses on data
  without constant regions compared per step from PyTorch's own weights at
  that step (teacher forcing) rather than as a free-running curve (the
  learning rate is a run-time input, so one artifact serves both).
- **Random ops.** tcc draws dropout masks and stochastic depth from its own Philox4x32-10
  stream (docs/training.md "Dropout"), not PyTorch's, so a reference from PyTorch's own
  draws could only be matched in distribution. The `*_dropout` models (gpt2, bert and vit
  with dropout at p = 0.1 from PyTorch 1.13; `dynamo_gpt2_dropout`, `dynamo_swin_dropout`
  with dropout 0.1 and stochastic depth 0.2, and `dynamo_efficientnet_v2_dropout`, whose
  classifier's in-place dropout the dynamo exporter writes as `RandomUniformLike` +
  `Less`) are instead trained by a PyTorch that draws tcc's numbers: `make_zoo.TccRandom`
  replaces `torch.nn.functional.dropout` and torchvision's `stochastic_depth` while the
  references are computed, takes the k-th call of a forward pass to be the export's k-th
  random node (Dropout or RandomUniformLike, in graph order; the count and each Dropout's
  ratio are checked), and multiplies by that node's mask for the step
  (`zoo_common.philox_first_words` at the node's index, the step's index and `--seed` 7,
  checked against Random123's known answers and tcc's scalar reference). The checks are then
  the exact ones of every other model; with another seed gpt2_dropout's first update is
  off by 0.15 and its losses by 4e-3. `test/zoo/emulation-random.test` trains the six on the
  emulated CUDA device against the CPU: the GPU kernels draw the same numbers.
- **Adam's epsilon.** mobilenet_v2 and mnasnet train with Adam at eps 1e-6:
  at PyTorch's 1e-8 their first step divides gradients that are zero by
  cancellation (rounding noise of ~1e-8) by their own size, so the update of
  such an element is +-lr at random, in PyTorch's fp32 step as in any other
  (PyTorch fp32 against float64: 3.4e-2 on mobilenet_v2).
- **Precision that matters.** Batch-norm statistics and their gradient sums
  accumulate in f64 in tcc, as in PyTorch's CPU kernels: with f32 sums the BN
  CNNs' one-step errors were 5-10x PyTorch's own (regnet 4.9e-3, densenet
  3.0e-3, mobilenet_v2 0.33 with eps 1e-8).
- **The CUDA path.** Every model but five is also compiled for CUDA with host
  twins of its kernels and trained 5 steps on the emulated CUDA device against
  its CPU artifact (`test/zoo/emulation-*.test`, `test/emulation/check_emulation.py
  --zoo`; docs/cuda-codegen.md "Emulation"): losses and gradient norms within
  1e-5, or within ten times what a 1e-7 perturbation of the starting weights
  does to the CPU run, for the models the two points above make chaotic (a
  GPU block reduction sums in another order than a CPU loop). The five are
  Hugging Face architectures whose kernels the others cover: dynamo_qwen2,
  dynamo_gpt_neox, dynamo_gptj and dynamo_opt pass too (2026-12-06) but are
  left out for CI time; dynamo_phi's losses and gradient norms agree (4.5e-7,
  2.2e-7) while two parameters downstream of its key bias, whose gradient is
  zero by cancellation so that Adam steps on its rounding noise, miss the
  widened bound (fc2.weight 1.04e-4 against 6.8e-5).
- **Not in the zoo.** Whisper: at sizes small enough for the suite its
  gradients fall below fp32 resolution. T5 is `T5EncoderModel` with a mean-pooled linear head
  (losses within 7.0e-6 of PyTorch over 30 steps); `T5ForSequenceClassification`
  is refused (NonZero of a run-time mask). Of the PyTorch 1.13 zoo's models, the dynamo
  exporter's mobilenet_v2, regnet, convnext, googlenet, shufflenet_v2, squeezenet,
  efficientnet and distilbert were checked the same way on 2026-12-06 but are left out
  of the suite (their operators are the other exports'): all pass but googlenet, whose
  first update misses 1e-3 by 1-3% through one ReLU input 4e-5 from zero in float64
  (inception5b, channel 119 of sample 13) that fp32 rounding flips in PyTorch too (with
  channels_last at one thread: -5.2e-5), and mobilenet_v2, one batch-norm bias 2.0e-3 off
  where PyTorch's own fp32 step is 9.9e-4 off (Adam at eps 1e-6, above).

Regenerate the models, data and references (Debian's python3 with
python3-torch, python3-torchvision, python3-onnx; transformers as described in
`test/zoo/make_zoo.py`):

    /usr/bin/python3 test/zoo/make_zoo.py [MODEL ...]

and the dynamo exports (a venv with PyPI's torch, `test/zoo/setup_dynamo.sh`):

    /opt/tcc/zoo-dynamo-venv/bin/python test/zoo/make_zoo_dynamo.py [MODEL ...]

and this page (2 threads, as the tests run):

    /usr/bin/python3 test/zoo/table.py --run --tcc build/bin/tcc --tcc-run build/bin/tcc-run --results /tmp/zoo

## Results
"""


def generated():
    """The results' date and machine (the compile and step columns depend on both)."""
    cpu = 'unknown CPU'
    try:
        with open('/proc/cpuinfo') as f:
            cpu = next(line.split(':', 1)[1].strip() for line in f if line.startswith('model name'))
    except (OSError, StopIteration):
        pass
    return ('Generated %s on a %d-vCPU VM (%s) at 2 threads; the compile and step columns\n'
            'are indicative (docs/compile.md and bench/README.md hold the measured times).'
            % (time.strftime('%Y-%m-%d'), os.cpu_count() or 0, cpu))


def models():
    return sorted(d for d in os.listdir(HERE) if os.path.isfile(os.path.join(HERE, d, 'ref.json')))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--results', required=True)
    ap.add_argument('--run', action='store_true')
    ap.add_argument('--tcc')
    ap.add_argument('--tcc-run')
    ap.add_argument('--out', default=os.path.join(HERE, '..', '..', 'docs', 'zoo.md'))
    args = ap.parse_args()
    os.makedirs(args.results, exist_ok=True)
    if args.run:
        for name in models():
            subprocess.call([sys.executable, os.path.join(HERE, 'check_zoo.py'), os.path.join(HERE, name),
                             '--tcc', args.tcc, '--tcc-run', args.tcc_run,
                             '--work', os.path.join(args.results, name),
                             '--json', os.path.join(args.results, name + '.json')])
    rows = ['| model | source | ONNX ops | parameters | status | worst loss error (steps checked) '
            '| worst update error (tensor) | PyTorch fp32 update / loss error | compile | step |',
            '|---|---|---|---:|---|---:|---|---:|---:|---:|']
    for name in models():
        with open(os.path.join(HERE, name, 'ref.json')) as f:
            ref = json.load(f)
        path = os.path.join(args.results, name + '.json')
        res = json.load(open(path)) if os.path.exists(path) else {}
        fp32 = '%.1e / %.1e' % (max(ref['torch_fp32_update_error'].values(), default=0.0),
                                ref.get('torch_fp32_loss_error', float('nan')))
        if 'update_error' in res:
            status = 'OK' if res.get('ok') else 'FAIL'
            if res.get('as_pytorch'):
                status += ' (%d tensors as close as PyTorch fp32, which misses 1e-3)' % res['as_pytorch']
            after = res.get('loss_error_after_horizon')
            loss = '%.1e (%d%s)' % (res['loss_error'], res.get('loss_horizon', ref['steps']),
                                    '; after: %.1e' % after if after is not None else '')
            cells = [loss, '%.1e (`%s`)' % (res['update_error'], res['update_tensor']),
                     fp32, '%.0f s' % res['compile_s'], '%.0f ms' % res['step_ms']]
        else:
            err = res.get('error', 'not run').splitlines()
            status = 'FAIL: ' + (err[-1] if len(err) > 1 else err[0]).replace('|', '/')[:160]
            cells = ['', '', fp32, '%.0f s' % res['compile_s'] if 'compile_s' in res else '', '']
        rows.append('| %s | `%s` | %s | %s | %s | %s |' % (
            name, ref['source'], ' '.join(ref['ops']), '{:,}'.format(ref['params']), status, ' | '.join(cells)))
    with open(args.out, 'w') as f:
        f.write(METHOD + '\n' + generated() + '\n\n' + '\n'.join(rows) + '\n')
    print('wrote', os.path.abspath(args.out))


if __name__ == '__main__':
    main()
