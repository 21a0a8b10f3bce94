#!/usr/bin/env bash
# %mpirun (test/lit.cfg.py): mpirun with a session directory of its own.
# Jobs started at the same time (lit runs tests in parallel) otherwise race
# creating Open MPI's shared one under $TMPDIR and one fails in orte_init
# ("File exists").
dir=$(mktemp -d "${TMPDIR:-/tmp}/tcc-mpirun.XXXXXX") || exit 1
mpirun --mca orte_tmpdir_base "$dir" "$@"
status=$?
rm -rf "$dir"
exit $status
