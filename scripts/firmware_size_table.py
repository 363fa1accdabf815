#!/usr/bin/python3
"""docs/firmware.md's per-board table: flash, static RAM and stack of the
size images (tests/firmware/size) for each core and optimization level.

  flash      = text + data of the image (Berkeley `size`, any ELF)
  static RAM = data + bss (the image's own buffers and the library's statics;
               the linker script's stack reservation is not counted, also
               where it is a .stack section: picolibc.ld on RISC-V)
  stack      = the worst chain of frames from main(), from GCC's call graphs
               (-fstack-usage -fcallgraph-info=su of the library build and of
               main.c), walked as scripts/stack_report.py walks them: an
               indirect call is charged the deepest port kernel, a function
               outside the library (newlib, picolibc, libgcc) 128 bytes.

usage: firmware_size_table.py <spec>...
  spec = board|opt|lib build dir|firmware build dir
Prints a markdown table; exits 1 if an image is missing or a stack unbounded.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stack_report  # noqa: E402

VARIANTS = [("fp32", "fp32"), ("fp32_selftest", "fp32 + self-test"),
            ("int8", "int8"), ("int8_selftest", "int8 + int8 self-test")]


def stack_section(elf):
    """Bytes of a .stack section (picolibc.ld reserves the stack as one, which
    Berkeley size counts as bss; sections.ld on the Cortex-M boards has none)."""
    out = subprocess.run(["size", "-A", elf], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0] == ".stack":
            return int(fields[1])
    return 0


def graph(folders):
    nodes, edges = {}, {}
    for folder in folders:
        n, e = stack_report.load(folder)
        for title, info in n.items():
            if title not in nodes or (info["bytes"] is not None and nodes[title]["bytes"] is None):
                nodes[title] = info
        for title, callees in e.items():
            edges.setdefault(title, set()).update(callees)
    return nodes, edges


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    failed = 0
    print("| board | opt | " + " | ".join(f"{label}: flash / static RAM / stack" for _, label in VARIANTS) + " |")
    print("|---|---|" + "---:|" * len(VARIANTS))
    for spec in sys.argv[1:]:
        board, opt, lib_dir, fw_dir = spec.split("|")
        cells = []
        for variant, _ in VARIANTS:
            elf = os.path.join(fw_dir, f"size_{variant}.elf")
            try:
                out = subprocess.run(["size", elf], check=True, capture_output=True, text=True).stdout
                text, data, bss = (int(x) for x in out.splitlines()[1].split()[:3])
                bss -= stack_section(elf)
            except (OSError, subprocess.CalledProcessError, IndexError, ValueError):
                cells.append("missing")
                failed = 1
                continue
            # The library's graphs and this variant's main.c (one object each).
            nodes, edges = graph([lib_dir, os.path.join(fw_dir, "CMakeFiles", f"size_{variant}.dir")])
            kernels = [t for t, n in nodes.items() if "/ports/backends/" in n["file"] and n["bytes"] is not None]
            stack = stack_report.worst("main", nodes, edges, kernels, {}, set()) if "main" in nodes else None
            if stack is None or nodes["main"]["bytes"] is None:
                stack = None
                failed = 1
            cells.append(f"{text + data} / {data + bss} / {'?' if stack is None else stack}")
        print(f"| {board} | {opt} | " + " | ".join(cells) + " |")
    return failed


if __name__ == "__main__":
    sys.exit(main())
