"""tcc - an ahead-of-time compiler for training neural networks, from Python.

    import tcc, numpy as np
    art = tcc.compile("model.onnx", "train.so", loss="cross_entropy", optimizer="sgd", momentum=0.9)
    s = art.session(threads=2)
    out = s.run("train_step", x=xb, y=yb, lr=np.float32(0.05))   # {"loss": array(...), ...}
    result = tcc.train(art, data="dir/", steps=1000, lr=3e-4, schedule="cosine")
    tcc.evaluate(result.session, "test/")      # {"loss": ..., "accuracy": ..., "samples": ...}
    tcc.predict(result.session, features=x)    # {"logits": array of len(x) rows}

`compile` runs the tcc compiler installed with this package (a subprocess);
everything else calls libtcc_runtime through the nanobind module `tcc._tcc`.
Training is the runtime's trainer, the loop that tcc-run runs, so both take
the same steps; evaluation is the trainer's validation pass, as tcc-run
evaluate runs it. Failures raise `tcc.Error` with the runtime's message.
"""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import (Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence,
                    Union)

import numpy as np

from . import _tcc
from . import torch_export as _torch_export
from ._tcc import Error

__all__ = ["Error", "CompileError", "Artifact", "Session", "TrainResult", "Communicator",
           "TrainerOption", "TRAINER_OPTIONS", "compile", "load", "train", "evaluate", "predict",
           "runtime_version"]
__version__ = "0.1.0"

# tcc_dtype codes (abi.h) <-> NumPy. bf16 travels as its uint16 bit patterns.
_DTYPES = {1: np.float32, 2: np.float64, 3: np.float16, 4: np.uint16, 5: np.int8, 6: np.int16,
           7: np.int32, 8: np.int64, 9: np.uint8, 10: np.uint16, 11: np.uint32, 12: np.uint64,
           13: np.bool_}
_ROLES = {1: "input", 2: "output", 3: "param", 4: "state"}

_PACKAGE = Path(__file__).resolve().parent


class CompileError(RuntimeError):
    """tcc failed to compile a model; str() is the compiler's diagnostics."""


def runtime_version() -> str:
    """The version of the libtcc_runtime this package loaded."""
    return _tcc.runtime_version()


def _tool(name: str) -> str:
    """The path of the tool NAME installed with the package, else on PATH."""
    bundled = _PACKAGE / "bin" / name
    if bundled.is_file():
        return str(bundled)
    found = shutil.which(name)
    if not found:
        raise FileNotFoundError(f"{name}: not installed with the tcc package and not on PATH")
    return found


def _flags(options: Mapping[str, Any]) -> List[str]:
    """Keyword options as tcc flags: momentum=0.9 -> --momentum=0.9, remat=True
    -> --remat, freeze=["a", "b"] -> --freeze=a --freeze=b (None and False: left out)."""
    out = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            out.append(flag)
        elif isinstance(value, (list, tuple)):
            out.extend(f"{flag}={v}" for v in value)
        else:
            out.append(f"{flag}={value}")
    return out


@dataclass(frozen=True)
class TensorInfo:
    """One tensor of the artifact's descriptor."""
    name: str
    role: str  # "input", "output", "state" or "param"
    dtype: np.dtype
    shape: tuple
    nbytes: int
    code: int  # the tcc_dtype (abi.h)


class Artifact:
    """A compiled model (train.so), loaded and validated."""

    def __init__(self, path: Union[str, os.PathLike]):
        self.path = os.fspath(path)
        self._impl = _tcc.Artifact(self.path)
        self.tensors: List[TensorInfo] = [
            TensorInfo(n, _ROLES[r], np.dtype(_DTYPES[d]), tuple(s), b, d)
            for n, r, d, s, b in self._impl.tensors()]
        self.entries: Dict[str, List[TensorInfo]] = {
            name: [self.tensors[i] for i in indices]
            for name, indices in self._impl.entries().items()}

    @property
    def info(self) -> Dict[str, Any]:
        """path, abi_version, fingerprint, producer, target, device, arena and state sizes."""
        return self._impl.info()

    def metadata(self, key: str) -> Optional[str]:
        """The artifact's metadata KEY ("loss", "labels", "grad_accum", ...), or None."""
        return self._impl.metadata(key)

    @property
    def batch(self) -> Optional[int]:
        """The compiled batch when infer and eval_step take partial batches
        (1 to this many samples), else None (full batches only)."""
        value = self.metadata("batch")
        return int(value) if value is not None else None

    def inputs(self, entry: str) -> List[TensorInfo]:
        return [t for t in self._entry(entry) if t.role == "input"]

    def outputs(self, entry: str) -> List[TensorInfo]:
        return [t for t in self._entry(entry) if t.role == "output"]

    def params(self) -> List[TensorInfo]:
        return [t for t in self.tensors if t.role == "param"]

    def session(self, threads: int = 0, poison: bool = False,
                skip_default_params: bool = False) -> "Session":
        """A session with its own arena and parameters (loaded from the
        .safetensors beside the artifact unless skip_default_params).
        threads=0: every CPU this process may use."""
        return Session(self, threads, poison, skip_default_params)

    def _entry(self, entry: str) -> List[TensorInfo]:
        if entry not in self.entries:
            raise Error(f"{self.path}: no entry point '{entry}' (it has "
                        f"{', '.join(sorted(self.entries))})")
        return self.entries[entry]

    def __repr__(self) -> str:
        return f"tcc.Artifact({self.path!r}, entries={sorted(self.entries)})"


def _as_input(value: Any, t: TensorInfo) -> np.ndarray:
    """VALUE as the bytes of input T. A C-contiguous array of T's dtype is
    passed as it is (no copy); Python numbers and lists are converted to T's
    dtype; an array of another dtype is refused by the runtime (no silent
    casts of data)."""
    if isinstance(value, np.ndarray) or hasattr(value, "__dlpack__"):
        return np.ascontiguousarray(value)
    if isinstance(value, np.generic):
        return np.asarray(value)
    return np.asarray(value, dtype=t.dtype)


_CODES = {np.dtype(d): c for c, d in _DTYPES.items() if c != 4}


def _dtype_code(a: np.ndarray, declared: Optional[TensorInfo] = None) -> int:
    """The tcc dtype of A's elements: the declared one when they match (so
    uint16 bits pass for a bf16 input), else NumPy's."""
    if declared is not None and declared.dtype == a.dtype:
        return declared.code
    code = _CODES.get(a.dtype)
    if code is None:
        raise Error(f"arrays of dtype {a.dtype} have no tcc dtype")
    return code


class Session:
    """An artifact's arena and parameters: run entry points, read and set
    parameters, save and load checkpoints. Thread-safe: each call holds the
    session for its whole length (a run sets the inputs, runs and copies the
    outputs as one), so concurrent calls wait for each other."""

    def __init__(self, artifact: Artifact, threads: int = 0, poison: bool = False,
                 skip_default_params: bool = False):
        self.artifact = artifact
        self._impl = _tcc.Session(artifact._impl, threads, poison, skip_default_params)
        self._lock = threading.RLock()

    def run(self, entry: str, inputs: Optional[Mapping[str, Any]] = None,
            **kwargs: Any) -> Dict[str, np.ndarray]:
        """Sets the inputs (by name, as keywords or a dict), runs ENTRY and
        returns its outputs, name -> a new array (e.g. "loss", "grad_norm").
        infer and eval_step also take a partial batch (1 to the compiled
        batch samples) when the artifact allows it (Artifact.batch); its
        outputs then hold those samples only. The optimizer's hyperparameter
        inputs may be left out: they then take the values the artifact was
        compiled with."""
        given = dict(inputs or {}, **kwargs)
        # "valid" (eval_step's count of real samples) is the runtime's.
        declared = {t.name: t for t in self.artifact.inputs(entry) if t.name != "valid"}
        # The optimizer's hyperparameters (weight_decay, beta1, ...) default
        # to their compile-time values in the runtime itself.
        defaulted = {n for n in declared
                     if self.artifact.metadata("default." + n) is not None
                     or n in ("one_minus_beta1", "one_minus_beta2")}
        missing = [n for n in declared if n not in given and n not in defaulted]
        if missing:
            raise Error(f"{self.artifact.path}: entry '{entry}' needs input(s) "
                        f"{', '.join(missing)}")
        arrays = {}
        for name, value in given.items():
            t = declared.get(name)
            if t is None:
                raise Error(f"{self.artifact.path}: entry '{entry}' has no input '{name}' (its "
                            f"inputs: {', '.join(declared)})")
            arrays[name] = (_as_input(value, t), t)
        out = {}
        with self._lock:
            for name, (a, t) in arrays.items():
                self._impl.set_input(name, _dtype_code(a, t), list(a.shape), a)
            self._impl.run(entry)
            for t in self.artifact.outputs(entry):
                buffer = np.empty(self._impl.output_shape(t.name), dtype=t.dtype)
                self._impl.copy_output(t.name, buffer)
                out[t.name] = buffer
        return out

    def params(self) -> Dict[str, np.ndarray]:
        """A copy of every parameter, name -> array, in descriptor order."""
        out = {}
        with self._lock:
            for t in self.artifact.params():
                buffer = np.empty(t.shape, dtype=t.dtype)
                self._impl.get_param(t.name, buffer)
                out[t.name] = buffer
        return out

    def set_params(self, params: Mapping[str, Any]) -> None:
        """Replaces the named parameters (each of its declared dtype and shape)."""
        declared = {t.name: t for t in self.artifact.params()}
        for name, value in params.items():
            t = declared.get(name)
            if t is None:
                raise Error(f"{self.artifact.path}: no parameter '{name}'")
            a = _as_input(value, t)
            with self._lock:
                self._impl.set_param(name, _dtype_code(a, t), list(a.shape), a)

    def save_params(self, path: Union[str, os.PathLike]) -> None:
        with self._lock:
            self._impl.save_params(os.fspath(path))

    def load_params(self, path: Union[str, os.PathLike]) -> None:
        with self._lock:
            self._impl.load_params(os.fspath(path))

    def save_checkpoint(self, path: Union[str, os.PathLike],
                        metadata: Optional[Mapping[str, str]] = None) -> None:
        """Parameters, optimizer state and METADATA, written atomically."""
        with self._lock:
            self._impl.save_checkpoint(os.fspath(path), dict(metadata or {}))

    def load_checkpoint(self, path: Union[str, os.PathLike]) -> None:
        with self._lock:
            self._impl.load_checkpoint(os.fspath(path))


def checkpoint_metadata(path: Union[str, os.PathLike], key: str) -> Optional[str]:
    """The metadata KEY of a checkpoint file ("step", ...), or None."""
    return _tcc.checkpoint_metadata(os.fspath(path), key)


def compile(model: Any, output: Any, *more: Any, **flags: Any) -> Artifact:
    """Compiles MODEL (.onnx, .onnxtxt) into OUTPUT (.so, with its
    .safetensors beside it) with the installed tcc, any tcc flag as a keyword
    (loss="cross_entropy", optimizer="sgd", momentum=0.9, batch=64, ...), and
    loads it. Raises CompileError with tcc's diagnostics.

    compile(module, example_inputs, output, **flags) takes a torch.nn.Module
    instead (torch imported only then): tcc.torch_export exports it for
    training (OUTPUT with the suffix .onnx beside it; input_names= and
    output_names= name the graph's inputs and outputs; with batch=N the
    export's first dimension is symbolic and N binds it, else the example
    inputs' shapes are compiled) and compiles that."""
    if _torch_export.is_module(model):
        if len(more) != 1:
            raise TypeError("tcc.compile(module, example_inputs, output, **flags)")
        names = {k: flags.pop(k) for k in ("input_names", "output_names") if k in flags}
        model = _torch_export.export_for_training(
            model, output, os.path.splitext(os.fspath(more[0]))[0] + ".onnx",
            dynamic_batch="batch" in flags, **names)
        output = more[0]
    elif more:
        raise TypeError("tcc.compile(model_file, output, **flags) takes no third argument")
    command = [_tool("tcc"), os.fspath(model), "-o", os.fspath(output)] + _flags(flags)
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise CompileError(done.stderr.strip() or f"tcc exited with {done.returncode}")
    return Artifact(output)


def load(path: Union[str, os.PathLike]) -> Artifact:
    """Loads a compiled artifact."""
    return Artifact(path)


@dataclass
class TrainResult:
    """What tcc.train did: the trained session and one dict per step (step,
    loss, lr, and grad_norm / val_loss / val_accuracy where present)."""
    session: Session
    history: List[Dict[str, float]] = field(default_factory=list)
    steps_done: int = 0

    @property
    def losses(self) -> List[float]:
        return [h["loss"] for h in self.history]


class Communicator:
    """The data-parallel job this process belongs to: under ``mpirun -np N``
    (or srun) with several processes, the ranks of that job, joined through
    MPI (loaded only then); otherwise a world of one. Give it to
    :func:`train` (``communicator=``) to train an artifact compiled with
    ``--data-parallel`` on every rank: each rank trains on its shard of
    every global batch, rank 0 alone prints and writes (docs/distributed.md).
    TIMEOUT: seconds any collective waits for the other ranks (0: 60)."""

    def __init__(self, timeout: float = 0.0):
        self._impl = _tcc.Communicator(float(timeout))

    @property
    def rank(self) -> int:
        return self._impl.rank

    @property
    def size(self) -> int:
        return self._impl.size

    @property
    def local_rank(self) -> int:
        return self._impl.local_rank

    def sum(self, values: Sequence[float]) -> List[float]:
        """The sums over the ranks of VALUES (every rank must call it)."""
        return list(self._impl.sum([float(v) for v in values]))


def _arrays(data: Mapping[str, Any]) -> list:
    """A data set given as arrays, name -> array (samples first), as the
    module's (name, dtype code, array) triples; C-contiguous arrays are
    borrowed, not copied."""
    out = []
    for name, value in data.items():
        a = np.ascontiguousarray(value)
        out.append((name, _dtype_code(a), a))
    return out


def _batch_source(batches: Iterable[Mapping[str, Any]]) -> Iterator[list]:
    """The batches of an iterable, each a dict name -> array of one compiled
    batch, as lists of the module's (name, dtype code, array) triples."""
    for k, batch in enumerate(batches):
        if not isinstance(batch, Mapping):
            raise TypeError(f"tcc.train: batch {k} of the data is a {type(batch).__name__}, "
                            "not a dict name -> array")
        yield _arrays(batch)


@dataclass(frozen=True)
class TrainerOption:
    """One option of the trainer, a row of trainer_options.def: the C field
    and keyword NAME, KIND (Text, Choice, Count, Seed, Rate, Real, Hyper,
    Scale, Switch, NoSwitch), tcc-run's FLAG and ARG, the DEFAULT (None:
    not given, or for a hyperparameter the artifact's value), RANGE, HELP."""
    name: str
    kind: str
    flag: str
    arg: str
    default: Any
    range: str
    help: str


#: The trainer's options, from the runtime's one table (trainer_options.def).
TRAINER_OPTIONS: List[TrainerOption] = [TrainerOption(*row) for row in _tcc.trainer_options()]
_DEFAULTS = {o.name: o.default for o in TRAINER_OPTIONS}
# Options that train() takes under a name or in a form of its own: data and
# val (a folder, arrays or batches), schedule, shuffle (None: the default,
# or an iterable's own order).
_OWN = {"data_dir": "data", "val_dir": "val", "lr_schedule": "schedule", "steps": "steps",
        "lr": "lr", "shuffle": "shuffle"}


def train(artifact: Artifact,
          data: Union[str, os.PathLike, Mapping[str, Any], Iterable[Mapping[str, Any]]],
          steps: int = _DEFAULTS["steps"], lr: float = float(_DEFAULTS["lr"]),
          schedule: str = _DEFAULTS["lr_schedule"],
          session: Optional[Session] = None,
          val: Union[None, str, os.PathLike, Mapping[str, Any]] = None, threads: int = 0,
          shuffle: Optional[bool] = None, verbose: bool = False,
          callback: Optional[Callable[[Dict[str, float]], Any]] = None,
          communicator: Optional[Communicator] = None,
          **options: Any) -> TrainResult:
    """Trains ARTIFACT with the runtime's trainer, the loop of tcc-run.

    data / val: a folder of NAME.npy files, or a dict name -> array (the first
    axis counts samples); shuffled every epoch unless shuffle=False.

    data may also be any other iterable (a generator, a DataLoader-like
    object) of batches, each a dict name -> array holding exactly one compiled
    batch of every data input of train_step (the model's inputs and the
    labels; Artifact.inputs("train_step") declares them). The batches are
    taken in the iterable's order (shuffle must be left None or False), one
    per micro-batch, on the trainer's own loop: the same schedules,
    validation, checkpoints and callbacks as for a folder. The run takes at
    most STEPS steps; when the iterable ends first, the run ends after its
    last whole step like early stopping (checkpoint and save written, val
    evaluated when there is no eval_every) and TrainResult.steps_done says
    how many it took. resume= draws and discards the batches of the
    checkpoint's steps first, so an iterable that starts over continues
    where the checkpoint left off. An exception raised by the iterable stops
    the run at that step (its checkpoint written) and is raised by train.
    The iterable runs on the training thread between steps and must not use
    the session being trained.

    STEPS optimizer steps, or epochs=E passes over a data set (folder or
    arrays): E times the whole steps one epoch holds.

    SESSION: the session to train (default: a new one
    with THREADS threads and the parameters beside the artifact). The other
    keywords are the trainer's options (TRAINER_OPTIONS; tcc-run's training
    flags, --plateau-patience as plateau_patience), with their defaults as
    the signature shows; None leaves one at its default. verbose prints the
    progress lines; CALLBACK(step_dict) runs after every step and stops the
    run (as early stopping does) by returning True. COMMUNICATOR: train as
    one rank of a data-parallel job (Communicator).
    """
    unknown = sorted(set(options) - (set(_DEFAULTS) - set(_OWN)))
    if unknown:
        raise TypeError(f"tcc.train: unknown option(s) {', '.join(unknown)}")
    o: Dict[str, Any] = {k: (os.fspath(v) if isinstance(v, os.PathLike) else v)
                         for k, v in options.items() if v is not None}
    o.update(steps=int(steps), lr=float(lr), lr_schedule=schedule)
    arrays, val_arrays, source = [], [], None
    if isinstance(data, Mapping):
        arrays = _arrays(data)
    elif isinstance(data, (str, os.PathLike)):
        o["data_dir"] = os.fspath(data)
    else:
        if shuffle:
            raise ValueError("tcc.train: an iterable of batches has its own order; shuffle=True "
                             "applies to a folder or arrays")
        source = _batch_source(data)
        shuffle = False
    o["shuffle"] = int(shuffle is None or bool(shuffle))
    if isinstance(val, Mapping):
        val_arrays = _arrays(val)
    elif val is not None:
        o["val_dir"] = os.fspath(val)
    if session is None:
        session = artifact.session(threads=threads, skip_default_params="resume" in o)
    result = TrainResult(session)

    def on_step(info: Dict[str, float]) -> bool:
        result.history.append(info)
        return bool(callback(info)) if callback is not None else False

    trainer = _tcc.Trainer(artifact._impl, o, arrays, val_arrays, print if verbose else None,
                           on_step, communicator._impl if communicator is not None else None,
                           source)
    try:
        with session._lock:
            trainer.run(session._impl)
        result.steps_done = trainer.steps_done()
    finally:
        # Released now, not when the garbage collector frees the trainer: an
        # exception's traceback keeps it alive, and with it the lock on the
        # checkpoint folder that the next run (a resume) needs.
        trainer.close()
    return result


def _train_signature() -> inspect.Signature:
    """train's signature with the trainer's options as keywords: every row
    of the table that train does not take under a name of its own."""
    own = inspect.signature(train)
    parameters = [p for p in own.parameters.values() if p.kind != p.VAR_KEYWORD]
    parameters += [inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=o.default)
                   for o in TRAINER_OPTIONS if o.name not in _OWN]
    return own.replace(parameters=parameters)


train.__signature__ = _train_signature()  # type: ignore[attr-defined]


def _session_of(model: Union[Artifact, Session], threads: int) -> Session:
    """MODEL itself, or a new session of the artifact MODEL with its
    parameters beside it."""
    return model if isinstance(model, Session) else model.session(threads=threads)


def evaluate(model: Union[Artifact, Session], data: Union[str, os.PathLike, Mapping[str, Any]],
             threads: int = 0, normalize: Optional[str] = None,
             augment_input: Optional[str] = None,
             image_shape: Optional[str] = None) -> Dict[str, Any]:
    """The mean loss and the accuracy of MODEL (a session with its current
    parameters, or an artifact: a new session with THREADS threads and the
    parameters beside it) over every sample of DATA (a folder of NAME.npy
    files or a dict name -> array, the labels included), with the runtime's
    evaluator: the trainer's validation pass, as tcc-run evaluate runs it.

    The samples are taken in order, a compiled batch at a time; the last,
    partial batch runs as one when the artifact takes partial batches
    (Artifact.batch), so every sample counts once; otherwise the samples
    after the last full batch are left out ("skipped"). Returns a dict:
    "samples" (evaluated), "skipped", "loss" (with an eval_step entry: the
    mean of the batches' losses weighted by their samples) and "accuracy",
    "correct", "counted" (a classifier: its first output's argmax against
    integer labels). normalize, augment_input, image_shape: the training's
    normalization of the image input (tcc.train's keywords)."""
    session = _session_of(model, threads)
    arrays, data_dir = [], None
    if isinstance(data, Mapping):
        arrays = _arrays(data)
    else:
        data_dir = os.fspath(data)
    evaluator = _tcc.Evaluator(session.artifact._impl, data_dir, arrays, normalize,
                               augment_input, image_shape)
    try:
        with session._lock:
            return evaluator.run(session._impl)
    finally:
        evaluator.close()


def _batch_rows(artifact: Artifact, t: TensorInfo, batch: int, partial: bool) -> int:
    """How many rows of T's first axis each sample has in infer (0: T does
    not follow the batch, the same in every run): the artifact's metadata,
    or without partial batches, K for a first dimension of K batches."""
    if not t.shape:
        return 0
    if not partial:
        return t.shape[0] // batch if t.shape[0] % batch == 0 else 0
    rows = artifact.metadata("batch_rows." + t.name)
    return int(rows) if rows is not None else 0


def predict(model: Union[Artifact, Session], inputs: Optional[Mapping[str, Any]] = None,
            threads: int = 0, **kwargs: Any) -> Dict[str, np.ndarray]:
    """Runs infer over inputs of any number of samples (by name, as keywords
    or a dict; the samples first) and returns each output that holds rows
    per sample, name -> an array of every sample's rows, in order; as
    tcc-run predict does. MODEL: a session, or an artifact (a new session
    with THREADS threads and the parameters beside it).

    infer runs a compiled batch B at a time. An artifact that takes partial
    batches (Artifact.batch) runs the remainder as one, and its metadata says
    which inputs and outputs follow the batch (the others are given whole to
    every run, and left out of the result); another runs whole batches only
    (B the first dimension of infer's first input; the samples must be a
    multiple of B)."""
    session = _session_of(model, threads)
    art = session.artifact
    given = dict(inputs or {}, **kwargs)
    declared = {t.name: t for t in art.inputs("infer")}
    missing = [n for n in declared if n not in given]
    unknown = [n for n in given if n not in declared]
    if unknown or missing:
        raise Error(f"{art.path}: infer takes the input(s) {', '.join(declared)}"
                    + (f"; missing {', '.join(missing)}" if missing else "")
                    + (f"; unknown {', '.join(unknown)}" if unknown else ""))
    partial = art.batch is not None
    batch = art.batch if partial else next(
        (t.shape[0] for t in art.inputs("infer") if t.shape), 0)
    if batch < 1:
        raise Error(f"{art.path}: infer has no input with a batch dimension")
    arrays = {n: _as_input(v, declared[n]) for n, v in given.items()}
    rows = {n: _batch_rows(art, declared[n], batch, partial) for n in arrays}
    samples = None
    for name, k in rows.items():
        if k == 0:
            continue
        a = arrays[name]
        if a.ndim == 0 or len(a) % k:
            raise Error(f"input '{name}' holds {a.shape}, not whole samples of {k} row(s) each")
        if samples is not None and len(a) // k != samples:
            raise Error(f"input '{name}' holds {len(a) // k} samples, the others {samples}")
        samples = len(a) // k
    if not samples:
        raise Error(f"{art.path}: no input of infer holds samples")
    if not partial and samples % batch:
        raise Error(f"the inputs hold {samples} samples, not a whole number of batches of "
                    f"{batch}, and {art.path} takes full batches only")
    outputs = {t.name: (t, _batch_rows(art, t, batch, partial)) for t in art.outputs("infer")}
    result = {name: np.empty((samples * k,) + t.shape[1:], dtype=t.dtype)
              for name, (t, k) in outputs.items() if k}
    for start in range(0, samples, batch):
        n = min(batch, samples - start)
        feed = {name: a[start * rows[name]:(start + n) * rows[name]] if rows[name] else a
                for name, a in arrays.items()}
        out = session.run("infer", feed)
        for name, buffer in result.items():
            k = outputs[name][1]
            buffer[start * k:(start + n) * k] = out[name]
    return result
