"""batch_auto_check.py --tcc TCC --tcc-run TCC_RUN --work DIR --budget BYTES -- MODEL FLAGS...

`tcc --batch=auto` against its oracle, the compiler itself: the batch B it
chooses compiles within the budget (tcc-run --list: arena + state <= BYTES)
and B + 1 is refused with --batch=B+1 (exit 1); the choice is in the
artifact's metadata. Then with --global-batch=G: a divisor of G and the
accumulation G / B. Prints one line per check. Any Python 3, standard
library only."""
import argparse
import os
import re
import subprocess
import sys


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--tcc', required=True)
    ap.add_argument('--tcc-run', required=True)
    ap.add_argument('--work', required=True)
    ap.add_argument('--budget', type=int, required=True)
    ap.add_argument('model', nargs=argparse.REMAINDER)
    args = ap.parse_args()
    model = [a for a in args.model if a != '--']
    budget = '--memory-budget=%d' % args.budget
    so = os.path.join(args.work, 'auto.so')
    rc, out = run([args.tcc] + model + ['--batch=auto', budget, '-o', so])
    m = re.search(r'--batch=auto: batch (\d+) fits .*\(batch (\d+) does not\)', out)
    if rc != 0 or not m:
        sys.exit('FAILED: %d\n%s' % (rc, out))
    b, above = int(m.group(1)), int(m.group(2))
    print('CHOSEN: next larger does not fit' if above == b + 1 else 'CHOSEN: FAILED %d %d' % (b, above))
    listing = run([args.tcc_run, so, '--list'])[1]
    planned = sum(int(x) for x in re.findall(r'^(?:arena|state): (\d+)', listing, re.M))
    shape = re.search(r'input\s+\S+ \w+\[(\d+)', listing)
    print('FITS: %s' % ('yes' if planned <= args.budget and shape and int(shape.group(1)) == b
                        else 'NO %d %s' % (planned, listing[:200])))
    meta = open(so, 'rb').read()
    print('METADATA: %s' % ('auto_batch' if b'auto_batch' in meta else 'missing'))
    rc, out = run([args.tcc] + model + ['--batch=%d' % (b + 1), budget, '-o',
                                        os.path.join(args.work, 'above.so')])
    print('ABOVE: exit %d' % rc)
    g = 3 * b + (b - 1 if b > 1 else 1)  # not a multiple of b
    rc, out = run([args.tcc] + model + ['--batch=auto', '--global-batch=%d' % g, budget, '-o', so])
    m = re.search(r'batch (\d+) x (\d+) accumulated micro-batches = (\d+)', out)
    ok = rc == 0 and m and int(m.group(1)) * int(m.group(2)) == g and int(m.group(1)) <= b
    print('GLOBAL: %s' % ('divisor' if ok else 'FAILED ' + out[-300:]))


if __name__ == '__main__':
    main()
