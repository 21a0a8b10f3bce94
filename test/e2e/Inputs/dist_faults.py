#!/usr/bin/env python3
"""dist_faults.py MODE METRICS CHECKPOINT -- COMMAND...: runs COMMAND (an
mpirun of tcc-run writing --metrics METRICS), waits until its metrics file
has 25 lines, then kills rank 1 (MODE kill: SIGKILL) or freezes it (MODE
stop: SIGSTOP), and checks that the job ends within 60 s with a nonzero
status and that CHECKPOINT (a safetensors file) is intact afterwards. Prints
what happened and the job's stderr. Standard library only."""
import json
import os
import signal
import struct
import subprocess
import sys
import time

mode, metrics, checkpoint = sys.argv[1], sys.argv[2], sys.argv[3]
command = sys.argv[sys.argv.index('--') + 1:]
job = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       start_new_session=True, text=True)


def lines():
    try:
        with open(metrics) as f:
            return sum(1 for _ in f)
    except OSError:
        return 0


def rank_one():
    """The pid of the tcc-run process that is rank 1 of this job."""
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            with open('/proc/%s/environ' % pid, 'rb') as f:
                env = f.read().split(b'\0')
            with open('/proc/%s/cmdline' % pid, 'rb') as f:
                cmd = f.read().split(b'\0')
        except OSError:
            continue
        if (b'OMPI_COMM_WORLD_RANK=1' in env and any(c.endswith(b'tcc-run') for c in cmd)
                and metrics.encode() in cmd):
            return int(pid)
    return None


deadline = time.time() + 300
while lines() < 25:
    if job.poll() is not None or time.time() > deadline:
        print('FAULTS: the job ended or stalled before 25 steps (status %s)' % job.poll())
        print(job.stderr.read())
        sys.exit(1)
    time.sleep(0.2)
victim = rank_one()
if victim is None:
    print('FAULTS: no rank 1 found')
    os.killpg(job.pid, signal.SIGKILL)
    sys.exit(1)
start = time.time()
os.kill(victim, signal.SIGKILL if mode == 'kill' else signal.SIGSTOP)
try:
    status = job.wait(timeout=90)
except subprocess.TimeoutExpired:
    status = None
elapsed = time.time() - start
# A frozen rank that the job left behind goes now.
try:
    os.kill(victim, signal.SIGKILL)
except OSError:
    pass
if status is None:
    os.killpg(job.pid, signal.SIGKILL)
    job.wait()
err = job.stderr.read()
print(err)
if status is None or elapsed > 60:
    print('FAULTS: the job did not end within 60 s of the fault')
    sys.exit(1)
if status == 0:
    print('FAULTS: the job ended with status 0')
    sys.exit(1)
# The checkpoint: an 8-byte header size, the JSON header, the data it spans.
with open(checkpoint, 'rb') as f:
    data = f.read()
(n,) = struct.unpack('<Q', data[:8])
header = json.loads(data[8:8 + n])
end = max(v['data_offsets'][1] for k, v in header.items() if k != '__metadata__')
if 8 + n + end != len(data):
    print('FAULTS: the checkpoint is damaged (%d bytes, header says %d)' % (len(data), 8 + n + end))
    sys.exit(1)
print('FAULTS: %s of rank 1 ended the job within 60 s (status %d); checkpoint of step %s intact'
      % (mode, status, header['__metadata__']['step']))
