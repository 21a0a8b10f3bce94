#!/usr/bin/env python3
"""check_arg_order.py FILE|FOLDER... - calls whose arguments build IR in an unspecified order.

C++ leaves the evaluation order of function arguments unspecified: clang goes left
to right, GCC right to left. A call such as `AddOp::create(b, loc, MulOp::create(...),
splat(...))` builds its two operands in the host compiler's order, so the IR (its
printed form, the constants' order, the compile cache's keys) would depend on the
compiler tcc was built with (issue 16: lower-to-linalg-elementwise.mlir failed under
GCC 12). Such arguments must be built in named steps first.

Reports every call with two or more arguments that each contain an op creation
(`X::create(`, `.create<`) or a call of a known IR-building helper, one line each,
and exits 1 if there is any. A heuristic over the text (comments and strings
stripped), not a parser: a helper not in the list is not seen.
"""
import os
import re
import sys

HELPERS = ('fconst|scalarConst|intConst|indexConst|lowestValue|highestValue|addScalar|mulScalar|'
           'maxScalar|minScalar|divScalar|castScalar|wrapAndClampIndex|emptyTensor|filledTensor|'
           'reshapeTo|mapElementwise|integerPow|splat|cIndex|broadcastTo|sliceAxis|inGate|mul|add|'
           'sub|div|neg|constant|full|sumAll|sumKeep|expandTo|meanN|meanC')
CREATES = re.compile(r'(::create\s*\(|\.create\s*<|(?<![\w.>])(?:t\.|ctx\.)?(?:%s)\s*\()' % HELPERS)


def strip(src):
    src = re.sub(r'//[^\n]*', '', src)
    src = re.sub(r'/\*.*?\*/', '', src, flags=re.S)
    return re.sub(r'"(\\.|[^"\\])*"', '""', src)


def arguments(src, start):
    """The top-level arguments of the call whose '(' ends at START, and its end."""
    depth, cur, args, j = 1, '', [], start
    while j < len(src) and depth:
        c = src[j]
        if c in '([{':
            depth += 1
        elif c in ')]}':
            depth -= 1
        if depth == 1 and c == ',':
            args.append(cur)
            cur = ''
        elif depth:
            cur += c
        j += 1
    args.append(cur)
    return args, j


def check(path):
    src = strip(open(path, encoding='utf-8').read())
    found = []
    for m in re.finditer(r'[A-Za-z_][\w:]*\s*\(', src):
        name = m.group(0).rstrip('( ')
        if name in ('if', 'for', 'while', 'switch', 'return', 'sizeof', 'assert'):
            continue
        args, end = arguments(src, m.end())
        # A lambda argument is not evaluated at the call.
        builders = [a for a in args if CREATES.search(a) and not re.match(r'\s*\[', a)]
        if len(builders) >= 2:
            line = src.count('\n', 0, m.start()) + 1
            text = re.sub(r'\s+', ' ', src[m.start():end])
            found.append('%s:%d: %s' % (path, line, text[:160]))
    return found


def sources(paths):
    """The C++ files named, and those under the folders named, in a fixed order."""
    for path in paths:
        if not os.path.isdir(path):
            yield path
            continue
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(('.cpp', '.h')):
                    yield os.path.join(root, name)


def main():
    found = [f for path in sources(sys.argv[1:]) for f in check(path)]
    for f in found:
        print(f)
    print('check_arg_order: %d call(s) build IR in their arguments' % len(found))
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
