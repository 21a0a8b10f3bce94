#!/usr/bin/env python3
"""Fault injection for tcc-run (test/faults/*.test). Standard library only;
runs under the Python that runs lit.

Every command takes TCC_RUN (the binary), MODEL (a training artifact), DATA (its
data folder, NAME.npy per input) and WORK (an empty scratch folder), and prints one
"OK: ..." line or exits 1 saying what went wrong.

  faults.py kill9 TCC_RUN MODEL DATA WORK STEPS KILLS SEED [-- TCC-RUN OPTIONS...]
      A reference run of STEPS steps, then the same run killed with SIGKILL
      KILLS times, each soon after a random step (SEED; checkpoints every
      step, so many kills land inside a checkpoint write) and resumed from its checkpoint
      each time: every checkpoint found must load, the final parameters must
      equal the reference bit for bit, the metrics file must equal the
      reference's line for line, and no temporary file may be left. The
      options after -- go to every run (augmentation, data workers).
  faults.py signal SIGNAL TCC_RUN MODEL DATA WORK
      Sends SIGNAL (TERM, HUP, INT) to a long run after a few steps: exit
      status 1, the message, a checkpoint of the step it names, metrics up to
      it, and a resumed run continuing from there. Before it, a second run
      into the same checkpoint folder is refused (the folder is locked).
  faults.py sweep SIGNAL TCC_RUN MODEL DATA WORK STEPS
      Sends SIGNAL (TERM, HUP, INT) to `tcc-run sweep` of 6 learning rates,
      2 at a time, of STEPS steps each, once 2 trials have finished: exit
      status 1 within 60 s, the message, WORK/r.jsonl holding whole lines of
      the finished trials (all steps, as the sweep printed them) and of the
      interrupted ones (an error naming the signal), none of trials that
      never started, and no temporary file.
  faults.py shrink|rewrite TCC_RUN MODEL DATA WORK
      Truncates the largest .npy to half (shrink) or rewrites its bytes in place
      (rewrite) while a run reads it: exit status 1 with a message naming the
      file (a SIGBUS before), and a checkpoint of the steps done.
  faults.py diskfull TCC_RUN MODEL DATA WORK
      A checkpoint write that fails (the file size limit, RLIMIT_FSIZE, as a
      full disk): exit status 1 naming the file, the previous checkpoint
      intact and loadable, no temporary left; metrics to /dev/full: exit 1.
  faults.py outputsfull TCC_RUN MODEL DATA WORK
      --metrics and --tensorboard on a disk that fills up mid-run (the file
      size limit, RLIMIT_FSIZE, with room for the checkpoint but not for the
      next metrics line): exit status 1 with a checkpoint of the step whose
      line failed; resumed, the metrics file equals an uninterrupted run's
      line for line and the event files hold every step's train/loss.
  faults.py setmeta FILE KEY VALUE
      Rewrites the safetensors FILE with __metadata__[KEY] = VALUE (a
      tampered or corrupted checkpoint).
  faults.py huge DIR N VALUE
      DIR/features.npy (N x 4 float32, +-VALUE: finite but huge) and
      DIR/y.npy (N int64 labels 0..2) for examples/mlp.onnxtxt.
  faults.py expect CODE SECONDS COMMAND...
      Runs COMMAND with a time limit; prints its stderr; fails unless it
      exits with CODE within SECONDS (a hang is a failure, not a pass).
"""
import glob
import json
import os
import random
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import time

# The repository's protobuf wire reader (scripts/protobuf_wire.py, standard
# library only): TensorBoard's event records.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "scripts"))
import protobuf_wire  # noqa: E402


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def checkpoint_metadata(path):
    """The __metadata__ of a safetensors file."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(n)).get("__metadata__", {})


def tensor_bytes(path):
    """Every tensor's name, dtype, shape and bytes (not the metadata)."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        out[name] = (info["dtype"], tuple(info["shape"]), blob[8 + n + begin:8 + n + end])
    return out


def temporaries(folder):
    return glob.glob(os.path.join(folder, ".*.tmp.*"))


def train_args(tcc_run, model, data, steps):
    return [tcc_run, model, "--data", data, "--steps", str(steps), "--lr", "0.05",
            "--seed", "7", "--log-every", "1000000"]


def lines(path):
    try:
        with open(path) as f:
            return f.read().count("\n")
    except FileNotFoundError:
        return 0


def wait_for_lines(path, count, proc, seconds=60):
    """Waits until PATH holds COUNT lines (the run took that many steps)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            fail("the run ended early (status %d): %s" % (proc.returncode, proc.stderr.read()))
        if lines(path) >= count:
            return
        time.sleep(0.02)
    proc.kill()
    fail("the run took no %d steps in %d s" % (count, seconds))


def kill9(tcc_run, model, data, work, steps, kills, seed, *extra):
    steps, kills = int(steps), int(kills)
    rng = random.Random(int(seed))
    ref = os.path.join(work, "ref")
    base = (train_args(tcc_run, model, data, steps) + ["--save-every", "1"] +
            [a for a in extra if a != "--"])
    subprocess.run(base + ["--checkpoint-dir", ref, "--metrics", ref + ".jsonl",
                           "--save", ref + ".safetensors"],
                   check=True, stdout=subprocess.DEVNULL)

    victim = os.path.join(work, "victim")
    checkpoint = os.path.join(victim, "checkpoint.safetensors")
    args = base + ["--checkpoint-dir", victim, "--metrics", victim + ".jsonl",
                   "--save", victim + ".safetensors"]
    # Until the run completes: each start (resuming once a checkpoint exists)
    # is killed soon after its metrics reach the next of KILLS random steps,
    # so the kills land inside training and often inside a checkpoint write.
    targets = sorted(rng.randrange(1, steps) for _ in range(kills))
    killed = mid_write = resumed = 0
    while True:
        resume = ["--resume", checkpoint] if os.path.exists(checkpoint) else []
        resumed += bool(resume)
        proc = subprocess.Popen(args + resume, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        if targets:
            target = targets.pop(0)
            while proc.poll() is None and lines(victim + ".jsonl") < target:
                time.sleep(0.001)
            time.sleep(rng.uniform(0, 0.003))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                killed += 1
                mid_write += bool(temporaries(victim))
                continue
        _, err = proc.communicate()
        if proc.returncode != 0:
            fail("a resumed run failed (status %d): %s" % (proc.returncode, err))
        if not targets:
            break
    if tensor_bytes(victim + ".safetensors") != tensor_bytes(ref + ".safetensors"):
        fail("the parameters after %d kills differ from the uninterrupted run's" % killed)
    with open(ref + ".jsonl") as a, open(victim + ".jsonl") as b:
        if a.read() != b.read():
            fail("the metrics after %d kills differ from the uninterrupted run's" % killed)
    if temporaries(victim):
        fail("temporary files left: %s" % temporaries(victim))
    if killed < kills // 2:
        fail("only %d of %d kills landed before the run ended" % (killed, kills))
    print("OK: %d kills (%d inside a checkpoint write), %d resumes; parameters and metrics "
          "bitwise equal to the uninterrupted run" % (killed, mid_write, resumed))


def stop_with(proc, name, what):
    """Sends SIG<NAME> to PROC and returns its (stdout, stderr); fails unless
    it exits with status 1 within 60 s."""
    proc.send_signal(getattr(signal, "SIG" + name))
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        fail("SIG%s did not stop %s within 60 s" % (name, what))
    if proc.returncode != 1:
        fail("SIG%s: exit status %d, expected 1: %s" % (name, proc.returncode, err))
    return out, err


def signal_run(name, tcc_run, model, data, work):
    folder = os.path.join(work, "ck")
    metrics = os.path.join(work, "m.jsonl")
    args = train_args(tcc_run, model, data, 1000000) + ["--checkpoint-dir", folder,
                                                         "--metrics", metrics]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for_lines(metrics, 5, proc)
    # The folder is locked while the run lasts.
    second = subprocess.run(train_args(tcc_run, model, data, 5) +
                            ["--checkpoint-dir", folder, "--overwrite"],
                            capture_output=True, text=True, timeout=60)
    if second.returncode != 1 or "in use by another tcc-run" not in second.stderr:
        fail("a second run into the folder: exit status %d: %s" % (second.returncode,
                                                                   second.stderr))
    _, err = stop_with(proc, name, "the run")
    expected = "interrupted (SIG%s) at step " % name
    if expected not in err:
        fail("SIG%s: no '%s' in: %s" % (name, expected, err))
    step = int(err.split(expected)[1].split(";")[0])
    meta = checkpoint_metadata(os.path.join(folder, "checkpoint.safetensors"))
    if meta.get("step") != str(step):
        fail("the checkpoint holds step %s, the message says %d" % (meta.get("step"), step))
    with open(metrics) as f:
        lines = f.read().splitlines()
    if len(lines) != step or json.loads(lines[-1])["step"] != step:
        fail("the metrics hold %d lines, the run stopped after step %d" % (len(lines), step))
    out = subprocess.run(train_args(tcc_run, model, data, step + 3) +
                         ["--checkpoint-dir", folder, "--metrics", metrics,
                          "--resume", os.path.join(folder, "checkpoint.safetensors")],
                         capture_output=True, text=True)
    if out.returncode != 0 or "resumed from" not in out.stdout:
        fail("the resumed run failed: %s" % out.stderr)
    with open(metrics) as f:
        if len(f.read().splitlines()) != step + 3:
            fail("the resumed run's metrics do not continue the interrupted run's")
    print("OK: SIG%s stopped the run at step %d with a checkpoint; resumed" % (name, step))


def sweep_signal(name, tcc_run, model, data, work, steps):
    steps = int(steps)
    out = os.path.join(work, "r.jsonl")
    proc = subprocess.Popen([tcc_run, "sweep", model, "--data", data, "--steps", str(steps),
                             "--lr", "0.001,0.002,0.003,0.004,0.005,0.006", "--jobs", "2",
                             "--threads", "1", "--trial-dir", os.path.join(work, "trials"),
                             "--out", out],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # "trial N (lr ..., seed 0): step S loss L" as each trial ends.
    finished = {}
    deadline = time.time() + 120
    while len(finished) < 2:
        line = proc.stdout.readline()
        if not line or time.time() > deadline:
            proc.kill()
            fail("the sweep ended or stalled before 2 trials finished: %s" % proc.stderr.read())
        if line.startswith("trial "):
            finished[int(line.split()[1])] = line
    rest, err = stop_with(proc, name, "the sweep")
    if "sweep interrupted (SIG%s)" % name not in err or out not in err:
        fail("SIG%s: the message does not say so and name %s: %s" % (name, out, err))
    if not os.path.exists(out):
        fail("SIG%s: no %s" % (name, out))
    with open(out) as f:
        results = [json.loads(line) for line in f]
    by_trial = {r["trial"]: r for r in results}
    if [r["trial"] for r in results] != sorted(by_trial):
        fail("the results are not one line per trial in trial order: %s" % results)
    for k, line in finished.items():
        r = by_trial.get(k)
        if not r or r["steps"] != steps or "error" in r:
            fail("finished trial %d (%s) is not in %s as it ran: %s" % (k, line.strip(), out, r))
    interrupted = [r for r in results if "error" in r]
    for r in interrupted:
        if not r["error"].startswith("interrupted (SIG%s) at step " % name) or r["steps"] >= steps:
            fail("trial %d: %s" % (r["trial"], r))
    if len(results) - len(interrupted) > len(finished) + 2:
        fail("more trials ran after the signal: %s" % results)
    if len(results) == 6 and not interrupted:
        fail("every trial finished before the signal; make the trials longer")
    left = glob.glob(out + ".tmp.*")
    if left:
        fail("temporary files left: %s" % left)
    print("OK: SIG%s stopped the sweep after %d finished trials; %s holds them and %d "
          "interrupted trial(s)" % (name, len(finished), os.path.basename(out), len(interrupted)))


def change_data(mode, tcc_run, model, data, work):
    copy = os.path.join(work, "data")
    shutil.copytree(data, copy)
    folder = os.path.join(work, "ck")
    metrics = os.path.join(work, "m.jsonl")
    proc = subprocess.Popen(train_args(tcc_run, model, copy, 1000000) +
                            ["--checkpoint-dir", folder, "--metrics", metrics],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for_lines(metrics, 3, proc)
    # The largest data file (the features).
    x = max(glob.glob(os.path.join(copy, "*.npy")), key=os.path.getsize)
    size = os.path.getsize(x)
    if mode == "shrink":
        os.truncate(x, size // 2)
    else:
        with open(x, "r+b") as f:
            f.seek(size - 64)
            f.write(bytes(64))
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        fail("changing %s did not stop the run" % x)
    if proc.returncode != 1:
        fail("exit status %d (%s), expected 1: %s" % (
            proc.returncode,
            signal.Signals(-proc.returncode).name if proc.returncode < 0 else "",
            err))
    what = "shrank" if mode == "shrink" else "changed"
    if x not in err or what not in err or "checkpoint of step" not in err:
        fail("the message does not name %s, say it %s and where the checkpoint went: %s" %
             (x, what, err))
    step = checkpoint_metadata(os.path.join(folder, "checkpoint.safetensors"))["step"]
    print("OK: %s %s during the run: exit 1, checkpoint of step %s" % (
        os.path.basename(x), "truncated" if mode == "shrink" else "rewritten", step))
    print("stderr: " + err.strip())


def diskfull(tcc_run, model, data, work):
    folder = os.path.join(work, "ck")
    checkpoint = os.path.join(folder, "checkpoint.safetensors")
    subprocess.run(train_args(tcc_run, model, data, 5) + ["--checkpoint-dir", folder],
                   check=True, stdout=subprocess.DEVNULL)
    before = open(checkpoint, "rb").read()
    limit = len(before) // 2

    def limited():
        # As a full disk: writes past LIMIT bytes fail with EFBIG (the
        # signal that would kill the process instead is ignored).
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    out = subprocess.run(train_args(tcc_run, model, data, 8) +
                         ["--checkpoint-dir", folder, "--resume", checkpoint],
                         capture_output=True, text=True, preexec_fn=limited)
    if out.returncode != 1 or "checkpoint.safetensors" not in out.stderr:
        fail("a failed checkpoint write: exit status %d, expected 1 naming the file: %s" %
             (out.returncode, out.stderr))
    if open(checkpoint, "rb").read() != before:
        fail("the previous checkpoint changed")
    if temporaries(folder):
        fail("temporary files left: %s" % temporaries(folder))
    out2 = subprocess.run(train_args(tcc_run, model, data, 6) +
                          ["--checkpoint-dir", folder, "--resume", checkpoint],
                          capture_output=True, text=True)
    if out2.returncode != 0:
        fail("the previous checkpoint does not resume: %s" % out2.stderr)
    full = subprocess.run(train_args(tcc_run, model, data, 5) + ["--metrics", "/dev/full"],
                          capture_output=True, text=True)
    if full.returncode != 1 or "/dev/full: write failed: No space left on device" not in full.stderr:
        fail("--metrics /dev/full: exit status %d: %s" % (full.returncode, full.stderr))
    print("OK: a full disk fails the write with exit 1 and keeps the previous checkpoint")
    print("stderr: " + out.stderr.strip())


def loss_steps(folder):
    """The steps of every train/loss scalar in FOLDER's event files (Event:
    step = 2, summary = 5; Summary.value = 1; Value: tag = 1)."""
    steps = []
    for path in sorted(glob.glob(os.path.join(folder, "events.out.tfevents.*"))):
        data, at = open(path, "rb").read(), 0
        while at + 12 <= len(data):
            (length,) = struct.unpack("<Q", data[at:at + 8])
            if at + 16 + length > len(data):
                break  # cut short by the full disk
            record = data[at + 12:at + 12 + length]
            at += 16 + length
            step, tags = 0, []
            for number, _, value in protobuf_wire.fields(record):
                if number == 2:
                    step = value
                elif number == 5:
                    for n, _, v in protobuf_wire.fields(value):
                        if n == 1:
                            tags += [t for k, _, t in protobuf_wire.fields(v) if k == 1]
            if b"train/loss" in tags:
                steps.append(step)
    return steps


def outputsfull(tcc_run, model, data, work):
    steps, stop = 70, 60
    # (The event file grows faster than the metrics: it may fill the disk
    # first, at an earlier step; the step the run stopped at is read back.)
    ref = os.path.join(work, "ref.jsonl")
    subprocess.run(train_args(tcc_run, model, data, steps) + ["--metrics", ref],
                   check=True, stdout=subprocess.DEVNULL)
    with open(ref) as f:
        reference = f.read().splitlines(True)
    # Room for STOP - 1 whole lines and a part of the next.
    limit = sum(len(l) for l in reference[:stop - 1]) + 20
    folder = os.path.join(work, "ck")
    metrics = os.path.join(work, "m.jsonl")
    events = os.path.join(work, "tb")

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    extra = ["--checkpoint-dir", folder, "--save-every", "5", "--metrics", metrics,
             "--tensorboard", events]
    out = subprocess.run(train_args(tcc_run, model, data, steps) + extra, capture_output=True,
                         text=True, preexec_fn=limited)
    found = re.search(r"checkpoint of step (\d+) written", out.stderr)
    if out.returncode != 1 or not found or int(found.group(1)) % 5 == 0:
        fail("outputs on a full disk: exit status %d, expected 1 and a checkpoint of a step "
             "between --save-every's: %s" % (out.returncode, out.stderr))
    stop = int(found.group(1))
    out2 = subprocess.run(train_args(tcc_run, model, data, steps) + extra +
                          ["--resume", os.path.join(folder, "checkpoint.safetensors")],
                          capture_output=True, text=True)
    if out2.returncode != 0:
        fail("the resumed run failed: %s" % out2.stderr)
    with open(metrics) as f:
        got = f.read().splitlines(True)
    if got != reference:
        fail("the resumed metrics differ from an uninterrupted run's:\n%s" %
             "".join(l for l in got if l not in reference))
    loss = sorted(set(loss_steps(events)))
    if loss != list(range(1, steps + 1)):
        fail("the event files' train/loss steps: %s" % loss)
    print("OK: a full disk stopped the run at step %d; resumed, the metrics equal an "
          "uninterrupted run's and the events hold every step" % stop)


def setmeta(path, key, value):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    header.setdefault("__metadata__", {})[key] = value
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + blob[8 + n:])


def huge(folder, n, value):
    n, value = int(n), float(value)
    os.makedirs(folder, exist_ok=True)
    for name, descr, shape, values in (
            ("features", "<f4", (n, 4), [value if (i * 7) % 3 else -value for i in range(n * 4)]),
            ("y", "<i8", (n,), [(i + 2) % 3 for i in range(n)])):
        dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
        header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
        header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
        with open(os.path.join(folder, name + ".npy"), "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
            f.write(struct.pack("<%d%s" % (len(values), {"<f4": "f", "<i8": "q"}[descr]), *values))


def expect(code, seconds, command):
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=float(seconds))
    except subprocess.TimeoutExpired:
        fail("%s did not finish in %s s (a hang)" % (command[0], seconds))
    sys.stdout.write(out.stderr)
    if out.returncode != int(code):
        fail("exit status %d, expected %s" % (out.returncode, code))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "kill9":
        kill9(*args)
    elif cmd == "signal":
        signal_run(*args)
    elif cmd == "sweep":
        sweep_signal(*args)
    elif cmd in ("shrink", "rewrite"):
        change_data(cmd, *args)
    elif cmd == "diskfull":
        diskfull(*args)
    elif cmd == "outputsfull":
        outputsfull(*sys.argv[2:6])
    elif cmd == "setmeta":
        setmeta(*args)
    elif cmd == "huge":
        huge(*args)
    elif cmd == "expect":
        expect(args[0], args[1], args[2:])
    else:
        fail("unknown command " + cmd)


if __name__ == "__main__":
    main()
