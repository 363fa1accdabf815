#!/usr/bin/env python3
"""Makefile recipes for the packages whose frameworks do not build with CMake
(stage 54-packages): the files and flags each framework's builder takes from
the package, by its documented rules, as a Makefile that compiles them into
one archive.

  recipe.py arduino|platformio|cmsis-pack PACKAGE_DIR --out DIR [--device m4|rv32|m55]

* arduino (library specification rev. 2.2, recursive layout): every .c, .cpp
  and .S under src/, recursively; src/ is the only include path.
* platformio (library.json): build.srcDir (default src) filtered by
  build.srcFilter, with build.includeDir and srcDir on the include path and
  build.flags added.
* cmsis-pack (PACK.xsd semantics): the components whose conditions the device
  meets (accept: one must match, require: all, deny: none; attributes against
  the device's Dcore/Ddsp/Dmve/Dfpu and the toolchain), each file whose own
  condition holds; category include adds -I, source compiles; the chosen
  components' RTE_Components_h go to RTE_Components.h and their
  Pre_Include_Global_h to Pre_Include_Global.h, which every file pre-includes.

The Makefile takes CXX, CC, AR and CPU_FLAGS (the core's flags) from the
command line and writes libpackage.a.
"""

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

SOURCE_EXT = {".c": "c", ".cpp": "cxx", ".cc": "cxx", ".cxx": "cxx", ".S": "asm"}
ARDUINO_EXT = {".c", ".cpp", ".S"}

# The framework's own flags (what its core or toolchain file adds), beside CPU_FLAGS.
FRAMEWORK_FLAGS = {
    "arduino": "-Os -std=gnu++17 -fno-exceptions -fno-rtti -fno-threadsafe-statics -ffunction-sections -fdata-sections",
    "platformio": "-Os -std=gnu++17 -fno-exceptions -fno-rtti -fno-threadsafe-statics -ffunction-sections -fdata-sections",
    "cmsis-pack": "-Os -std=c++17 -fno-exceptions -fno-rtti -fno-threadsafe-statics -ffunction-sections -fdata-sections",
}

# The CMSIS device each stand-in board is (PACK.xsd processor attributes).
DEVICES = {
    "m4": {"Dcore": "Cortex-M4", "Dfpu": "SP_FPU", "Tcompiler": "GCC"},
    "m55": {"Dcore": "Cortex-M55", "Dfpu": "DP_FPU", "Ddsp": "DSP", "Dmve": "FP_MVE", "Tcompiler": "GCC"},
    # No CMSIS core describes RV32: the pack's Cortex-M condition must then
    # leave every component out, which the stage checks.
    "rv32": {"Dcore": "other", "Tcompiler": "GCC"},
}


def fail(msg):
    sys.exit(f"recipe.py: {msg}")


def arduino(pkg):
    src = pkg / "src"
    if not src.is_dir():
        fail("no src/: this is not a 1.5-format (recursive) library")
    files = sorted(p for p in src.rglob("*") if p.is_file() and p.suffix in ARDUINO_EXT)
    return files, [src], [], []


def pio_filter_match(rel, patterns):
    """build.srcFilter: "+<glob>" / "-<glob>" applied in order (later wins)."""
    import fnmatch
    keep = False
    for pat in patterns:
        sign, glob = pat[0], pat[2:-1]
        if fnmatch.fnmatch(rel, glob) or fnmatch.fnmatch(rel, glob.rstrip("/") + "/*"):
            keep = sign == "+"
    return keep


def platformio(pkg):
    manifest = json.loads((pkg / "library.json").read_text())
    build = manifest.get("build", {})
    src = pkg / build.get("srcDir", "src")
    inc = pkg / build.get("includeDir", "include")
    flt = build.get("srcFilter", ["+<*>", "-<.git/>", "-<.svn/>"])
    if isinstance(flt, str):
        flt = flt.split()
    files = sorted(p for p in src.rglob("*") if p.is_file() and p.suffix in SOURCE_EXT
                   and pio_filter_match(p.relative_to(src).as_posix(), flt))
    flags = build.get("flags", [])
    if isinstance(flags, str):
        flags = flags.split()
    return files, [d for d in (inc, src) if d.is_dir()], flags, []


# ---- CMSIS-Pack

def attr_matches(el, device, selected, conditions, seen):
    for k, v in el.attrib.items():
        if k == "condition":
            if not condition_holds(v, device, selected, conditions, seen):
                return False
        elif k.startswith("C"):
            continue  # component attributes: checked together below
        elif k.startswith("T") or k.startswith("D"):
            if device.get(k) != v:
                return False
    ckeys = {k: v for k, v in el.attrib.items() if k.startswith("C")}
    if ckeys and not any(all(c.get(k) == v for k, v in ckeys.items()) for c in selected):
        return False
    return True


def condition_holds(cid, device, selected, conditions, seen=()):
    if cid in seen:
        fail(f"condition {cid} refers to itself")
    cond = conditions.get(cid)
    if cond is None:
        fail(f"condition {cid} is not defined")
    seen = seen + (cid,)
    accepts = [e for e in cond if e.tag == "accept"]
    for e in cond:
        if e.tag == "require" and not attr_matches(e, device, selected, conditions, seen):
            return False
        if e.tag == "deny" and attr_matches(e, device, selected, conditions, seen):
            return False
    return not accepts or any(attr_matches(e, device, selected, conditions, seen) for e in accepts)


def cmsis(pkg, device_name, out):
    pdsc = next(pkg.glob("*.pdsc"))
    root = ET.parse(pdsc).getroot()
    conditions = {c.get("id"): list(c) for c in root.iter("condition")}
    device = DEVICES[device_name]
    comps = [c for c in root.find("components").iter("component")]
    # Every component the device can take: start from all of them and drop
    # those whose condition fails with the rest, until none does (components
    # may require each other, as the core and the scalar port do).
    selected = list(comps)
    while True:
        idents = [dict(s.attrib) for s in selected]
        kept = [s for s in selected if not s.get("condition") or
                condition_holds(s.get("condition"), device, idents, conditions)]
        if len(kept) == len(selected):
            break
        selected = kept
    idents = [dict(s.attrib) for s in selected]
    files, incs, rte, pre = [], [], [], []
    for c in selected:
        if c.find("RTE_Components_h") is not None:
            rte.append(c.find("RTE_Components_h").text.strip())
        if c.find("Pre_Include_Global_h") is not None:
            pre.append(c.find("Pre_Include_Global_h").text.strip())
        for f in c.find("files"):
            if f.get("condition") and not condition_holds(f.get("condition"), device, idents, conditions):
                continue
            path = pkg / f.get("name")
            if not path.exists():
                fail(f"{pdsc.name}: {f.get('name')} is not in the pack")
            cat = f.get("category")
            if cat == "include":
                incs.append(path)
            elif cat in ("source", "sourceCpp", "sourceC", "sourceAsm"):
                files.append(path)
    rte_dir = out / "RTE"
    rte_dir.mkdir(parents=True, exist_ok=True)
    (rte_dir / "RTE_Components.h").write_text(
        "/* RTE_Components.h as the CMSIS tools generate it from the chosen components. */\n"
        "#ifndef RTE_COMPONENTS_H\n#define RTE_COMPONENTS_H\n" + "\n".join(rte) + "\n#endif\n")
    (rte_dir / "Pre_Include_Global.h").write_text(
        "/* Pre_Include_Global.h: every file of the project pre-includes it. */\n" + "\n".join(pre) + "\n")
    names = [f"{c.get('Cclass')}:{c.get('Cgroup')}:{c.get('Csub')}" for c in selected]
    return files, incs + [rte_dir], [], ["-include", str(rte_dir / "Pre_Include_Global.h")], names


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kind", choices=sorted(FRAMEWORK_FLAGS))
    ap.add_argument("package", type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--device", choices=sorted(DEVICES), default="m4")
    args = ap.parse_args()
    pkg = args.package.resolve()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    names = []
    if args.kind == "arduino":
        files, incs, flags, pre = arduino(pkg)
    elif args.kind == "platformio":
        files, incs, flags, pre = platformio(pkg)
    else:
        files, incs, flags, pre, names = cmsis(pkg, args.device, out)
    objs = []
    rules = []
    for f in files:
        rel = f.relative_to(pkg).as_posix()
        obj = "obj/" + rel + ".o"
        lang = SOURCE_EXT[f.suffix]
        tool = {"c": "$(CC) $(CFLAGS)", "cxx": "$(CXX) $(CXXFLAGS)", "asm": "$(CC) $(ASFLAGS)"}[lang]
        objs.append(obj)
        rules.append(f"{obj}: {f}\n\t@mkdir -p $(@D)\n\t{tool} -c $< -o $@\n")
    inc = " ".join(f"-I{d}" for d in incs)
    common = f"$(CPU_FLAGS) $(SYSTEM_INCLUDES) {inc} {' '.join(pre)}"
    mk = [f"# {args.kind} package {pkg.name}: the files and flags its builder takes (recipe.py).",
          "CC ?= cc", "CXX ?= c++", "AR ?= ar",
          f"CXXFLAGS = {FRAMEWORK_FLAGS[args.kind]} {' '.join(flags)} {common}",
          f"CFLAGS = -Os -ffunction-sections -fdata-sections {common}",
          f"ASFLAGS = {common}",
          "OBJS = " + " ".join(objs), "",
          "libpackage.a: $(OBJS)", "\trm -f $@", "\t$(AR) rcs $@ $(OBJS)", ""] + rules
    (out / "Makefile").write_text("\n".join(mk))
    (out / "sources.txt").write_text("".join(f.relative_to(pkg).as_posix() + "\n" for f in files))
    print(f"{args.kind}: {len(files)} files" + (f"; components {', '.join(names)}" if names else ""))


if __name__ == "__main__":
    main()
