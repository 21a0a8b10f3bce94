"""tcc_runtime.py - a ctypes binding of libtcc_runtime for the benchmark.

Covers the part of runtime/include/tcc/tcc.h that the benchmarks need: load
an artifact, list its tensors, entry points and metadata, create a session
with options (thread count), set inputs (0-d scalars such as a training
step's lr and step included), run an entry point ("infer", "train_step"),
copy outputs. Every call's status is checked; a failure raises TccError with
tcc_last_error()'s message.

The struct layouts below mirror tcc.h and abi.h; keep them in step with those
headers (tcc_session_options is checked against the runtime's struct_size at
load time).

    rt = TccRuntime("build/lib/libtcc_runtime.so")
    with rt.load("model.so") as artifact, artifact.session(num_threads=2) as s:
        s.set_input("x", x)           # numpy array of the declared dtype/shape
        s.run("infer")
        y = s.output("y")             # a fresh numpy array

A training step (tcc MODEL.onnx --loss=... -o train.so):

    with rt.load("train.so") as a, a.session(num_threads=2) as s:
        lr = np.array(0.05, np.float32)           # 0-d inputs; change in place
        step = s.prepare({"x": x, "y": y, "lr": lr}, "train_step", outputs=["loss"])
        step()                                    # set inputs, run, copy loss
        loss = float(step.outputs["loss"])
"""

import ctypes
from ctypes import POINTER, c_char_p, c_int32, c_int64, c_size_t, c_uint32, c_void_p

import numpy as np

TCC_OK = 0

# tcc_role (abi.h); STATE: optimizer buffers, after the parameters.
ROLE_INPUT, ROLE_OUTPUT, ROLE_PARAM, ROLE_STATE = 1, 2, 3, 4
ROLE_NAMES = {ROLE_INPUT: "input", ROLE_OUTPUT: "output", ROLE_PARAM: "param", ROLE_STATE: "state"}
TCC_ERROR_NOT_FOUND = 4

# tcc_dtype (abi.h) -> numpy dtype; BF16 has no numpy dtype and is left out.
DTYPES = {
    1: np.dtype(np.float32),
    2: np.dtype(np.float64),
    3: np.dtype(np.float16),
    5: np.dtype(np.int8),
    6: np.dtype(np.int16),
    7: np.dtype(np.int32),
    8: np.dtype(np.int64),
    9: np.dtype(np.uint8),
    10: np.dtype(np.uint16),
    11: np.dtype(np.uint32),
    12: np.dtype(np.uint64),
    13: np.dtype(np.bool_),
}
DTYPE_CODES = {v: k for k, v in DTYPES.items()}


class TccError(RuntimeError):
    """A tcc_* call returned an error status."""


class _ArtifactInfo(ctypes.Structure):
    _fields_ = [
        ("path", c_char_p),
        ("abi_version", c_uint32),
        ("fingerprint", c_char_p),
        ("producer", c_char_p),
        ("target", c_char_p),
        ("cpu_features", c_char_p),
        ("arena_size", c_int64),
        ("state_size", c_int64),
        ("num_tensors", c_int32),
        ("num_entries", c_int32),
    ]


class _TensorInfo(ctypes.Structure):
    _fields_ = [
        ("name", c_char_p),
        ("role", c_int32),  # enum tcc_role: an int
        ("dtype", c_int32),  # enum tcc_dtype
        ("rank", c_int32),
        ("shape", POINTER(c_int64)),
        ("size_bytes", c_size_t),
    ]


class _EntryInfo(ctypes.Structure):
    _fields_ = [
        ("name", c_char_p),
        ("num_tensors", c_int32),
        ("tensor_indices", POINTER(c_int32)),
    ]


class _SessionOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("num_threads", c_int32),
        ("poison_arena", c_int32),
        ("skip_default_params", c_int32),
    ]


class TensorInfo:
    """One tensor of an artifact's descriptor, copied out of the runtime."""

    def __init__(self, index, raw):
        self.index = index
        self.name = raw.name.decode()
        self.role = raw.role
        self.dtype_code = raw.dtype
        self.dtype = DTYPES.get(raw.dtype)  # None for bf16
        self.shape = tuple(raw.shape[i] for i in range(raw.rank))
        self.size_bytes = raw.size_bytes

    def __repr__(self):
        role = ROLE_NAMES.get(self.role, "?")
        return f"{role} {self.name} {self.dtype} {list(self.shape)}"


class TccRuntime:
    """The loaded libtcc_runtime shared library."""

    def __init__(self, path):
        self.path = path
        lib = self.lib = ctypes.CDLL(path)
        status = c_int32  # enum tcc_status
        handle = c_void_p
        self._sig("tcc_last_error", c_char_p, [])
        self._sig("tcc_status_string", c_char_p, [status])
        self._sig("tcc_runtime_version", c_char_p, [])
        self._sig("tcc_artifact_load", status, [c_char_p, POINTER(handle)])
        self._sig("tcc_artifact_destroy", None, [handle])
        self._sig("tcc_artifact_get_info", status, [handle, POINTER(_ArtifactInfo)])
        self._sig("tcc_artifact_tensor_info", status, [handle, c_int32, POINTER(_TensorInfo)])
        self._sig("tcc_artifact_num_entries", status, [handle, POINTER(c_int32)])
        self._sig("tcc_artifact_entry_info", status, [handle, c_int32, POINTER(_EntryInfo)])
        self._sig("tcc_artifact_get_metadata", status, [handle, c_char_p, POINTER(c_char_p)])
        self._sig("tcc_session_options_init", None, [POINTER(_SessionOptions)])
        self._sig("tcc_session_create", status, [handle, POINTER(_SessionOptions), POINTER(handle)])
        self._sig("tcc_session_destroy", None, [handle])
        self._sig(
            "tcc_session_set_input",
            status,
            [handle, c_char_p, c_int32, c_int32, POINTER(c_int64), c_void_p, c_size_t],
        )
        self._sig("tcc_session_run", status, [handle, c_char_p])
        self._sig("tcc_session_copy_output", status, [handle, c_char_p, c_void_p, c_size_t])

        options = _SessionOptions()
        lib.tcc_session_options_init(ctypes.byref(options))
        if options.struct_size != ctypes.sizeof(_SessionOptions):
            raise TccError(
                f"{path}: tcc_session_options is {options.struct_size} bytes in the runtime, "
                f"{ctypes.sizeof(_SessionOptions)} in this binding; update bench/tcc_runtime.py"
            )
        self.version = lib.tcc_runtime_version().decode()

    def _sig(self, name, restype, argtypes):
        fn = getattr(self.lib, name)
        fn.restype = restype
        fn.argtypes = argtypes

    def check(self, status, what):
        """Raises TccError for a status other than TCC_OK."""
        if status != TCC_OK:
            code = self.lib.tcc_status_string(status).decode()
            message = self.lib.tcc_last_error().decode()
            raise TccError(f"{what}: {code}: {message}")

    def load(self, path):
        handle = c_void_p()
        self.check(self.lib.tcc_artifact_load(path.encode(), ctypes.byref(handle)), f"loading {path}")
        return Artifact(self, handle, path)


class Artifact:
    """A loaded artifact (tcc_artifact_t); a context manager."""

    def __init__(self, rt, handle, path):
        self.rt, self.handle, self.path = rt, handle, path
        info = _ArtifactInfo()
        rt.check(rt.lib.tcc_artifact_get_info(handle, ctypes.byref(info)), "tcc_artifact_get_info")
        self.producer = info.producer.decode()
        self.cpu_features = info.cpu_features.decode()
        self.arena_size = info.arena_size
        self.state_size = info.state_size
        self.tensors = []
        for i in range(info.num_tensors):
            raw = _TensorInfo()
            rt.check(rt.lib.tcc_artifact_tensor_info(handle, i, ctypes.byref(raw)), "tcc_artifact_tensor_info")
            self.tensors.append(TensorInfo(i, raw))
        # Entry points: name -> the tensors it reads or writes.
        self.entries = {}
        for i in range(info.num_entries):
            raw = _EntryInfo()
            rt.check(rt.lib.tcc_artifact_entry_info(handle, i, ctypes.byref(raw)), "tcc_artifact_entry_info")
            self.entries[raw.name.decode()] = [self.tensors[raw.tensor_indices[k]] for k in range(raw.num_tensors)]

    @property
    def inputs(self):
        return [t for t in self.tensors if t.role == ROLE_INPUT]

    @property
    def outputs(self):
        return [t for t in self.tensors if t.role == ROLE_OUTPUT]

    @property
    def params(self):
        return [t for t in self.tensors if t.role == ROLE_PARAM]

    @property
    def states(self):
        return [t for t in self.tensors if t.role == ROLE_STATE]

    def entry_inputs(self, entry):
        """The inputs ENTRY reads: each must be set before every run."""
        return [t for t in self.entries[entry] if t.role == ROLE_INPUT]

    def entry_outputs(self, entry):
        return [t for t in self.entries[entry] if t.role == ROLE_OUTPUT]

    def metadata(self, key):
        """The descriptor's metadata KEY ("loss", "labels", "optimizer", ...),
        or None when the artifact has no such key."""
        value = c_char_p()
        status = self.rt.lib.tcc_artifact_get_metadata(self.handle, key.encode(), ctypes.byref(value))
        if status == TCC_ERROR_NOT_FOUND:
            return None
        self.rt.check(status, f"tcc_artifact_get_metadata({key})")
        return value.value.decode()

    def session(self, num_threads=0):
        """A new session: its parameters loaded from the .safetensors beside
        the artifact; NUM_THREADS threads per parallel loop (0: all CPUs)."""
        options = _SessionOptions()
        self.rt.lib.tcc_session_options_init(ctypes.byref(options))
        options.num_threads = num_threads
        handle = c_void_p()
        self.rt.check(
            self.rt.lib.tcc_session_create(self.handle, ctypes.byref(options), ctypes.byref(handle)),
            f"creating a session for {self.path}",
        )
        return Session(self, handle)

    def close(self):
        if self.handle:
            self.rt.lib.tcc_artifact_destroy(self.handle)
            self.handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class BoundStep:
    """One entry point's run with its inputs and outputs bound (see
    Session.prepare): calling it sets every input, runs, copies the chosen
    outputs into self.outputs. Only C calls and int compares per call."""

    def __init__(self, session, inputs, entry, outputs):
        self.rt, self._lib, self._handle = session.rt, session.rt.lib, session.handle
        self._set_args = []
        self._keep = []
        for name, array in inputs.items():
            if not (isinstance(array, np.ndarray) and array.flags.c_contiguous):
                raise TccError(f"input {name}: pass a C-contiguous numpy array (it is bound by address)")
            shape = (c_int64 * array.ndim)(*array.shape)
            self._keep += [array, shape]  # the addresses must outlive the binding
            self._set_args.append(
                (self._handle, name.encode(), DTYPE_CODES[array.dtype], array.ndim, shape, array.ctypes.data, array.nbytes)
            )
        infos = session.artifact.outputs
        if outputs is not None:
            infos = [t for t in infos if t.name in outputs]
        self.outputs = {t.name: np.empty(t.shape, t.dtype) for t in infos}
        self._keep += list(self.outputs.values())  # each call writes into them
        self._copy_args = [(self._handle, n.encode(), a.ctypes.data, a.nbytes) for n, a in self.outputs.items()]
        self._entry = entry.encode()

    def __call__(self):
        lib = self._lib
        for args in self._set_args:
            status = lib.tcc_session_set_input(*args)
            if status != TCC_OK:
                self.rt.check(status, "tcc_session_set_input")
        status = lib.tcc_session_run(self._handle, self._entry)
        if status != TCC_OK:
            self.rt.check(status, "tcc_session_run")
        for args in self._copy_args:
            status = lib.tcc_session_copy_output(*args)
            if status != TCC_OK:
                self.rt.check(status, "tcc_session_copy_output")


class Session:
    """A session (tcc_session_t); a context manager.

    For timing, prepare() (or bind()) builds the ctypes arguments of every
    set_input and copy_output once, so that a step does only the C calls.
    """

    def __init__(self, artifact, handle):
        self.rt, self.artifact, self.handle = artifact.rt, artifact, handle
        self._lib = self.rt.lib

    def set_input(self, name, array):
        info = next((t for t in self.artifact.inputs if t.name == name), None)
        if info is None:
            raise TccError(f"{self.artifact.path}: no input {name!r}")
        array = np.ascontiguousarray(array)
        shape = (c_int64 * len(array.shape))(*array.shape)
        code = DTYPE_CODES.get(array.dtype)
        if code is None:
            raise TccError(f"input {name}: numpy dtype {array.dtype} has no tcc dtype")
        self.rt.check(
            self._lib.tcc_session_set_input(
                self.handle, name.encode(), code, array.ndim, shape, array.ctypes.data, array.nbytes
            ),
            f"tcc_session_set_input({name})",
        )

    def run(self, entry="infer"):
        self.rt.check(self._lib.tcc_session_run(self.handle, entry.encode()), f"tcc_session_run({entry})")

    def output(self, name):
        info = next((t for t in self.artifact.outputs if t.name == name), None)
        if info is None or info.dtype is None:
            raise TccError(f"{self.artifact.path}: no output {name!r} of a numpy dtype")
        out = np.empty(info.shape, info.dtype)
        self.rt.check(
            self._lib.tcc_session_copy_output(self.handle, name.encode(), out.ctypes.data, out.nbytes),
            f"tcc_session_copy_output({name})",
        )
        return out

    def prepare(self, inputs, entry="infer", outputs=None):
        """A BoundStep: INPUTS maps every input the entry reads to a
        C-contiguous numpy array, bound by address (change values in place,
        e.g. a 0-d step counter, and the next call sends them); OUTPUTS
        names the outputs to copy after each run (default: all)."""
        return BoundStep(self, inputs, entry, outputs)

    def bind(self, inputs, entry="infer"):
        """Prepares step(): INPUTS maps every input name to an array (made
        contiguous and kept referenced); outputs go to preallocated arrays,
        returned as {name: array} and overwritten by each step()."""
        inputs = {name: np.ascontiguousarray(array) for name, array in inputs.items()}
        self._bound = self.prepare(inputs, entry)
        return self._bound.outputs

    def step(self):
        """One run as bound: set every input, run, copy every output.
        Statuses are checked (an int compare each) and raise on failure."""
        self._bound()

    def close(self):
        if self.handle:
            self._lib.tcc_session_destroy(self.handle)
            self.handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
