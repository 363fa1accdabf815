#!/usr/bin/env python3
"""The configuration step of the Zephyr and ESP-IDF stand-ins (stage 54-packages).

Neither framework can be installed here, so this does what their build does
before CMake reaches a module or component, with the same library Zephyr and
ESP-IDF use for Kconfig (kconfiglib):

  configure.py zephyr MODULE_DIR --board m4|rv32|m55 --out DIR
      reads zephyr/module.yml as scripts/zephyr_module.py does (build.cmake, a
      folder with CMakeLists.txt; build.kconfig, a file), sources the
      module's Kconfig under a root that defines the architecture symbols the
      board would select, applies prj.conf (CONFIG_CPP=y, CONFIG_TINYATTN=y),
      and writes DIR/autoconf.h (Zephyr's -imacros header) and DIR/config.cmake
      (the CONFIG_ variables and the module's CMake folder).
  configure.py idf COMPONENT_DIR --out DIR
      the component's Kconfig with its defaults (sdkconfig), DIR/config.cmake.

Any Kconfig warning (an undefined symbol, a bad default) is an error.
"""

import argparse
import sys
from pathlib import Path

import kconfiglib
import yaml

# The architecture symbols of Zephyr's arch/arm/core/cortex_m/Kconfig (and
# FPU, RISCV) that tinyattn's Kconfig refers to, as each board selects them.
ZEPHYR_BOARDS = {
    "m4": {"CPU_CORTEX_M4": "y", "FPU": "y"},      # mps2/an386: Cortex-M4F
    "m55": {"ARMV8_1_M_MVEF": "y", "ARMV8_M_DSP": "y", "FPU": "y"},  # a Cortex-M55 with Helium
    "rv32": {"RISCV": "y"},                        # qemu_riscv32
}
ZEPHYR_SYMBOLS = ["CPU_CORTEX_M4", "CPU_CORTEX_M7", "ARMV8_M_DSP", "ARMV8_1_M_MVEF", "FPU", "RISCV"]


def fail(msg):
    sys.exit(f"configure.py: {msg}")


def load(root_text, out, prj_lines):
    root = out / "Kconfig.standin"
    root.write_text(root_text)
    kconf = kconfiglib.Kconfig(str(root), warn_to_stderr=False)
    prj = out / "prj.conf"
    prj.write_text("".join(l + "\n" for l in prj_lines))
    kconf.load_config(str(prj))
    # A symbol set in prj.conf that did not take (unmet dependency) is a warning too.
    if kconf.warnings:
        fail("Kconfig warnings:\n  " + "\n  ".join(kconf.warnings))
    return kconf


def write_cmake(kconf, out, extra):
    lines = ["# CONFIG_ values (stage 54-packages' Kconfig stand-in)."]
    for sym in kconf.unique_defined_syms:
        v = sym.str_value
        if sym.type in (kconfiglib.BOOL, kconfiglib.TRISTATE):
            if v == "n":
                continue
        elif v == "":
            continue
        lines.append(f'set(CONFIG_{sym.name} "{v}")')
    (out / "config.cmake").write_text("\n".join(lines + extra) + "\n")


def zephyr(args):
    module = Path(args.dir).resolve()
    meta = yaml.safe_load((module / "zephyr" / "module.yml").read_text())
    name = meta.get("name", module.name)
    build = meta.get("build", {})
    cmake_dir = module / build.get("cmake", "zephyr")
    if not (cmake_dir / "CMakeLists.txt").is_file():
        fail(f'module.yml build.cmake "{build.get("cmake")}" has no CMakeLists.txt')
    kconfig = module / build.get("kconfig", "zephyr/Kconfig")
    if not kconfig.is_file():
        fail(f'module.yml build.kconfig "{build.get("kconfig")}" is not a file')
    values = ZEPHYR_BOARDS[args.board]
    sanitized = "".join(c if c.isalnum() else "_" for c in name).upper()
    root = ["# Stand-in for Zephyr's Kconfig tree: the symbols tinyattn's Kconfig refers to.",
            'mainmenu "stand-in"',
            "config CPP", "\tbool \"C++\"",
            "config REQUIRES_FULL_LIBCPP", "\tbool", "\tdepends on CPP"]
    for s in ZEPHYR_SYMBOLS:
        root += [f"config {s}", "\tbool", f"\tdefault {values.get(s, 'n')}"]
    # What scripts/zephyr_module.py writes for a module (kconfig_snippet).
    root += [f'menu "{name} ({module})"', f'osource "{kconfig}"',
             f"config ZEPHYR_{sanitized}_MODULE", "\tbool", "\tdefault y", "endmenu", ""]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    kconf = load("\n".join(root), out, ["CONFIG_CPP=y", "CONFIG_TINYATTN=y"])
    kconf.write_autoconf(str(out / "autoconf.h"))
    write_cmake(kconf, out, [f'set(ZEPHYR_{sanitized}_MODULE_DIR "{module}")',
                             f'set(ZEPHYR_{sanitized}_CMAKE_DIR "{cmake_dir}")',
                             f'set(ZEPHYR_STANDIN_MODULE_NAME "{name}")'])
    chosen = {s.name: s.str_value for s in kconf.unique_defined_syms if s.name.startswith("TINYATTN")}
    print(" ".join(f"{k}={v}" for k, v in sorted(chosen.items())))


def idf(args):
    comp = Path(args.dir).resolve()
    root = ['mainmenu "stand-in"', 'menu "Component config"']
    if (comp / "Kconfig").is_file():
        root.append(f'source "{comp / "Kconfig"}"')
    root += ["endmenu", ""]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    kconf = load("\n".join(root), out, [])
    write_cmake(kconf, out, [])
    chosen = {s.name: s.str_value for s in kconf.unique_defined_syms if s.name.startswith("TINYATTN")}
    print(" ".join(f"{k}={v}" for k, v in sorted(chosen.items())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("framework", choices=["zephyr", "idf"])
    ap.add_argument("dir")
    ap.add_argument("--board", choices=sorted(ZEPHYR_BOARDS), default="m4")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    (zephyr if args.framework == "zephyr" else idf)(args)


if __name__ == "__main__":
    main()
