#!/usr/bin/env python3
"""Writes the performance page, its plot and the README's summary from one bench run.

bench/run.sh leaves in its output directory (RUN_DIR) what this script reads:
machine.txt (CPU, compilers, libraries, tree), peers.md (bench/peers),
models.md (bench/models_bench.cc), board/insns.md, board/insns_f16.md,
board/insns_i8.md, board/insns_models.md and board/size.md (bench/board),
arm/arm.md (bench/qemu/arm_ratio.sh) and compile_time.txt
(scripts/umbrella-compile-time). Every number on the page comes from those
files, so the tables, the plot and the summary all describe the same run.

  bench/report.py RUN_DIR [--out DIR]   write DIR/performance.md and
                                        DIR/performance-forward-gflops.svg (DIR defaults
                                        to RUN_DIR); with DIR the repository's docs/, also
                                        the summary in README.md's Performance section
  bench/report.py --check [RUN_DIR]     docs/performance.md, its plot and the README's
                                        summary are this script's output, unedited (the
                                        page's first line holds their digest); with
                                        RUN_DIR, also exactly what that run gives

The page's prose lives here: edit this script and regenerate, not the page.
"""
import argparse
import hashlib
import html
import os
import re
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE, PLOT = "performance.md", "performance-forward-gflops.svg"
README_BEGIN = "<!-- performance summary: bench/report.py writes the lines up to the end marker -->"
README_END = "<!-- end of performance summary -->"
DIGEST = re.compile(r"^<!-- bench/report\.py wrote this page .* digest ([0-9a-f]{16}) -->$")


class Table:
    def __init__(self, header, rows):
        self.header, self.rows = header, rows

    def col(self, name):
        return self.header.index(name)

    def column(self, name):
        i = self.col(name)
        return [r[i] for r in self.rows]


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def tables(text):
    """Every markdown table of a text, in order."""
    found, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|[-:|]+\|?$", lines[i + 1].strip()):
            header, rows = cells(lines[i]), []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            found.append(Table(header, rows))
        else:
            i += 1
    return found


def find(tabs, what, *needles):
    """The one table whose header holds every needle."""
    hits = [t for t in tabs if all(any(n == h for h in t.header) for n in needles)]
    if len(hits) != 1:
        raise SystemExit(f"report.py: {what}: expected one table with columns {needles}, found {len(hits)}")
    return hits[0]


def read(run, rel):
    path = os.path.join(run, rel)
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise SystemExit(f"report.py: {path}: {e.strerror} (is {run} the output directory of bench/run.sh?)")


def num(cell):
    """The first number in a cell: '45.40 us' -> 45.4, '1.05x' -> 1.05, '83%' -> 83."""
    m = re.search(r"-?\d+(?:\.\d+)?(?:e[-+]\d+)?", cell.replace(",", ""))
    return float(m.group(0)) if m else None


def times(cell):
    """A ratio as the page writes it: '1.05x' -> '1.05×'."""
    return re.sub(r"(\d)x\b", "\\1×", cell)


def grouped(n):
    return f"{int(n):,}"


def short(label, sep=", "):
    """'tinyattn/highway (AVX3) default forward()' -> 'highway (AVX3, default)' + sep + 'forward()'."""
    m = re.match(r"tinyattn/(\w+) \(([^)]*)\)( default)?,? ?(.*)$", label)
    if not m:
        return label
    port, target, default, rest = m.groups()
    name = port if target == port else f"{port} ({target}{', default' if default else ''})"
    if default and target == port:
        name += " (default)"
    return name + (sep + rest if rest else "")


def span(values, fmt="{:.2f}×"):
    lo, hi = min(values), max(values)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else fmt.format(lo) + "–" + fmt.format(hi)


def md_table(header, rows, align=None):
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


# --- the run ---------------------------------------------------------------------------------------


class Host:
    """The host tables of one peers_bench run (peers.md): the forward, its
    parts, the small shapes, the softmax rows and passes."""

    def __init__(self, peers):
        m = re.search(r"Measured (.+?) on (.+?), pinned to CPU (\d+), (\d+) repetitions", peers)
        self.measured, self.cpu_line, self.pinned, self.reps = m.group(1), m.group(2), m.group(3), int(m.group(4))
        m = re.search(r"widest vectors (?:this CPU has|in use) \(([^,]+), 12 independent (\d+)-lane FMA chains\): "
                      r"\*\*(\d+) GFLOP/s", peers)
        self.peak_isa, self.peak_lanes, self.peak = m.group(1), int(m.group(2)), int(m.group(3))
        m = re.search(r"With 256-bit vectors .* the peak is (\d+) GFLOP/s", peers)
        self.peak_256 = int(m.group(1)) if m else None
        m = re.search(r"cycles per 8 floats at ([\d.]+) GHz .* two (\d+)-lane FMA pipes", peers)
        self.pass_ghz, self.pass_lanes = m.group(1), m.group(2)
        t = tables(peers)
        self.forward = find(t, "forward", "implementation", "GFLOP/s")
        self.parts = find(t, "parts alone", "part", "% of peak (FLOPs of both products)")
        self.small = find(t, "small shapes", "part", "speed vs fastest peer")
        self.softmax = find(t, "softmax rows", "row length", "rows")
        self.passes = find(t, "softmax passes", "implementation", "exp and sum")
        self.fixed_cost = find(t, "softmax() fixed cost", "port", "fixed cost per call")

    # Figures by shape and implementation.
    def forward_cells(self):
        t = self.forward
        shapes, impls, at = [], [], {}
        for r in t.rows:
            shape, impl = r[0], r[1]
            if shape not in shapes:
                shapes.append(shape)
            if impl not in impls:
                impls.append(impl)
            at[shape, impl] = r
        return shapes, impls, at

    def default_label(self):
        return next(i for i in self.forward_cells()[1] if i.endswith(" default"))


class Run(Host):
    def __init__(self, run):
        self.machine = {}
        for line in read(run, "machine.txt").splitlines():
            key, sep, value = line.partition(": ")
            if sep:
                self.machine[key] = value
        peers = read(run, "peers.md")
        Host.__init__(self, peers)
        self.avx2 = Host(read(run, "avx2/peers.md")) if os.path.exists(os.path.join(run, "avx2", "peers.md")) else None
        t = tables(peers)
        self.scaling = find(t, "time per key", "M")
        self.masks = find(t, "masks", "mask", "keys kept")
        b = tables(read(run, "board/insns.md"))
        self.f32 = find(b, "fp32 forward", "fp32 forward (N,M,Dk,Dv)")
        self.f32_m55 = find(b, "fp32 forward on the M55", "fp32 forward (N,M,Dk,Dv), M55")
        self.selftest = find(b, "self-test", "self-test")
        self.api = find(b, "forward() against Attention<Shape>", "shape (N,M,Dk,Dv)", "Attention<Shape>")
        self.per_element = find(b, "instructions per element", "(32,32,32,32) forward")
        self.f16 = find(tables(read(run, "board/insns_f16.md")), "fp16", "softmax port")
        i8_all = [x for x in tables(read(run, "board/insns_i8.md")) if x.header[0] == "int8 forward (N,M,Dk,Dv)"]
        i8 = [x for x in i8_all if not any("TFLite" in h for h in x.header)]
        tfl = [x for x in i8_all if any("TFLite" in h for h in x.header)]
        if len(i8) != 2 or len(tfl) != 1:
            raise SystemExit("report.py: board/insns_i8.md: expected two int8 tables and the TFLite mode's")
        self.i8 = i8
        self.i8_tflite = tfl[0]
        size = read(run, "board/size.md")
        self.size = tables(size)[0]
        m = re.search(r"fixed-extent entries: (\d+) bytes in (\d+) entries", size)
        self.fixed_entries = (int(m.group(1)), int(m.group(2))) if m else None
        m = re.search(r"```\n(.*?)```", size, re.S)
        self.largest = m.group(1).rstrip("\n") if m else ""
        self.arm = self.arm_tables(read(run, "arm/arm.md"))
        self.neon = find(tables(read(run, "arm/neon.md")), "AArch64 NEON instructions", "shape", "Eigen / port")
        self.models = self.model_tables(read(run, "models.md"), read(run, "board/insns_models.md"))
        self.compile_time = self.compile_lines(read(run, "compile_time.txt"))

    @staticmethod
    def model_tables(host, board):
        """{'prefill': Table, ...} for the host ('host ...') and the boards ('board ...')."""
        out = {}
        for where, text in (("host", host), ("board", board)):
            for t in tables(text):
                kind = {"prefill": "prefill", "decode": "decode", "memory-bound decode": "bandwidth",
                        "prefill against the peers, one head": "peers"}.get(
                    t.header[0]) or ("widths" if t.header[0].startswith("odd head width") else "keys")
                key = f"{where} {kind}"
                if key in out and kind == "keys":  # the boards' decode key counts: a table of their own
                    key += " decode"
                out[key] = t
        want = ["host prefill", "host decode", "host bandwidth", "host widths", "host keys", "board prefill",
                "board decode", "board widths", "board keys", "board keys decode"]
        missing = [k for k in want if k not in out]
        if missing:
            raise SystemExit(f"report.py: models.md / board/insns_models.md: no table for {missing}")
        return out

    @staticmethod
    def arm_tables(text):
        out = []
        for part in re.split(r"^#### ", text, flags=re.M)[1:]:
            title, _, body = part.partition("\n")
            out.append((title.strip(), tables(body)[0]))
        return out

    @staticmethod
    def compile_lines(text):
        """[(compiler, {'empty': (min, median, lines), 'umbrella': ...})]"""
        out = []
        for line in text.splitlines():
            m = re.match(r"(empty|umbrella)\s+min\s+(\d+) ms\s+median\s+(\d+) ms CPU\s+(\d+) preprocessed lines", line)
            if m and out:
                out[-1][1][m.group(1)] = tuple(int(m.group(k)) for k in (2, 3, 4))
            elif line.strip() and not m:
                out.append((line.split(",")[0], {}))
        return out


# --- the page --------------------------------------------------------------------------------------

INTRO = """\
# Performance

What `bench/` measures and what it measured in one run on one machine: every
table and the plot below come from that run (`bench/run.sh`, described once
under "The machine"), written by `bench/report.py`; edit the script and
regenerate, not this page. Benchmarks report; they never assert a time.
Ratios within the run are the figures to read: absolute times on a shared
machine move between runs."""

RUNNING = """\
## Running it

A measurement takes minutes of a quiet CPU (and builds for seven boards), so
the test command leaves these to `scripts/doc_commands.py run DIR --measure`:

<!-- doc-run: measure -->
```sh
bench/run.sh --update-docs  # everything below into build-bench/ (OUT=DIR for another), then this page, its plot and the README's summary from that run
bench/report.py --check build-bench  # this page is exactly what that run gives
bench/run.sh --quick        # 5 host repetitions instead of 11; the page only in build-bench/performance.md
bench/report.py build-bench --out docs  # this page, its plot and the README's summary again from a run's directory
build-bench/host/peers_bench --small  # only the small shapes' API table, in about a second
TINYATTN_HWY_TARGET=AVX2 build-bench/host/peers_bench --small  # the same with Highway forced to one target this CPU runs (AVX2, SSE4, ...)
build-bench/host/peers_bench --avx2-cpu --out build-bench/avx2  # the host tables with every implementation limited to AVX2, in about 3 minutes
build-bench/host/peers_bench --softmax  # only the softmax tables, in about 3 s
bench/board/count.sh      # only the Cortex-M fp32 instruction counts (build-bench-board/insns.md + per-function profiles)
bench/board/count_api.sh  # only forward() against Attention<Shape> on the M4F and M55 (build-bench-board/insns_api.md)
bench/board/count_f16.sh  # only the fp16 forward on the M55 (build-bench-board/insns_f16.md)
bench/board/count_i8.sh   # only the int8 forward on every board (build-bench-board/insns_i8.md + per-function profiles)
bench/board/count_models.sh  # only the model shapes on the M4F and M55 (build-bench-board/insns_models.md)
build-bench/host/models_bench --quick  # only the model shapes' host tables, in a few seconds
bench/board/size.sh       # only the Cortex-M code sizes (build-bench-board/size.md)
bench/qemu/arm_ratio.sh   # only the Arm Linux ratio tables under qemu-user (build-bench-arm/arm.md)
bench/qemu/neon_count.sh  # only the AArch64 NEON instruction counts against the scalar port and Eigen (build-bench-arm/neon.md)
build/bench/forward_bench # the Google Benchmark program (bench/forward_bench.cc), built with the project
scripts/umbrella-compile-time  # CPU time to compile one file that includes tinyattn/tinyattn.h
```

Needs `libeigen3-dev`, `libdnnl-dev`, `gcc-arm-none-eabi` (+ newlib), the
RISC-V ELF toolchain (`gcc-riscv64-unknown-elf`, picolibc), `qemu-system-arm`,
`qemu-system-misc`, `g++-aarch64-linux-gnu`, `g++-arm-linux-gnueabihf` and
`qemu-user`. The test command checks, on every run, that this page, its plot
and the README's summary are the generator's output, unedited:

```sh
bench/report.py --check
```"""

METHOD = """\
## Method

* **Host.** `bench/peers/peers_bench` pins itself to one CPU
  (`sched_setaffinity`), runs every implementation on that thread and reports
  the median of 11 samples (5 with `--quick`) of thread CPU time
  (`CLOCK_THREAD_CPUTIME_ID`), each sample looping the call for at least
  2 ms. The samples of a table's implementations alternate (one of each per
  round), so all of them see the same load on a machine whose speed drifts;
  measured one after another, ratios at one shape moved by 20% and more. CPU
  time rather than wall time: time spent descheduled is not the code's.
* **A default build, the widest vectors.** tinyattn is configured as a plain
  `cmake -B build` configures it: Highway with run-time dispatch,
  `Port::kDefault` the fastest port built (marked "default"), and the default
  workspace (`kDefaultScratch`, which holds a tile of K transposed where
  N ≥ 32); "minimal workspace" rows pass `Scratch::kMinimal`. The xsimd port
  is built too. `bench/run.sh` adds `-march=haswell -maes -mpclmul` as the
  baseline every implementation is compiled for (so Eigen's vectors are
  AVX2+FMA); Highway still dispatches to its AVX-512 target (AVX3) on a CPU
  that has it, and oneDNN picks its own ISA, on one OpenMP thread.
* **FLOPs** count as 2·N·M·Dk + 2·N·M·Dv. The **FMA peak** is twelve
  independent chains of FMAs at the widest vectors the CPU has: 16-lane
  AVX-512 `vfmadd` where it has AVX-512F (built for it whatever the flags,
  chosen at run time), else 8-lane AVX2 (`bench/peers/fma_peak.cc`), sampled
  in the same rounds as each table's rows. Every "% of peak" is of that one.
* **Peers**, built in the same run: a plain row-by-row triple loop with
  `std::exp`; Eigen (two GEMMs around a vectorised row softmax,
  `EIGEN_DONT_PARALLELIZE`); oneDNN (matmul with the scale as an output
  scale, softmax, matmul; primitives created once per shape). Every Y is
  compared with the triple loop's, so none can win by computing something
  else.
* **Parts alone**, at the three large shapes, in the same alternating rounds
  as the forwards they are set against: oneDNN's two matmuls without the
  softmax between them; each port's products alone
  (`scores_block_transposed` and `weighted_sum_block` over every block of
  four rows and every tile of at most 256 keys, K transposed once
  beforehand), and each of the two alone (Q·Kᵀ: `scores_block_transposed`;
  P·V: `weighted_sum_block` on fixed weights); and each port's softmax alone
  (`row_max` and `exp_shift_sum` over N rows of M scores). Products plus
  softmax alone is about the most a forward built from those parts can
  reach; the fastest products plus that softmax, about the most a forward
  with that softmax can.
* **Small shapes**, (8,8,16,16) and (16,16,32,32): `forward()` (on the
  problem's `std::vector`s, and on copies placed on a cache line and 16 bytes
  past one), the compile-time API (`Attention<Shape<...>>`, its std::array
  form), and each port's fused block kernel (`attend_block`) and
  fixed-extent entry (`attend_fixed`, the one both APIs run at these shapes)
  called directly on every block, without the argument checks and the
  driver's loops, against the fastest peer.
* **Softmax rows**: max, exp-and-sum, scale, in place, on one matrix of 4096
  floats per implementation (4096 / n rows of n; 16 KB, in L1; every matrix
  on a 64-byte boundary), ns per element. Peers: libmvec's `expf`, vectorised
  by GCC (a `#pragma omp simd` loop over `std::exp` at `-O3 -ffast-math
  -fopenmp-simd`) and called directly, 8-lane (`_ZGVdN8v_expf`) and, where
  the CPU has AVX-512F, 16-lane (`_ZGVeN16v_expf`); Eigen's row softmax, also
  built for AVX-512 where the CPU has it. tinyattn: `tinyattn::softmax` once
  per row and `tinyattn::softmax_rows` once for the matrix. Ratios are
  against the fastest libmvec form and the faster Eigen of the same rounds.
  The passes table takes each pass alone over one row of 4096 floats, with
  the FMA peak loop in the same rounds for the clock.
* **Decode and prefill**: time per query row and key at Dk = Dv = 64, N = 1
  and N = 64, M from 64 to 8192 (M > 256 takes the tiled online softmax), no
  weights output. **Masks**: at (256,256,64,64), each mask's time over the
  unmasked time, beside the share of (query, key) pairs it keeps.
* **Boards.** `bench/board/forward_insns.cc` runs one forward on QEMU's
  mps2-an386 (Cortex-M4F), mps2-an500 (Cortex-M7, FPv5-D16), mps2-an505
  (Cortex-M33, with its single-precision FPU and without one: soft float) or
  mps3-an547 (Cortex-M55); int8 also as Armv6-M code (`-mcpu=cortex-m0`) on
  mps2-an385 and as rv32imac on QEMU's RISC-V virt board. A TCG plugin
  (`bench/qemu/insncount.c`, one inline counter per executed instruction:
  exact and repeatable) counts the run; every figure is one warm call,
  insns(2 calls) − insns(1 call), identical inputs on every board and port.
  The images are built by CMake as the test images are (startup code and
  linker script from `ports/targets/`), through the `*-bench` presets: `-O2`,
  the scalar port and the core's SIMD port (DSP on the M4F, M7 and M33,
  Helium on the M55), no Highway; each column names the port the call ran.
  `bench/qemu/attribute.py` splits a count by function (the profiles beside
  the tables). `forward_i8_insns.cc` does the same for `forward_i8` (scales
  1/64, zero points −3, 5, −7 and 2 for Q, K, V and Y; the plan made before
  the counted call), and `count_i8.sh` first checks that every board and port
  prints the same output checksum (the int8 path is bit-exact).
  `forward_f16_insns.cc` runs the fp16 forward on the M55, widened to fp32
  products or with native fp16 products.
* **Reference counts.** Two columns set a port against code not built here,
  counted once with the same method, compiler and flags on the M4F, and
  held as constants by the scripts: a plain C fp32 forward (scores, `expf`
  and P·V per row; `count.sh`) and CMSIS-NN's int8 attention as TFLM composes
  it (`arm_batch_matmul_s8`, `arm_softmax_s8`, `arm_transpose_s8`,
  `arm_batch_matmul_s8`; `count_i8.sh`), whose inputs were quantized its own
  way (tinyattn's int8 path takes the same branches whatever the values,
  except where a logit saturates).
* **Code size.** `bench/board/forward_size.cc` at `-Os -ffunction-sections
  -fdata-sections -Wl,--gc-sections` (the `cortex-m4-size` and
  `cortex-m55-size` presets), once calling `Attention<Shape<16,16,32,32>>`
  and once not: the difference in `.text`. The int8 figure is the same with
  `AttentionI8` of the same shape run on a plan given as integers (so no
  floating point is linked). Each image is built with its port as the
  build's default (`-DTINYATTN_DEFAULT_PORT=...`); calls without Options bind
  that port at compile time, so an image links one port's kernels.
* **Arm Linux.** `bench/port_ratio.cc` times the fp32 forward per compiled-in
  port at three shapes (median of 5 samples of at least 50 ms of thread CPU
  time); `bench/qemu/arm_ratio.sh` builds it from the `aarch64` and `armv7`
  presets and runs it under qemu-user. Emulated, so not performance: QEMU's
  TCG translates every NEON or SVE instruction into several host
  instructions (SVE ones often into helper calls), so a SIMD port does not
  run faster than scalar code the way it would on a core. The table shows
  which SIMD code each port runs (`KernelsF32::simd_target`) and that it
  computes the same forward.
* **Compile time.** `scripts/umbrella-compile-time`: CPU time (user +
  system) to compile one file that includes `tinyattn/tinyattn.h` against an
  empty one, `-std=c++17 -O2`, 10 runs each, and the preprocessed size."""


def machine_section(r):
    m = r.machine
    labels = r.forward_cells()[1]
    ports = [short(x) for x in labels if x.startswith("tinyattn/") and "minimal" not in x]
    ports = [p.replace(", default)", "; the default port)") for p in ports]
    peak = f"{r.peak} GFLOP/s, twelve {r.peak_lanes}-lane {r.peak_isa} FMA chains"
    if r.peak_256:
        peak += f" ({r.peak_256} GFLOP/s at 256-bit vectors)"
    tree = m.get("tree", "")
    rows = [
        ("run", f"{m.get('run', r.measured)}, commit `{m.get('commit', 'unknown')}`" + (f", {tree}" if tree else "")
         + (f"; the Cortex-M tables and sizes measured again at commit `{m['boards commit']}`"
            if m.get("boards commit") else "")),
        ("CPU", f"{m.get('cpu', r.cpu_line)} (family/model {m.get('cpu family/model', '?')}), "
                f"{m.get('cpus', '?')} CPUs{', under a hypervisor' if m.get('hypervisor') == 'yes' else ''}; "
                f"the host tables pinned to CPU {r.pinned}, {r.reps} repetitions"),
        ("vector extensions", m.get("vector flags", "?").replace(" ", ", ")),
        ("FMA peak", peak),
        ("tinyattn ports (SIMD target)", ", ".join(ports)),
        ("OS", m.get("os", "?")),
        ("host compiler", f"{m.get('host compiler', '?')}; {m.get('host flags', '')}"),
        ("peers", f"Eigen {m.get('eigen', '?')}, oneDNN {m.get('onednn', '?')}, glibc's libmvec"),
        ("SIMD libraries", f"Highway {m.get('highway', '?')}, xsimd {m.get('xsimd', '?')}"),
        ("Cortex-M compiler", m.get("arm-none-eabi", "?")),
        ("RISC-V compiler", m.get("riscv", "?")),
        ("Arm Linux compilers", f"{m.get('aarch64-linux-gnu', '?')}; {m.get('arm-linux-gnueabihf', '?')}"),
        ("QEMU", f"{m.get('qemu-system', '?')}; {m.get('qemu-user', '?')}"),
    ]
    return ("## The machine\n\nWhat `bench/run.sh` recorded (`machine.txt` of the run, and `peers_bench`'s "
            "header):\n\n" + md_table(["", ""], [[f"**{k}**", v] for k, v in rows], ["---", "---"]))


def forward_section(r):
    return f"## Host: fp32 forward, one core\n\n![GFLOP/s against shape]({PLOT})\n\n" + forward_tables(r)


def forward_tables(r):
    shapes, impls, at = r.forward_cells()
    t = r.forward
    gf, pct, sp, tm, df = (t.col(c) for c in ("GFLOP/s", "% of peak", "speed vs fastest peer", "time",
                                                "max abs diff vs triple loop"))
    body = [impl for impl in impls if impl != "FMA peak, same rounds"]
    rows_gf = [[short(i)] + [f"{at[s, i][gf]} ({at[s, i][pct]})" for s in shapes] for i in body]
    rows_gf.append(["FMA peak, same rounds"] + [at[s, "FMA peak, same rounds"][gf] for s in shapes])
    rows_t = [[short(i)] + [at[s, i][tm].replace(" us", "") for s in shapes] for i in body]
    rows_sp = [[short(i)] + [times(at[s, i][sp]) for s in shapes] for i in body if i.startswith("tinyattn/")]
    worst = max(num(at[s, i][df]) for s in shapes for i in body)
    return f"""\
GFLOP/s (% of the FMA peak sampled in the same rounds) by shape (N,M,Dk,Dv):

{md_table(["implementation"] + shapes, rows_gf)}

Time per call, µs:

{md_table(["implementation"] + shapes, rows_t)}

Speed against the fastest peer at each shape (the faster of Eigen and oneDNN):

{md_table(["implementation"] + shapes, rows_sp)}

Every implementation's Y is within {worst:.1e} of the triple loop's at every shape."""


def pivot(rows):
    """A long table of (shape, name, ...) rows as its shapes and names in
    first-seen order and each row by (shape, name)."""
    shapes, names, at = [], [], {}
    for row in rows:
        if row[0] not in shapes:
            shapes.append(row[0])
        if row[1] not in names:
            names.append(row[1])
        at[row[0], row[1]] = row
    return shapes, names, at


def parts_section(r, level="###"):
    t = r.parts
    shapes, names, at = pivot(t.rows)

    def cell(row):
        name, time, share = row[1], row[2], row[3].replace("**", "")
        if name.startswith("FMA peak"):
            return time
        if share.startswith("("):  # a part's time and its share of its port's forward
            return f"{time.replace(' us', ' µs')}, " + share.strip("()").replace(" of its forward's time", " of its forward")
        return share

    def label(n):
        n = re.sub(r"^bound: (\w+) products \+ softmax alone / fastest products alone \+ that softmax$",
                   r"\1 bound: its products + its softmax / fastest products + its softmax", n)
        n = re.sub(r"^75% of peak with the (\w+) softmax needs the products alone at$",
                   r"\1: the products alone need, for 75% of peak overall", n)
        n = re.sub(r"^(\w+) the rest: forward - Q K\^T - P V - softmax$", r"\1: the rest (forward − Q·Kᵀ − P·V − softmax)", n)
        n = n.replace(" Q K^T alone", " Q·Kᵀ alone").replace(" P V alone", " P·V alone")
        return short(n, ": ")

    rows = [[label(n)] + [cell(at[s, n]) for s in shapes] for n in names]
    return f"""\
{level} What bounds the share of peak: the parts alone

% of the FMA peak of the same rounds, counting the FLOPs of both products;
a softmax alone, each product alone and the rest of the forward (its time
less those three: the transposition of K, the rescaling, the driver's loops
and the cost of running the parts together) as a time and its share of its
port's forward. A bound row reads: its own products alone plus its softmax
alone / the fastest products alone plus its softmax alone.

{md_table(["part"] + shapes, rows)}"""


def small_section(r, level="###"):
    t = r.small
    shapes, names, at = pivot(t.rows)
    rows = [[short(n, ": ")] + [f"{at[s, n][2].replace(' us', ' µs')}, {times(at[s, n][3])}" if (s, n) in at else "–"
                          for s in shapes] for n in names]
    return f"""\
{level} Small shapes: the two APIs and the kernels alone

Time per call and speed against the fastest peer of the same rounds:

{md_table(["call"] + shapes, rows)}"""


def softmax_section(r, level="###"):
    t = r.softmax
    h = t.header
    peers = [c for c in h[2:] if c.startswith("libmvec") or c.startswith("Eigen")]
    per_row = [c for c in h if c.endswith(" softmax() per row")]
    rows_peer = [[row[0], row[1]] + [row[t.col(c)] for c in peers] for row in t.rows]
    rows_ta = []
    for row in t.rows:
        out = [row[0]]
        for c in per_row:
            i = h.index(c)  # per row, x libmvec, softmax_rows(), x libmvec, x Eigen
            out.append(f"{row[i + 2]} ({times(row[i + 3])}, {times(row[i + 4])})")
            out.append(f"{row[i]} ({times(row[i + 1])})")
        rows_ta.append(out)
    head_ta = ["row length"]
    for c in per_row:
        port = short(c[: -len(" softmax() per row")])
        head_ta += [f"{port}: softmax_rows()", "softmax() per row"]
    passes = [[short(row[0])] + row[1:] for row in r.passes.rows]
    return f"""\
{level} Softmax rows

The peers, ns per element:

{md_table(["row length", "rows"] + peers, rows_peer)}

tinyattn, ns per element (speed against the fastest libmvec form; for
`softmax_rows()` also against the faster Eigen):

{md_table(head_ta, rows_ta)}

The fixed cost of one `softmax()` call (its checks, the port's table, the
three row passes called one after another): ns per row with one `softmax()`
call per row, less ns per row with one `softmax_rows()` call for all rows,
beside the fastest libmvec form's ns per row:

{md_table(["port", "row length", "softmax() per row", "softmax_rows() per row", "fixed cost per call",
           "fastest libmvec form per row"], [[short(row[0])] + row[1:] for row in r.fixed_cost.rows])}

Each pass alone over one row of 4096 floats, cycles per 8 floats at the
clock the FMA peak loop implies in the same rounds ({r.pass_ghz} GHz, counting
two {r.pass_lanes}-lane FMA pipes):

{md_table(r.passes.header, passes, ["---"] + ["---:"] * 4)}"""


def scaling_section(r):
    return f"""\
### Decode and prefill: time per key as M grows

ns per query row and key, Dk = Dv = 64, no weights output:

{md_table(r.scaling.header, r.scaling.rows)}

### Masks at (256,256,64,64)

Time relative to the unmasked forward, beside the share of (query, key)
pairs the mask keeps:

{md_table(r.masks.header, r.masks.rows, ["---"] + ["---:"] * (len(r.masks.header) - 1))}"""


# --- boards ----------------------------------------------------------------------------------------

SHAPES = ["(16,16,32,32)", "(32,32,32,32)", "(64,64,64,64)"]


def board_counts(tabs, core_of):
    """{(core, port): {shape: count}} and {(core, port): (reference, {shape: ratio})} from count tables."""
    counts, refs = {}, {}
    for t in tabs:
        names = {}
        for j, name in enumerate(t.header[1:], 1):
            if "/" not in name:
                names[name] = core_of(name)
                counts[names[name]] = {row[0]: int(row[j]) for row in t.rows}
        for j, name in enumerate(t.header[1:], 1):
            m = re.match(r"(.+?) / (plain C|CMSIS-NN M4F)", name)
            if not m:
                continue
            who = m.group(1)
            match = [names[who]] if who in names else [k for n, k in names.items() if n.startswith(who + " ")]
            if not match and CORE.match(who):  # 'M33 dsp' for the column 'M33 no FPU, dsp'
                core, port = core_port(who)
                match = [k for k in names.values() if k[1] == port and k[0].startswith(core)]
            if len(match) != 1:
                raise SystemExit(f"report.py: no one count column for the ratio column {name!r}")
            ref = "a plain C loop" if m.group(2) == "plain C" else "CMSIS-NN's int8 composition"
            refs[match[0]] = (ref, {row[0]: row[j] for row in t.rows})
    return counts, refs


CORE = re.compile(r"^(M33 no FPU|Armv6-M|RV32|M\w+),? (.+)$")


def core_port(name, default_core=None):
    """'M4F dsp' -> ('M4F', 'dsp'); 'M33 no FPU, scalar' -> ('M33 no FPU', 'scalar'); M55 table: ('M55', name)."""
    if default_core:
        return default_core, name
    m = CORE.match(name)
    if not m:
        raise SystemExit(f"report.py: a board column this script does not know: {name!r}")
    return m.group(1), m.group(2)


def counts_table(counts, refs, order):
    rows = []
    for key in order:
        if key not in counts:
            continue
        c = counts[key]
        core, port = key
        scalar = counts.get((core, "scalar"))
        vs_scalar = "–" if port.startswith("scalar") or not scalar else \
            " / ".join(f"{scalar[s] / c[s]:.2f}×" for s in SHAPES)
        ref = refs.get(key)
        vs_ref = " / ".join(times(ref[1][s]) for s in SHAPES) + f" of {ref[0]}" if ref else "–"
        rows.append([f"{core}, {port}"] + [grouped(c[s]) for s in SHAPES] + [vs_scalar, vs_ref])
    return md_table(["core, port"] + SHAPES + ["fewer than scalar", "against the reference"], rows,
                    ["---"] + ["---:"] * 3 + ["---", "---"])


def boards_section(r):
    counts, refs = board_counts([r.f32], core_port)
    m55, _ = board_counts([r.f32_m55], lambda n: core_port(n, "M55"))
    counts.update(m55)
    order = [("M4F", "scalar"), ("M4F", "dsp"), ("M7", "scalar"), ("M7", "dsp"), ("M33", "scalar"),
             ("M33", "dsp"), ("M33 no FPU", "scalar"), ("M33 no FPU", "dsp"), ("M55", "scalar"),
             ("M55", "scalar, no auto-vectorization"), ("M55", "mve")]
    fp32 = counts_table(counts, refs, order)

    i8c, i8r = board_counts(r.i8, core_port)
    order_i8 = [("M4F", "scalar"), ("M4F", "dsp"), ("M7", "scalar"), ("M7", "dsp"), ("M33 no FPU", "scalar"),
                ("M33 no FPU", "dsp"), ("Armv6-M", "scalar"), ("RV32", "scalar"), ("M55", "scalar"),
                ("M55", "scalar, no auto-vectorization"), ("M55", "mve")]
    missing = [k for k in i8c if k not in order_i8] + [k for k in counts if k not in order]
    if missing:
        raise SystemExit(f"report.py: board columns this script does not place: {missing}")
    i8 = counts_table(i8c, i8r, order_i8)

    st = r.selftest
    api = r.api
    api_shapes, api_rows, at = [], [], {}
    for row in api.rows:
        if row[0] not in api_shapes:
            api_shapes.append(row[0])
        if row[1] not in api_rows:
            api_rows.append(row[1])
        at[row[0], row[1]] = row
    fwd, fix = api.col("forward()"), api.col("Attention<Shape>")
    api_md = md_table(["board, port"] + api_shapes,
                      [[b] + [f"{grouped(at[s, b][fwd])} / {grouped(at[s, b][fix])}" for s in api_shapes]
                       for b in api_rows])
    self_test = md_table(st.header, [[st.rows[0][0]] + [grouped(x) for x in st.rows[0][1:]]])
    f16 = md_table(r.f16.header, [row[:2] + [grouped(row[2]), grouped(row[3]), times(row[4])] for row in r.f16.rows],
                   ["---", "---", "---:", "---:", "---:"])
    pe = r.per_element
    t = r.i8_tflite
    tflite = md_table(t.header, [[row[0]] + [x if x.endswith("x") else grouped(x) for x in row[1:]] for row in t.rows])
    return f"""\
## Cortex-M and RISC-V under QEMU: executed instructions

Instructions per fp32 forward (one warm call), and how many times fewer
than the scalar port on the same core. The M33 without FPU runs every float
operation as a libgcc call; its DSP port keeps the scalar fp32 kernels there.
On the M55, GCC vectorizes parts of the scalar port with Helium at `-O2`;
the "no auto-vectorization" build shows it as plain scalar code.

{fp32}

The power-on self-test (`tinyattn::selftest()`, nothing printed):

{self_test}

The run-time `forward()` against the compile-time `Attention<Shape>` on its
std::arrays, instructions per call (`forward()` / `Attention<Shape>`);
"default" rows are the calls as a user writes them, without Options, on the
board's default port:

{api_md}

Where the (32,32,32,32) forward's instructions go (from the per-function
profiles): the exp per element, the block kernels per multiply-add, and the
Helium fused block per multiply-add with its softmax (the Helium forward
runs its fused block instead of the other kernels: 0 there):

{md_table(pe.header, pe.rows)}

The fp16 forward on the M55, widened to fp32 products against native fp16
products, with the scalar or the Helium port for the fp32 softmax:

{f16}

Instructions per int8 forward; every board and port gives the same output
bytes. Armv6-M code has no DSP port and no long multiply (libgcc's
`__muldi3`); RV32 is rv32imac with the scalar port:

{i8}

The TFLite-compatible int8 mode (`Int8Mode::kTflite`, docs/quant.md) on the
same tensors beside the native mode; its bytes too are the same on every
port:

{tflite}"""


def size_section(r):
    t = r.size
    rows = [[row[0]] + [grouped(x) for x in row[1:]] for row in t.rows]
    fixed = ""
    if r.fixed_entries:
        fixed = (f" Of the Cortex-M55 mve port's fp32 kernels, {grouped(r.fixed_entries[0])} bytes are the "
                 f"fused block's fixed-extent kernels ({r.fixed_entries[1]} linked).")
    return f"""\
## Code size

`.text` bytes one call of shape (16,16,32,32) adds at `-Os` with
`--gc-sections`, each image built with its port as the default; "of which
the port's kernels" counts the functions of the port's own namespace (the
DSP port's fp32 table reuses scalar kernels, which count in the total
only). The call is `Attention<Shape<16, 16, 32, 32>>`'s plain one, which
binds the table of its extent (docs/ports.md): the port's kernels of full
blocks of that extent and the scalar port's for what they decline. The int8
call is `AttentionI8`'s on a plan given as integers, native and in the
TFLite mode alone (`Int8Mode::kTflite`: its image links none of the native
mode's code, nor the other way round).{fixed}

{md_table(t.header, rows)}

The largest functions the Cortex-M4F's fp32 call brings in with the DSP port
(bytes; weak symbols, i.e. inline functions GCC kept out of line, included):

```text
{r.largest}
```"""


def arm_section(r):
    shapes, rows, diff = [], [], 0.0
    for title, t in r.arm:
        ports, at = [], {}
        for row in t.rows:
            if row[0] not in shapes:
                shapes.append(row[0])
            if row[1] not in ports:
                ports.append(row[1])
            at[row[0], row[1]] = row
            diff = max(diff, num(row[4]))
        for p in ports:
            rows.append([title, p] + [f"{times(at[s, p][3])} ({at[s, p][2]})" for s in shapes])
    return f"""\
## Arm Linux under qemu-user: fp32 forward, ratio to the scalar port

Emulated, so not performance (Method): the ratio to the scalar port under
the same emulator (GFLOP/s under emulation); every port's Y is within
{diff:.1e} of the scalar port's.

{md_table(["emulated CPU", "port (SIMD target)"] + shapes, rows, ["---", "---"] + ["---:"] * len(shapes))}

{neon_section(r)}"""


def neon_section(r):
    t = r.neon
    shapes, ports, at = pivot([[row[0], row[1]] + row[2:] for row in t.rows])
    label = {p: f"{p} ({at[shapes[0], p][2]})" if at[shapes[0], p][2] != p else p for p in ports}
    rows = [[label[p]] + [f"{grouped(at[s, p][3])} ({at[s, p][4]}; {times(at[s, p][5])}, {times(at[s, p][6])})"
                          for s in shapes] for p in ports]
    return f"""\
### AArch64 NEON: executed instructions

Instructions of one warm fp32 forward (`bench/qemu/neon_count.sh`: the
`aarch64` preset's library at `-O2`, under `qemu-aarch64 -cpu neoverse-n1`,
no SVE, with the TCG plugin; insns(2 calls) − insns(1 call), identical
inputs, every Y within 1e-5 of a double-precision reference). Each cell:
instructions (per multiply-add; times fewer than the scalar port, times fewer
than Eigen 3.4 built for AArch64 with the same compiler and flags):

{md_table(["port (SIMD target)"] + shapes, rows)}"""


def micro(cell):
    """'123456 ns' -> '123.5' (µs, three or more significant digits)."""
    us = num(cell) / 1000
    return f"{us:,.0f}" if us >= 100 else f"{us:.1f}" if us >= 10 else f"{us:.2f}"


def insns_cell(cell):
    """'82124577 (4.89)' -> '82,124,577 (4.89)'; any other cell (why it was not run) as it is."""
    m = re.match(r"^(\d+) \(([\d.]+)\)$", cell)
    return f"{grouped(m.group(1))} ({m.group(2)})" if m else cell


def models_section(r):
    t = r.models
    hp = t["host prefill"]
    prefill = md_table(["model", "Hq/Hkv", "D", "N", "causal", "fp32 µs", "fp32 GFLOP/s", "int8 µs", "int8 GOP/s"],
                       [row[:5] + [micro(row[5]), row[6], micro(row[7]), row[8]] for row in hp.rows],
                       ["---"] + ["---:"] * 3 + ["---"] + ["---:"] * 4)
    hd = t["host decode"]
    decode = md_table(["model", "Hq/Hkv", "D", "context", "KV cache per layer, KiB: fp32 / KvInt8 / int8",
                       "fp32 µs", "fp32 GFLOP/s", "KvInt8 µs", "KvInt8 GFLOP/s", "int8 µs", "int8 GOP/s"],
                      [row[:4] + [" / ".join(f"{num(c) / 1024:,.0f}" for c in row[4:7])]
                       + [micro(c) if i % 2 == 0 else c for i, c in enumerate(row[7:])] for row in hd.rows])
    hb = t["host bandwidth"]
    bandwidth = md_table(hb.header, [[times(c).replace(">= ", "≥ ") for c in row] for row in hb.rows],
                         ["---", "---"] + ["---:"] * 5)
    widths = md_table(t["host widths"].header,
                      [[times(c).replace(">= ", "≥ ") for c in row] for row in t["host widths"].rows],
                      ["---", "---"] + ["---:"] * 5)
    keys = md_table(t["host keys"].header, [[times(c) for c in row] for row in t["host keys"].rows])
    peers = ""
    if "host peers" in t:  # x86-64 builds with Eigen and oneDNN
        hpe = t["host peers"]
        peers = ("\n\nThe encoders' heads (not causal: the peers take no mask) against the peers of the\n"
                 "forward table above, one head each, sampled in the same rounds, beside a square\n"
                 "shape of the grid: the margin each model shape keeps.\n\n"
                 + md_table(hpe.header[:3] + [f"{h}, µs" for h in hpe.header[3:6]] + hpe.header[6:],
                            [row[:3] + [micro(c) for c in row[3:6]] + [times(row[6])] for row in hpe.rows],
                            ["---"] + ["---:"] * 6))
    bp = t["board prefill"]
    bprefill = md_table(["model"] + bp.header[1:],
                        [row[:5] + [grouped(row[5])] + [insns_cell(c) for c in row[6:]] for row in bp.rows],
                        ["---"] + ["---:"] * 3 + ["---"] + ["---:"] * (len(bp.header) - 5))
    bd = t["board decode"]
    bdecode = md_table(["model"] + bd.header[1:], [row[:4] + [grouped(row[4])] + [insns_cell(c) for c in row[5:]] for row in bd.rows])
    bw = t["board widths"]
    bwidths = md_table(bw.header, [[times(c) for c in row] for row in bw.rows], ["---", "---"] + ["---:"] * 4)
    bk = [t["board keys"], t["board keys decode"]]
    bkeys = "\n\n".join(md_table(k.header, [[times(c) for c in row] for row in k.rows]) for k in bk)
    return f"""\
## Model shapes: the attention of tiny transformers' layers

One layer's attention, all heads, at the shapes of small models run on
microcontrollers and edge CPUs: llama2.c's stories260K (8 query / 4 KV
heads of 8, context 512), stories15M (6 heads of 48, 256) and stories42M (8
heads of 64, 256 and 1024 tokens), SmolLM2-135M (9 query / 3 KV heads of 64,
2048), all decoders; and the encoders KWT-1 (keyword spotting: 1 head of 64,
99 tokens), MobileViT-XXS (4 heads of 20 over 64 tokens, 16 over 256, 24 over
16) and TinyBERT-4 (12 heads of 26, 128 tokens). Dk = Dv = D.

* **prefill**: one `forward()` over the whole sequence, N queries over N
  keys, causal (top-left) for the decoders; fp32, and int8 (`forward_i8`
  with a per-tensor plan made beforehand);
* **decode**: one `attend` of the last token of a static `KvCache` filled to
  the context (the token appended before the timed call), with fp32, `KvInt8<>`
  (int8 storage with a scale per token and KV head, fp32 compute) and `int8_t`
  storage (`forward_i8`, with a plan); the KV cache bytes per layer are
  `KvCache::kStorageBytes`.

FLOPs count the visible (query, key) pairs: 2 · Hq · pairs · (Dk + Dv), with
N(N+1)/2 pairs per head for a causal prefill of N tokens and C for a decode
step over C cached tokens; int8 counts its integer operations the same way
(GOP/s). The boards count multiply-adds likewise: pairs · (Dk + Dv) · Hq.

Host, default port, one pinned core (`bench/models_bench.cc`; median of the
run's repetitions), prefill:

{prefill}

Decode:

{decode}

Decode at contexts past L2 against the memory: the KV cache's bytes over
the step's time, and over the time of a streaming read of as many bytes on
the same core, sampled in the same rounds (the goal: 0.80× or more):

{bandwidth}

Odd head widths at the same heads, N and M as a power of two, GFLOP/s
sampled in the same rounds (the goal: 0.9× or more for 48 against 64,
0.75× or more for 20, 24 and 26 against 32):

{widths}

Odd key counts, GFLOP/s of the visible pairs, sampled in the same rounds:

{keys}{peers}

Boards (`bench/board/count_models.sh`): instructions per call under QEMU
(one warm call, as above) on the Cortex-M4F (mps2-an386) with the DSP port
and the Cortex-M55 (mps3-an547) with Helium, and in brackets per
multiply-add. Both boards have 4 MiB of RAM for data and stack: what does
not fit is not run. Prefill:

{bprefill}

Decode:

{bdecode}

Odd head widths: instructions per multiply-add at the odd width / at the
power of two = their ratio (the goal: within 20%, 1.20× or less):

{bwidths}

Odd key counts, instructions per multiply-add:

{bkeys}"""


def compile_section(r):
    rows = []
    for compiler, f in r.compile_time:
        e, u = f.get("empty"), f.get("umbrella")
        if not (e and u):
            continue
        rows.append([compiler, f"{e[0]} / {e[1]}", f"{u[0]} / {u[1]}", f"{u[1] - e[1]}", grouped(u[2])])
    return f"""\
## Compile time of `tinyattn/tinyattn.h`

CPU ms to compile one file, fastest / median of 10 runs:

{md_table(["compiler", "empty file", "including tinyattn/tinyattn.h", "the headers' own share (median)",
           "preprocessed lines"], rows)}"""


def one_row_softmax(r):
    """softmax()'s fixed cost per call and a loop of one-row calls against libmvec, at 16 floats."""
    t = r.fixed_cost
    row = next(x for x in t.rows if x[0] == r.default_label() and x[1] == "16")
    one, cost, mvec = num(row[t.col("softmax() per row")]), num(row[t.col("fixed cost per call")]), num(
        row[t.col("fastest libmvec form per row")])
    return (f"{cost:.1f} ns fixed cost per call; a loop of one-row calls {mvec / one:.2f}× the fastest libmvec "
            "`expf` form")


def summary(r):
    shapes, _, at = r.forward_cells()
    d = r.default_label()
    t = r.forward
    sp, pct = t.col("speed vs fastest peer"), t.col("% of peak")
    large = [s for s in shapes if s in ("(128,128,64,64)", "(256,256,64,64)", "(512,512,128,128)")]
    small = r.small
    small_at = {(row[0], row[1]): num(row[3]) for row in small.rows}
    s8, s16 = "(8,8,16,16)", "(16,16,32,32)"
    fwd, fixed = d + " forward()", d + " Attention<Shape> (compile-time API)"
    sm = r.softmax
    rows_col = next(c for c in sm.header if c.startswith(d) and c.endswith("softmax() per row"))
    i = sm.header.index(rows_col) + 3
    soft = [num(row[i]) for row in sm.rows]
    _, refs = board_counts([r.f32], core_port)
    m55, _ = board_counts([r.f32_m55], lambda n: core_port(n, "M55"))
    i8c, i8r = board_counts(r.i8, core_port)
    size = {row[0]: row for row in r.size.rows}
    peak_isa = "AVX-512" if r.peak_lanes == 16 else "AVX2"
    port = re.match(r"tinyattn/(\w+)", d).group(1)
    causal = next(row for row in r.masks.rows if row[0].startswith("causal, top-left"))
    mask_kept, mask_time = causal[1], causal[r.masks.col(f"{port} time ratio")]
    decode = [num(row[r.scaling.col(f"{port} N=1")]) for row in r.scaling.rows]
    ow, bw = r.models["host widths"], r.models["board widths"]
    pow2 = {row[0]: num(row[ow.col("fp32 ratio")]) for row in ow.rows}
    w48 = [v for k, v in pow2.items() if k.startswith("stories15M")]
    w_other = [v for k, v in pow2.items() if not k.startswith("stories15M")]

    def per_mac(col):
        return span([float(re.search(r"= ([\d.]+)x", row[bw.col(col)]).group(1)) for row in bw.rows])

    rows = [
        ["small shapes, default port: `forward()` / `Attention<Shape>`",
         f"{small_at[s8, fwd]:.2f}× / {small_at[s8, fixed]:.2f}× the fastest peer at {s8}, "
         f"{small_at[s16, fwd]:.2f}× / {small_at[s16, fixed]:.2f}× at {s16}"],
        ["large shapes, default port",
         ", ".join(at[s, d][pct] for s in large) + f" of the {peak_isa} FMA peak at {', '.join(large)}; "
         + span([num(at[s, d][sp]) for s in large]) + " the fastest peer"],
    ]
    if r.avx2:
        a_shapes, _, a_at = r.avx2.forward_cells()
        a_d, a_t = r.avx2.default_label(), r.avx2.forward
        rows.append(["large shapes, this CPU limited to AVX2, default port",
                     ", ".join(a_at[s, a_d][a_t.col("% of peak")] for s in large) + " of the AVX2 FMA peak; "
                     + span([num(a_at[s, a_d][a_t.col("speed vs fastest peer")]) for s in large])
                     + " the fastest peer limited to AVX2"])
    rows += [
        ["`softmax_rows`, default port", span(soft) + " the fastest libmvec `expf` form, rows of 16 to 4096 floats"],
        ["`softmax()` of one row of 16 floats, default port", one_row_softmax(r)],
        ["Cortex-M4F, DSP port: fp32 / int8 instructions",
         " / ".join(refs[("M4F", "dsp")][1][s] for s in SHAPES).replace("x", "×") + " of a plain C loop; "
         + " / ".join(i8r[("M4F", "dsp")][1][s] for s in SHAPES).replace("x", "×") + " of CMSIS-NN's int8"],
        ["Cortex-M55, Helium: fewer instructions than scalar",
         "fp32 " + span([m55[("M55", "scalar")][s] / m55[("M55", "mve")][s] for s in SHAPES])
         + ", int8 " + span([i8c[("M55", "scalar")][s] / i8c[("M55", "mve")][s] for s in SHAPES])],
        ["causal mask at (256,256,64,64), default port",
         f"{mask_time}× the unmasked time, keeping {mask_kept} of the (query, key) pairs"],
        ["decode (N = 1), default port, Dk = Dv = 64", f"{span(decode, '{:.2f}')} ns per key from M = "
         f"{r.scaling.rows[0][0]} to {r.scaling.rows[-1][0]}"],
        ["model shapes, fp32 prefill: odd head widths against a power of two",
         f"{span(w48)} the GFLOP/s at Dk = 48 vs 64, {span(w_other)} at 20, 24, 26 vs 32 (default port); "
         f"{per_mac('M4F dsp fp32')} (M4F, DSP) and {per_mac('M55 mve fp32')} (M55, Helium) the instructions "
         "per multiply-add"],
        ["code size of one fp32 / int8 shape, -Os, Cortex-M4F",
         f"{grouped(size['Cortex-M4F, scalar port'][1])} / {grouped(size['Cortex-M4F, scalar port'][3])} bytes "
         f"(scalar port), {grouped(size['Cortex-M4F, dsp port'][1])} / {grouped(size['Cortex-M4F, dsp port'][3])} "
         "(DSP port)"],
    ]
    cpu = r.machine.get("cpu", r.cpu_line)
    head = (f"One core of an {cpu} ({peak_isa}), a default build against Eigen and oneDNN of the same run; "
            "Cortex-M figures are executed instructions under QEMU, for (16,16,32,32) / (32,32,32,32) / "
            "(64,64,64,64).")
    return textwrap.fill(head, 88) + "\n\n" + md_table(["", "this run"], rows, ["---", "---"])


def svg(r):
    """GFLOP/s against shape, one polyline per implementation, from the forward table."""
    shapes, impls, at = r.forward_cells()
    gf = r.forward.col("GFLOP/s")
    series = [(short(i), [num(at[s, i][gf]) for s in shapes]) for i in impls if i != "FMA peak, same rounds"]
    longest = max(len(name) for name, _ in series)
    pw, left, top, bottom, h = 640.0, 70.0, 50.0, 60.0, 460.0
    right = 46.0 + 7.0 * longest
    w, ph = left + pw + right, h - top - bottom
    ymax = max([r.peak] + [g for _, v in series for g in v]) * 1.05
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"]

    def x(i):
        return left + pw * (i + 0.5) / len(shapes)

    def y(g):
        return top + ph * (1.0 - g / ymax)

    f = "{:.1f}".format
    o = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{f(w)}' height='{f(h)}' font-family='sans-serif' "
         "font-size='12'>", "<rect width='100%' height='100%' fill='white'/>",
         f"<text x='{f(left)}' y='20' font-size='14'>fp32 forward attention, one core, GFLOP/s by shape "
         "(N,M,Dk,Dv)</text>",
         f"<text x='{f(left)}' y='37' fill='#555'>{html.escape(r.machine.get('cpu', r.cpu_line))}, a default build; "
         "bench/run.sh, as in docs/performance.md</text>"]
    for k in range(6):
        g = ymax * k / 5
        o.append(f"<line x1='{f(left)}' x2='{f(left + pw)}' y1='{f(y(g))}' y2='{f(y(g))}' stroke='#ddd'/>"
                 f"<text x='{f(left - 8)}' y='{f(y(g) + 4)}' text-anchor='end'>{round(g)}</text>")
    o.append(f"<line x1='{f(left)}' x2='{f(left + pw)}' y1='{f(y(r.peak))}' y2='{f(y(r.peak))}' stroke='black' "
             f"stroke-dasharray='4,3'/><text x='{f(left + 6)}' y='{f(y(r.peak) - 5)}'>FMA peak, "
             f"{32 * r.peak_lanes}-bit vectors: {r.peak}</text>")
    for i, s in enumerate(shapes):
        o.append(f"<text x='{f(x(i))}' y='{f(top + ph + 20)}' text-anchor='middle' font-size='11'>{s}</text>")
    o.append(f"<text x='16' y='{f(top + ph / 2)}' transform='rotate(-90 16 {f(top + ph / 2)})' "
             "text-anchor='middle'>GFLOP/s</text>")
    for k, (name, values) in enumerate(series):
        c = colors[k % len(colors)]
        pts = " ".join(f"{f(x(i))},{f(y(g))}" for i, g in enumerate(values))
        o.append(f"<polyline fill='none' stroke='{c}' stroke-width='2' points='{pts}'/>")
        o += [f"<circle cx='{f(x(i))}' cy='{f(y(g))}' r='3' fill='{c}'/>" for i, g in enumerate(values)]
        ly = top + 20.0 * k + 40
        o.append(f"<line x1='{f(left + pw + 10)}' x2='{f(left + pw + 30)}' y1='{f(ly)}' y2='{f(ly)}' stroke='{c}' "
                 f"stroke-width='2'/><text x='{f(left + pw + 36)}' y='{f(ly + 4)}'>{html.escape(name)}</text>")
    o.append("</svg>")
    return "\n".join(o) + "\n"


def avx2_section(r):
    """The host tables again with every implementation limited to AVX2, where the run has them."""
    a = r.avx2
    if a is None:
        return ""
    return f"""\
## Host as an AVX2 CPU: this CPU limited to AVX2

Most x86 CPUs in use have AVX2 and no AVX-512. The same tables from a second
run of `peers_bench --avx2-cpu` in the same `bench/run.sh`: Highway forced to
its AVX2 target, oneDNN's ISA capped at AVX2 (`dnnl::set_max_cpu_isa`), Eigen
and the xsimd port built for AVX2 as always, the AVX-512 softmax forms left
out, and every "% of peak" of the 8-lane AVX2 FMA peak ({a.peak} GFLOP/s at the
start). The core is still this one (its caches, its two FMA pipes), so an
AVX2-only CPU of another design can rank the same code differently.

{forward_tables(a)}

{parts_section(a, "###")}

### softmax()'s fixed cost

As in the softmax table above, with libmvec's 8-lane forms only:

{md_table(["port", "row length", "softmax() per row", "softmax_rows() per row", "fixed cost per call",
           "fastest libmvec form per row"], [[short(row[0])] + row[1:] for row in a.fixed_cost.rows])}

The same run's small-shape and softmax-row tables are in `avx2/peers.md` of
the run's directory."""


def page_body(r):
    parts = [INTRO, "## Summary\n\n" + summary(r), RUNNING, machine_section(r), METHOD, forward_section(r),
             parts_section(r), small_section(r), softmax_section(r), scaling_section(r), avx2_section(r),
             boards_section(r), models_section(r), size_section(r), arm_section(r), compile_section(r)]
    return "\n\n".join(p.rstrip("\n") for p in parts if p) + "\n"


def digest(body, plot, readme_block):
    h = hashlib.sha256()
    for part in (body, plot, readme_block):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()[:16]


def readme_block(r):
    return (f"{README_BEGIN}\n{summary(r)}\n\nThe machine, the method and every table of that run:\n"
            f"[docs/performance.md](docs/performance.md).\n{README_END}")


def render(run_dir):
    r = Run(run_dir)
    body, plot, block = page_body(r), svg(r), readme_block(r)
    head = (f"<!-- bench/report.py wrote this page from the bench/run.sh run of {r.machine.get('run', r.measured)}; "
            f"edit the script and regenerate, not the page. digest {digest(body, plot, block)} -->\n")
    return head + body, plot, block


def readme_section(text):
    a, b = text.find(README_BEGIN), text.find(README_END)
    if a < 0 or b < a:
        return None
    return text[a:b + len(README_END)]


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", nargs="?", help="the output directory of one bench/run.sh run")
    ap.add_argument("--out", help="where to write performance.md and its plot (default: RUN_DIR)")
    ap.add_argument("--check", action="store_true", help="check docs/performance.md instead of writing")
    a = ap.parse_args()
    docs = os.path.join(ROOT, "docs")
    if a.check:
        return check(docs, a.run_dir)
    if not a.run_dir:
        ap.error("RUN_DIR is required unless --check")
    out = a.out or a.run_dir
    page, plot, block = render(a.run_dir)
    write(os.path.join(out, PAGE), page)
    write(os.path.join(out, PLOT), plot)
    wrote = [os.path.join(out, PAGE), os.path.join(out, PLOT)]
    if os.path.realpath(out) == os.path.realpath(docs):
        readme = os.path.join(ROOT, "README.md")
        text = open(readme, encoding="utf-8").read()
        old = readme_section(text)
        if old is None:
            raise SystemExit(f"report.py: {readme}: no performance summary markers ({README_BEGIN})")
        write(readme, text.replace(old, block))
        wrote.append(readme)
    print("report.py: wrote " + ", ".join(wrote))
    return 0


def check(docs, run_dir):
    problems = []
    try:
        page = open(os.path.join(docs, PAGE), encoding="utf-8").read()
        plot = open(os.path.join(docs, PLOT), encoding="utf-8").read()
        readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    except OSError as e:
        print(f"report.py --check: {e}", file=sys.stderr)
        return 1
    head, _, body = page.partition("\n")
    m = DIGEST.match(head)
    block = readme_section(readme)
    if not m:
        problems.append(f"docs/{PAGE}: its first line is not the generator's")
    elif block is None:
        problems.append("README.md: no performance summary markers")
    elif digest(body, plot, block) != m.group(1):
        problems.append(f"docs/{PAGE}, docs/{PLOT} or README.md's performance summary was edited by hand "
                        "(edit bench/report.py and regenerate)")
    if run_dir and not problems:
        want_page, want_plot, want_block = render(run_dir)
        for name, got, want in ((f"docs/{PAGE}", page, want_page), (f"docs/{PLOT}", plot, want_plot),
                                ("README.md's performance summary", block, want_block)):
            if got != want:
                problems.append(f"{name} is not what {run_dir} gives")
    for p in problems:
        print("report.py --check: " + p, file=sys.stderr)
    if not problems:
        print("report.py --check: docs/performance.md, its plot and the README's summary are the generator's"
              + (f" output for {run_dir}" if run_dir else " output, unedited"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
