#!/usr/bin/python3
"""Attributes an insncount.c profile to functions.

usage: attribute.py ELF PROFILE [BASELINE_PROFILE]
Prints instructions per function (PROFILE minus BASELINE_PROFILE when given),
largest first, using the ELF's symbol table (arm-none-eabi-nm).
"""
import bisect
import subprocess
import sys


def load(path):
    counts = {}
    with open(path) as f:
        for line in f:
            addr, n = line.split()
            counts[int(addr, 16)] = int(n)
    return counts


def main():
    elf, prof = sys.argv[1], sys.argv[2]
    counts = load(prof)
    if len(sys.argv) > 3:
        for addr, n in load(sys.argv[3]).items():
            counts[addr] = counts.get(addr, 0) - n
    nm = subprocess.run(["arm-none-eabi-nm", "-C", "-n", "--defined-only", elf], check=True,
                        capture_output=True, text=True).stdout
    starts, names = [], []
    for line in nm.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "tTwW":
            starts.append(int(parts[0], 16) & ~1)
            names.append(parts[2])
    per_function = {}
    for addr, n in counts.items():
        i = bisect.bisect_right(starts, addr) - 1
        name = names[i] if i >= 0 else "?"
        per_function[name] = per_function.get(name, 0) + n
    total = sum(per_function.values())
    for name, n in sorted(per_function.items(), key=lambda kv: -kv[1]):
        if n:
            print(f"{n:9d} {100.0 * n / total:5.1f}%  {name[:110]}")
    print(f"{total:9d} total")


if __name__ == "__main__":
    main()
