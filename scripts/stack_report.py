#!/usr/bin/python3
"""Worst-case stack of each public entry point, from GCC's call graphs.

Reads every *.ci file (-fcallgraph-info=su: one VCG graph per object, nodes
carry the frame size from -fstack-usage) under the given build folder and
computes, for each public function of namespace tinyattn, its own frame plus
the deepest chain of callees. Conservative on purpose:
  * an indirect call (the port's kernel table) is taken to reach the deepest
    function defined under ports/backends/;
  * a function outside the library (newlib's logf, memcpy, libgcc helpers) is
    charged EXTERNAL_ALLOWANCE bytes;
  * recursion or a frame that is dynamic and unbounded makes the entry
    unbounded, which fails the check.

usage: stack_report.py <build dir> <target name> <bound bytes> [--bound-for NAME=BYTES]... [--tsv out]
--bound-for gives entry points whose name contains NAME their own bound.
Prints a table; exits 1 if an entry point exceeds the bound or is unbounded.
"""
import os
import re
import sys

EXTERNAL_ALLOWANCE = 128  # bytes; see docs/hardening.md "Stack"

NODE = re.compile(r'^node: \{ title: "([^"]*)" label: "([^"]*)"')
EDGE = re.compile(r'^edge: \{ sourcename: "([^"]*)" targetname: "([^"]*)"')
FRAME = re.compile(r'(\d+) bytes \(([a-z,]+)\)')


def load(folder):
    nodes = {}  # title -> dict(name, file, bytes, kind)
    edges = {}  # title -> set(titles)
    for root, _, files in os.walk(folder):
        for f in files:
            if not f.endswith(".ci"):
                continue
            for line in open(os.path.join(root, f), errors="replace"):
                m = NODE.match(line)
                if m:
                    title, label = m.group(1), m.group(2)
                    parts = label.split("\\n")
                    frame = FRAME.search(label)
                    info = {"name": parts[0], "file": parts[1] if len(parts) > 1 else "",
                            "bytes": int(frame.group(1)) if frame else None,
                            "kind": frame.group(2) if frame else None}
                    # A definition (with a frame) wins over a bare declaration.
                    if title not in nodes or (info["bytes"] is not None and nodes[title]["bytes"] is None):
                        nodes[title] = info
                    continue
                m = EDGE.match(line)
                if m:
                    edges.setdefault(m.group(1), set()).add(m.group(2))
    # GCC titles a weak or COMDAT definition (a template instance, an inline
    # function kept out of line) "<file>:<symbol>", while callers in other
    # files name the bare "<symbol>": such a callee must resolve to that
    # definition, not count as external.
    for title in list(nodes):
        file_part, sep, symbol = title.rpartition(":")
        if not sep or not file_part or "." in symbol or "_GLOBAL__N" in symbol:
            continue  # not file-prefixed, or a local clone (.constprop, .isra) or anonymous-namespace symbol
        info = nodes[title]
        if info["bytes"] is None:
            continue
        bare = nodes.get(symbol)
        if bare is None or bare["bytes"] is None:
            nodes[symbol] = info
            edges.setdefault(symbol, set()).update(edges.get(title, ()))
    return nodes, edges


def worst(title, nodes, edges, kernels, memo, stack):
    if title in memo:
        return memo[title]
    if title in stack:
        return None  # recursion: no static bound
    if title == "__indirect_call":
        stack.add(title)
        best = 0
        for k in kernels:
            w = worst(k, nodes, edges, kernels, memo, stack)
            if w is None:
                best = None
                break
            best = max(best, w)
        stack.discard(title)
        memo[title] = best
        return best
    node = nodes.get(title)
    if node is None or node["bytes"] is None:
        memo[title] = EXTERNAL_ALLOWANCE
        return EXTERNAL_ALLOWANCE
    if "dynamic" in node["kind"] and "bounded" not in node["kind"]:
        memo[title] = None
        return None
    stack.add(title)
    deepest = 0
    for callee in edges.get(title, ()):
        w = worst(callee, nodes, edges, kernels, memo, stack)
        if w is None:
            deepest = None
            break
        deepest = max(deepest, w)
    stack.discard(title)
    result = None if deepest is None else node["bytes"] + deepest
    memo[title] = result
    return result


def is_entry_point(info):
    """Public functions of namespace tinyattn defined in the library."""
    name, where = info["name"], info["file"]
    in_library = "/lib/src/" in where or "/ports/registry.cc" in where
    private = any(x in name for x in ("{anonymous}", "::detail::", "::ref::"))
    return in_library and "tinyattn::" in name and not private


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    folder, target, bound = sys.argv[1], sys.argv[2], int(sys.argv[3])
    tsv = sys.argv[sys.argv.index("--tsv") + 1] if "--tsv" in sys.argv else None
    special = [sys.argv[i + 1].split("=", 1) for i, a in enumerate(sys.argv) if a == "--bound-for"]

    def bound_of(name):
        for key, value in special:
            if key in name:
                return int(value)
        return bound

    nodes, edges = load(folder)
    if not nodes:
        print(f"no .ci files under {folder}")
        return 1
    kernels = [t for t, n in nodes.items() if "/ports/backends/" in n["file"] and n["bytes"] is not None]
    memo = {}
    rows = []
    for title, info in sorted(nodes.items(), key=lambda kv: kv[1]["name"]):
        if info["bytes"] is None or not is_entry_point(info):
            continue
        w = worst(title, nodes, edges, kernels, memo, set())
        rows.append((info["name"], info["bytes"], w, bound_of(info["name"])))
    externals = sorted({n["name"] for t, n in nodes.items() if n["bytes"] is None and t != "__indirect_call"})
    failed = 0
    print(f"## worst-case stack, {target} (bytes; external functions charged {EXTERNAL_ALLOWANCE})")
    print("| entry point | own frame | worst case | bound | status |")
    print("|---|---:|---:|---:|---|")
    for name, own, w, b in rows:
        ok = w is not None and w <= b
        failed += 0 if ok else 1
        print(f"| `{name}` | {own} | {'unbounded' if w is None else w} | {b} | {'ok' if ok else 'OVER BOUND'} |")
    print(f"external functions charged the allowance: {', '.join(externals) or 'none'}")
    if tsv:
        with open(tsv, "w") as out:
            for name, own, w, b in rows:
                out.write(f"{target}\t{name}\t{own}\t{'unbounded' if w is None else w}\t{b}\n")
    if not rows:
        print("no entry points found")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
