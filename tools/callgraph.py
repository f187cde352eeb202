#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The driver's cross-file call graph, read from its sources as text.

usage: tools/callgraph.py [--edges] [FILE.c ...]

Without files: every drivers/infiniband/sw/vhca/*.c.  A function is
defined where a line at column 0 names it before a '(' and its body's '{'
opens a later line at column 0 (the kernel's style); a call is its name
followed by '('.  File A depends on file B when a function of A calls one
defined in B (a static function is never called from another file, but
its own calls count).  Prints each circle of files that depend on each
other (a strongly connected component of more than one file) and the
edges that close it: those against an order of its files by how many of
the others each calls (--edges lists every cross-file call).
"""
import os
import re
import sys

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                      'drivers', 'infiniband', 'sw', 'vhca')
DEF = re.compile(r'^(static\b)?[A-Za-z_][\w \t\*]*?\b([a-z_][a-z0-9_]*)\(')
CALL = re.compile(r'\b([a-z_][a-z0-9_]*)\s*\(')


def strip(text):
    """The source without comments and string literals."""
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'),
                  text, flags=re.S)
    text = re.sub(r'//[^\n]*', '', text)
    return re.sub(r'"(\\.|[^"\\])*"', '""', text)


def parse(path):
    """(functions other files may call, {function: calls in its body})."""
    lines = strip(open(path).read()).split('\n')
    defined, bodies, cur = set(), {}, None
    for i, line in enumerate(lines):
        m = DEF.match(line)
        if m and not line.rstrip().endswith(';'):
            j = i
            while j < len(lines) and not lines[j].startswith('{') and \
                    not lines[j].rstrip().endswith(';'):
                j += 1
            if j < len(lines) and lines[j].startswith('{'):
                cur = m.group(2)
                if not m.group(1):
                    defined.add(cur)
                bodies.setdefault(cur, [])
                continue
        if line.startswith('}'):
            cur = None
        elif cur:
            bodies[cur].extend(CALL.findall(line))
    return defined, bodies


def sccs(nodes, edges):
    """Tarjan's strongly connected components."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main(argv):
    show_edges = '--edges' in argv
    files = [a for a in argv if a != '--edges']
    if not files:
        files = sorted(os.path.join(DRIVER, f) for f in os.listdir(DRIVER)
                       if f.endswith('.c'))
    owner, calls = {}, {}
    for f in files:
        name = os.path.basename(f)
        defined, bodies = parse(f)
        for fn in defined:
            owner[fn] = name
        calls[name] = bodies
    edges, why = {}, {}
    for f, bodies in calls.items():
        for fn, called in bodies.items():
            for c in called:
                g = owner.get(c)
                if g and g != f:
                    edges.setdefault(f, set()).add(g)
                    why.setdefault((f, g), set()).add(f'{fn} -> {c}')
    if show_edges:
        for (f, g), w in sorted(why.items()):
            print(f'{f} -> {g}: {", ".join(sorted(w))}')
    circles = [c for c in sccs(calls, edges) if len(c) > 1]
    total_back = 0
    for comp in circles:
        inside = set(comp)
        # An order of the circle's files: by how many of the others each
        # calls (callers first); edges against it close the circle.
        order = sorted(comp, key=lambda f: (-len(edges.get(f, set()) & inside), f))
        rank = {f: i for i, f in enumerate(order)}
        back = sorted((f, g) for f in comp for g in edges.get(f, ())
                      if g in inside and rank[g] < rank[f])
        total_back += len(back)
        print(f'circle of {len(comp)} files: {" ".join(order)}')
        for f, g in back:
            print(f'  back edge {f} -> {g}: {", ".join(sorted(why[(f, g)]))}')
    print(f'{len(circles)} circles, largest {max((len(c) for c in circles), default=0)} '
          f'files, {total_back} back edges')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
