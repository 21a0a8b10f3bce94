"""Tests of the installed tcc package: compile, sessions, the trainer, errors.

The oracles: tcc-run's metrics on the same artifact and data (the Python
loop and tcc.train must take exactly its steps: equal float32 losses), and
PyTorch's stored loss curve of the parity MLP (test/parity, within 1e-3).
Run after `pip install .` into a venv: pytest python/tests.
"""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tcc

REPO = Path(__file__).resolve().parents[2]
PARITY = REPO / "test" / "parity" / "mlp"


def pytorch_losses():
    return json.loads((PARITY / "sgd.json").read_text())["losses"]


def test_artifact_describes_the_step(sgd):
    assert set(sgd.entries) >= {"train_step", "infer"}
    inputs = {t.name: t for t in sgd.inputs("train_step")}
    assert inputs["lr"].dtype == np.float32 and inputs["lr"].shape == ()
    assert inputs["y"].dtype == np.int64
    assert "loss" in {t.name for t in sgd.outputs("train_step")}
    assert sgd.metadata("loss") == "cross_entropy"
    assert sgd.metadata("no-such-key") is None
    assert sgd.info["device"] == "cpu"


def test_manual_loop_matches_tcc_run_and_pytorch(sgd, data, tcc_run_losses):
    """The snippet of the issue: s.run("train_step", ...) batch by batch."""
    s = sgd.session(threads=2)
    batch = sgd.inputs("train_step")[0].shape[0]
    per_epoch = len(data["y"]) // batch
    losses = []
    for step in range(50):
        b = step % per_epoch
        rows = slice(b * batch, (b + 1) * batch)
        out = s.run("train_step", x=data["x"][rows], y=data["y"][rows], lr=np.float32(0.05))
        assert out["loss"].dtype == np.float32 and out["loss"].shape == ()
        losses.append(float(out["loss"]))
    np.testing.assert_array_equal(np.float32(losses), tcc_run_losses)
    np.testing.assert_allclose(losses, pytorch_losses(), rtol=1e-3)
    assert losses[-1] < 0.7 * losses[0]


def test_train_matches_tcc_run(sgd, data, tcc_run_losses, tmp_path):
    """tcc.train from a folder and from arrays in memory: tcc-run's losses."""
    from_dir = tcc.train(sgd, data=PARITY / "data", steps=50, lr=0.05, shuffle=False,
                         threads=2)
    np.testing.assert_array_equal(np.float32(from_dir.losses), tcc_run_losses)
    assert from_dir.steps_done == 50
    from_memory = tcc.train(sgd, data=data, steps=50, lr=0.05, shuffle=False, threads=2)
    np.testing.assert_array_equal(np.float32(from_memory.losses), tcc_run_losses)
    trained = from_memory.session.params()
    for name, value in from_dir.session.params().items():
        np.testing.assert_array_equal(value, trained[name])


def test_train_resumes_exactly(sgd, data, tmp_path):
    """Stopped by its callback at step 7 and resumed: an uninterrupted run's losses."""
    whole = tcc.train(sgd, data=data, steps=20, lr=0.05, seed=3, schedule="cosine")
    ckpt = tmp_path / "ckpt"
    first = tcc.train(sgd, data=data, steps=20, lr=0.05, seed=3, schedule="cosine",
                      checkpoint_dir=ckpt, callback=lambda info: info["step"] == 7)
    assert first.steps_done == 7
    assert tcc.checkpoint_metadata(ckpt / "checkpoint.safetensors", "step") == "7"
    rest = tcc.train(sgd, data=data, steps=20, lr=0.05, seed=3, schedule="cosine",
                     checkpoint_dir=ckpt, resume=ckpt / "checkpoint.safetensors")
    assert first.losses + rest.losses == whole.losses


def test_params_and_checkpoints_round_trip(sgd, tmp_path):
    s = sgd.session()
    params = s.params()
    changed = {name: np.full_like(value, 0.25) for name, value in params.items()}
    s.save_checkpoint(tmp_path / "c.safetensors", {"note": "before"})
    s.set_params(changed)
    assert all(np.all(v == 0.25) for v in s.params().values())
    s.load_checkpoint(tmp_path / "c.safetensors")
    for name, value in s.params().items():
        np.testing.assert_array_equal(value, params[name])
    assert tcc.checkpoint_metadata(tmp_path / "c.safetensors", "note") == "before"


def test_errors_carry_the_runtime_message(sgd, data):
    s = sgd.session()
    with pytest.raises(tcc.Error) as e:
        s.run("train_step", x=data["x"][:3], y=data["y"][:3], lr=np.float32(0.1))
    assert e.value.status == "TCC_ERROR_SHAPE"
    assert "'x'" in str(e.value)
    with pytest.raises(tcc.Error) as e:  # no silent casts of data
        s.run("infer", x=data["x"][:16].astype(np.float64))
    assert e.value.status == "TCC_ERROR_DTYPE"
    with pytest.raises(tcc.Error, match="no such file|cannot open|No such"):
        tcc.load("/nonexistent/model.so")
    with pytest.raises(tcc.Error, match="--save-every needs --checkpoint-dir"):
        tcc.train(sgd, data=data, steps=5, lr=0.1, save_every=2)
    with pytest.raises(tcc.CompileError):
        tcc.compile(PARITY / "model.onnx", "/nonexistent/dir/m.so", loss="no-such-loss")


def test_inputs_need_not_be_contiguous(sgd, data):
    """A strided view is accepted (copied to contiguous memory on the way)."""
    s = sgd.session()
    x = np.asfortranarray(data["x"][:16])
    out = s.run("infer", x=x)
    ref = s.run("infer", x=np.ascontiguousarray(data["x"][:16]))
    for name in out:
        np.testing.assert_array_equal(out[name], ref[name])


def test_partial_batches_at_inference_and_evaluation(tmp_path):
    """An artifact compiled for 32 runs infer and eval_step on 1 and 7
    samples: the logits equal the rows of a full batch, the loss is the
    float64 cross-entropy over the real samples only; train_step refuses."""
    art = tcc.compile(REPO / "examples" / "mlp.onnxtxt", tmp_path / "mlp.so", batch=32,
                      loss="cross_entropy")
    assert art.batch == 32
    s = art.session(threads=1)
    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, (32, 4)).astype(np.float32)
    y = rng.integers(0, 3, 32).astype(np.int64)
    full = s.run("infer", features=x)["logits"]
    for n in (1, 7):
        part = s.run("infer", features=x[:n])["logits"]
        assert part.shape == (n, 3)
        np.testing.assert_array_equal(part, full[:n])
        out = s.run("eval_step", features=x[:n], y=y[:n])
        z = full[:n].astype(np.float64)
        lse = np.log(np.exp(z - z.max(1, keepdims=True)).sum(1)) + z.max(1)
        want = float(np.mean(lse - z[np.arange(n), y[:n]]))
        assert out["loss"].shape == ()
        assert abs(float(out["loss"]) - want) <= 1e-5 * abs(want)
        np.testing.assert_array_equal(out["logits"], full[:n])
    with pytest.raises(tcc.Error, match="runs full batches of 32 samples only"):
        s.run("train_step", features=x[:7], y=y[:7], lr=np.float32(0.1))


def test_communicator_alone():
    """Outside mpirun a Communicator is a world of one."""
    c = tcc.Communicator(timeout=5)
    assert (c.rank, c.size, c.local_rank) == (0, 1, 0)
    assert c.sum([1.5, -2.0]) == [1.5, -2.0]


MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
          "--mca", "btl", "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none"]

RANK_SCRIPT = """
import json, sys
import tcc
art = tcc.load(sys.argv[1])
comm = tcc.Communicator(timeout=60)
result = tcc.train(art, data=sys.argv[2], steps=20, lr=0.05, shuffle=False, threads=1,
                   communicator=comm)
if comm.rank == 0:
    json.dump({"size": comm.size, "losses": result.losses}, open(sys.argv[3], "w"))
"""


@pytest.mark.skipif(subprocess.run(["sh", "-c", "command -v mpirun"], capture_output=True)
                    .returncode != 0, reason="no mpirun (Open MPI)")
def test_train_data_parallel_under_mpirun(tcc_run_losses, tmp_path):
    """Two ranks at batch 8 through tcc.train(communicator=...): the single
    process's losses at batch 16 (tcc-run's), within rounding."""
    art = tcc.compile(PARITY / "model.onnx", tmp_path / "dp.so", loss="cross_entropy",
                      optimizer="sgd", momentum=0.9, batch=8, data_parallel=True)
    script = tmp_path / "rank.py"
    script.write_text(RANK_SCRIPT)
    out = tmp_path / "losses.json"
    subprocess.run(MPIRUN + ["-np", "2", os.sys.executable, str(script), art.path,
                             str(PARITY / "data"), str(out)], check=True, capture_output=True,
                   timeout=300)
    got = json.loads(out.read_text())
    assert got["size"] == 2
    np.testing.assert_allclose(got["losses"], tcc_run_losses[:20], rtol=1e-5)


def test_concurrent_runs_on_one_session_see_their_own_outputs(sgd, data):
    """Four threads call s.run("infer") on one session with inputs of their
    own: each gets its own logits (another thread's set_input could land
    between a run and its copy_output)."""
    import threading
    s = sgd.session(threads=1)
    batch = sgd.inputs("infer")[0].shape[0]
    xs = [data["x"][k * batch:(k + 1) * batch] for k in range(4)]
    expected = [s.run("infer", x=x)["logits"] for x in xs]
    assert not np.array_equal(expected[0], expected[1])
    wrong = []

    def work(k):
        for _ in range(150):
            out = s.run("infer", x=xs[k])["logits"]
            if not np.array_equal(out, expected[k]):
                wrong.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


def test_a_failed_train_releases_its_checkpoint_folder(sgd, data, tmp_path):
    """A callback that raises ends tcc.train with its exception, and the
    checkpoint folder is free at once for the resume (the trainer, alive in
    the traceback, kept its lock: "in use by another tcc-run")."""
    folder = tmp_path / "ck"

    def boom(info):
        if info["step"] == 3:
            raise KeyError("stop here")

    with pytest.raises(KeyError):
        tcc.train(sgd, data, steps=6, lr=0.05, checkpoint_dir=folder, save_every=2,
                  callback=boom)
    result = tcc.train(sgd, data, steps=6, lr=0.05, checkpoint_dir=folder,
                       resume=folder / "checkpoint.safetensors")
    assert result.steps_done == 6


def test_labels_that_name_no_class_are_refused(sgd, data):
    """As PyTorch refuses them: before, they added nothing to the loss but
    counted in its mean, and the update was applied."""
    s = sgd.session()
    batch = sgd.inputs("train_step")[0].shape[0]
    y = data["y"][:batch].copy()
    y[2] = 70
    before = s.params()
    with pytest.raises(tcc.Error, match="label 70 at position 2 is not a class"):
        s.run("train_step", x=data["x"][:batch], y=y, lr=np.float32(0.05))
    after = s.params()
    assert all(np.array_equal(before[k], after[k]) for k in before)


def test_load_params_takes_a_checkpoint(sgd, data, tmp_path):
    """load_params of a checkpoint takes its parameters and leaves the
    optimizer state (it refused: "... is not a parameter")."""
    s = sgd.session()
    batch = sgd.inputs("train_step")[0].shape[0]
    s.run("train_step", x=data["x"][:batch], y=data["y"][:batch], lr=np.float32(0.05))
    s.save_checkpoint(tmp_path / "ck.safetensors", {"step": "1"})
    fresh = sgd.session()
    fresh.load_params(tmp_path / "ck.safetensors")
    trained, loaded = s.params(), fresh.params()
    assert all(np.array_equal(trained[k], loaded[k]) for k in trained)


def test_evaluate_counts_every_sample_once(sgd, data, tmp_path):
    """tcc.evaluate over 250 samples at batch 16 (15 full batches and a
    partial one of 10): the sums over eval_step run by hand, batch by batch
    (the loss within 1e-12, the counts exact); the same from a folder, from
    an artifact, and from tcc-run evaluate."""
    trained = tcc.train(sgd, data=data, steps=10, lr=0.05).session
    x, y = data["x"][:250], data["y"][:250]
    got = tcc.evaluate(trained, {"x": x, "y": y})
    batch = sgd.inputs("eval_step")[0].shape[0]
    scores = next(t.name for t in sgd.outputs("eval_step") if t.name != "loss")
    loss_sum, correct = 0.0, 0
    for start in range(0, 250, batch):
        out = trained.run("eval_step", x=x[start:start + batch], y=y[start:start + batch])
        n = len(out[scores])
        loss_sum += float(out["loss"]) * n
        correct += int((out[scores].argmax(1) == y[start:start + n]).sum())
    assert got["samples"] == 250 and got["skipped"] == 0
    assert abs(got["loss"] - loss_sum / 250) <= 1e-12 * abs(got["loss"])
    assert (got["correct"], got["counted"]) == (correct, 250)
    assert got["accuracy"] == correct / 250
    folder = tmp_path / "val"
    folder.mkdir()
    np.save(folder / "x.npy", x)
    np.save(folder / "y.npy", y)
    assert tcc.evaluate(trained, folder) == got
    # An artifact: a new session with the parameters beside it.
    fresh = tcc.evaluate(sgd, folder, threads=1)
    assert fresh == tcc.evaluate(sgd.session(), folder) and fresh["loss"] != got["loss"]
    trained.save_params(tmp_path / "w.safetensors")
    subprocess.run([tcc._tool("tcc-run"), "evaluate", sgd.path, "--data", str(folder), "--params",
                    str(tmp_path / "w.safetensors"), "--metrics", str(tmp_path / "m.json")],
                   check=True, capture_output=True)
    assert json.loads((tmp_path / "m.json").read_text()) == got


def test_predict_returns_every_row(sgd):
    """tcc.predict over 1003 samples at batch 16 (62 full batches and one of
    11): infer run batch by batch by hand, concatenated, bit for bit."""
    s = sgd.session(threads=2)
    x = np.random.default_rng(7).normal(size=(1003, 32)).astype(np.float32)
    got = tcc.predict(s, x=x)
    want = {}
    for start in range(0, 1003, 16):
        for name, value in s.run("infer", x=x[start:start + 16]).items():
            want.setdefault(name, []).append(value)
    assert set(got) == set(want)
    for name in got:
        np.testing.assert_array_equal(got[name], np.concatenate(want[name]))
        assert len(got[name]) == 1003
    # An artifact and a dict: a new session with the same parameters.
    for name, value in tcc.predict(sgd, {"x": x}).items():
        np.testing.assert_array_equal(value, got[name])
    with pytest.raises(tcc.Error, match="infer takes the input"):
        tcc.predict(s, features=x)


def batches(data, count, batch=16):
    """COUNT batches of DATA in order, as tcc.train without shuffle takes them."""
    per_epoch = len(data["y"]) // batch
    for k in range(count):
        b = k % per_epoch
        yield {n: a[b * batch:(b + 1) * batch] for n, a in data.items()}


def test_train_from_a_generator(sgd, data, tmp_path):
    """tcc.train from a generator of batches takes the steps of tcc.train on
    the same arrays in the same order (equal float32 losses and parameters);
    a generator that ends first ends the run after its last step; a resume
    discards the batches of the checkpoint's steps."""
    arrays = tcc.train(sgd, data=data, steps=20, lr=0.05, shuffle=False, schedule="cosine")
    streamed = tcc.train(sgd, data=batches(data, 20), steps=20, lr=0.05, schedule="cosine")
    assert streamed.steps_done == 20
    assert streamed.losses == arrays.losses
    for name, value in arrays.session.params().items():
        np.testing.assert_array_equal(streamed.session.params()[name], value)
    short = tcc.train(sgd, data=batches(data, 7), steps=20, lr=0.05, schedule="cosine")
    assert short.steps_done == 7 and short.losses == arrays.losses[:7]
    ckpt = tmp_path / "ckpt"
    first = tcc.train(sgd, data=batches(data, 20), steps=20, lr=0.05, schedule="cosine",
                      checkpoint_dir=ckpt, callback=lambda info: info["step"] == 9)
    rest = tcc.train(sgd, data=batches(data, 20), steps=20, lr=0.05, schedule="cosine",
                     checkpoint_dir=ckpt, resume=ckpt / "checkpoint.safetensors")
    assert first.losses + rest.losses == arrays.losses


def test_train_from_a_generator_with_accumulation(data, tmp_path):
    """With 2 micro-batches per step a generator's batches are the arrays'
    micro-batches in order; one that ends inside a step leaves it out."""
    art = tcc.compile(PARITY / "model.onnx", tmp_path / "accum.so", loss="cross_entropy",
                      optimizer="sgd", batch=8, grad_accum=2)
    arrays = tcc.train(art, data=data, steps=6, lr=0.05, shuffle=False)
    streamed = tcc.train(art, data=batches(data, 12, batch=8), steps=6, lr=0.05)
    assert streamed.losses == arrays.losses
    short = tcc.train(art, data=batches(data, 7, batch=8), steps=6, lr=0.05)
    assert short.steps_done == 3 and short.losses == arrays.losses[:3]


def test_train_from_a_generator_refuses_bad_batches(sgd, data):
    def failing():
        yield from batches(data, 2)
        raise ValueError("the source broke")

    with pytest.raises(ValueError, match="the source broke"):
        tcc.train(sgd, data=failing(), steps=5, lr=0.05)
    half = ({"x": b["x"][:8], "y": b["y"][:8]} for b in batches(data, 3))
    with pytest.raises(tcc.Error, match="micro-batch 0: input '.*' is .*exactly one batch"):
        tcc.train(sgd, data=half, steps=3, lr=0.05)
    with pytest.raises(tcc.Error, match="no array for input 'y'"):
        tcc.train(sgd, data=({"x": b["x"]} for b in batches(data, 3)), steps=3, lr=0.05)
    with pytest.raises(ValueError, match="has its own order"):
        tcc.train(sgd, data=batches(data, 3), steps=3, lr=0.05, shuffle=True)


def test_train_for_epochs(sgd, data):
    """epochs=2 over 256 samples at batch 16 is the run of steps=32."""
    by_epochs = tcc.train(sgd, data, epochs=2, lr=0.05, shuffle=False)
    by_steps = tcc.train(sgd, data, steps=32, lr=0.05, shuffle=False)
    assert by_epochs.steps_done == 32
    assert [h["loss"] for h in by_epochs.history] == [h["loss"] for h in by_steps.history]


def test_filter_layouts_keep_parameters_exact(tmp_path, monkeypatch):
    """A CNN whose filters the runtime keeps in oneDNN's blocked layouts
    (test/e2e/Inputs/filter_layouts.tcc): set_params / params convert at the
    edge (a round trip of random values is exact), and a training step gives
    the same loss and parameters, bit for bit, as with every filter plain."""
    art = tcc.compile(REPO / "test" / "e2e" / "Inputs" / "filter_layouts.tcc",
                      tmp_path / "cnn.so", batch=8)
    rng = np.random.default_rng(5)
    values = {name: rng.standard_normal(value.shape).astype(value.dtype)
              for name, value in art.session().params().items()}
    x = rng.uniform(-1, 1, (8, 192)).astype(np.float32)
    y = rng.integers(0, 10, 8).astype(np.int64)
    results = {}
    for mode in ("plain", "kept"):
        monkeypatch.setenv("TCC_FILTER_LAYOUTS", mode)
        s = art.session(threads=1)
        s.set_params(values)
        for name, value in s.params().items():
            np.testing.assert_array_equal(value, values[name], err_msg=f"{mode}: {name}")
        out = s.run("train_step", x=x, y=y, lr=np.float32(0.01), step=np.float32(1))
        results[mode] = (float(out["loss"]), s.params())
    assert results["kept"][0] == results["plain"][0]
    for name, value in results["plain"][1].items():
        np.testing.assert_array_equal(results["kept"][1][name], value, err_msg=name)
