"""The trainer's options are one table, runtime/include/tcc/trainer_options.def:
tests that tcc-run's --help, the C header (its struct and the defaults
tcc_trainer_options_init sets) and the signature of tcc.train agree with it,
option by option, in names and defaults."""

import inspect
import math
import re
import subprocess
from pathlib import Path

import tcc

REPO = Path(__file__).resolve().parents[2]
DEF = REPO / "runtime" / "include" / "tcc" / "trainer_options.def"
HEADER = REPO / "runtime" / "include" / "tcc" / "tcc.h"

ROW = re.compile(r'^TCC_TRAINER_OPTION\((\w+),\s*([^,]+),\s*(\w+),\s*"([^"]*)",\s*"([^"]*)",\s*'
                 r'("[^"]*"|[^,]+),\s*"([^"]*)"', re.M)


def table():
    """The rows as the .def file writes them: name -> (kind, flag, arg, default
    as written, range)."""
    rows = {m[1]: (m[3], m[4], m[5], m[6], m[7]) for m in ROW.finditer(DEF.read_text())}
    assert len(rows) == len(re.findall(r"^TCC_TRAINER_OPTION\(", DEF.read_text(), re.M))
    return rows


def python_value(kind, written):
    """A DEFAULT as written in the table, as Python has it."""
    if written in ("NULL", "NAN"):
        return None
    if written.startswith('"'):
        return written.strip('"')
    if kind in ("Switch", "NoSwitch"):
        return written != "0"
    return float(written)


def in_range(value, written_range):
    """Whether VALUE lies in an interval "[LO, HI) UNIT"."""
    m = re.match(r"([\[(])([^,]+), ([^\])]+)([\])])", written_range)
    if not m:
        return True
    lo, hi = float(m[2]), float(m[3])
    return (value > lo if m[1] == "(" else value >= lo) and \
        (value < hi if m[4] == ")" else value <= hi)


def test_the_package_lists_the_table():
    rows = table()
    assert [o.name for o in tcc.TRAINER_OPTIONS] == list(rows)
    for o in tcc.TRAINER_OPTIONS:
        kind, flag, arg, default, _ = rows[o.name]
        assert (o.kind, o.flag, o.arg) == (kind, flag, arg), o.name
        # The package's default is what tcc_trainer_options_init sets.
        assert o.default == python_value(kind, default), o.name


def test_the_c_header_declares_the_table():
    # The struct's fields are the table's rows (no field is spelled twice),
    # and tcc_trainer_options_init sets the table's defaults (above).
    header = HEADER.read_text()
    struct = header[header.index("typedef struct tcc_trainer_options {"):
                    header.index("} tcc_trainer_options;")]
    assert '#include "trainer_options.def"' in struct
    for name in table():
        assert not re.search(rf"\b{name}\s*[;,]", struct), name


def help_blocks():
    """tcc-run --help's entries: flag -> its text (the lines until the next
    flag), the first entry of each (the subcommands' come later)."""
    text = subprocess.run([tcc._tool("tcc-run"), "--help"], capture_output=True, text=True,
                          check=True).stdout
    blocks, flag = {}, None
    for line in text.splitlines():
        m = re.match(r"  (--[a-z0-9-]+)", line)
        if m:
            flag = m[1] if m[1] not in blocks else None
            if flag:
                blocks[flag] = line
        elif flag and line.startswith(" " * 23):
            blocks[flag] += " " + line.strip()
        else:
            flag = None
    return blocks


def test_tcc_run_help_shows_the_table():
    blocks = help_blocks()
    for name, (kind, flag, arg, default, written_range) in table().items():
        assert flag in blocks, flag
        block = re.sub(r"\s+", " ", blocks[flag])
        assert block.startswith(f" {flag} {arg}".rstrip()), block
        value = python_value(kind, default)
        shown = value is not None and kind not in ("Switch", "NoSwitch") and (
            isinstance(value, str) or in_range(value, written_range))
        if shown:
            text = value if isinstance(value, str) else default
            assert f"(default {text})" in block, block
        else:
            assert not re.search(r"\(default [^:]", block), block


def test_the_signature_of_train_shows_the_table():
    parameters = inspect.signature(tcc.train).parameters
    own = {"data_dir": "data", "val_dir": "val", "lr_schedule": "schedule"}
    for name, (kind, _, _, default, _) in table().items():
        keyword = own.get(name, name)
        assert keyword in parameters, keyword
        if name == "data_dir":
            continue  # data is required
        got, want = parameters[keyword].default, python_value(kind, default)
        if name == "shuffle":
            # None: shuffled (the table's default) unless the data is an
            # iterable of batches, which keeps its own order.
            assert got is None and want is True
        elif isinstance(want, float):
            assert isinstance(got, (int, float)) and not isinstance(got, bool)
            assert got == want or (math.isnan(want) and math.isnan(got)), name
        else:
            assert got == want, name
