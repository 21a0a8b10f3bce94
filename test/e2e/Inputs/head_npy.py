#!/usr/bin/env python3
"""Writes the first N samples (first axis) of a float32 .npy file.
Standard library only. Usage: head_npy.py IN.npy N OUT.npy"""
import sys

from npy_io import read_npy, write_npy

shape, values = read_npy(sys.argv[1])
n = int(sys.argv[2])
per = len(values) // shape[0]
write_npy(sys.argv[3], '<f4', [n] + list(shape[1:]), values[:n * per])
