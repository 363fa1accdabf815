"""What every package is made of, read from the source manifest (sources.json).

The packages are generated from one description of the library: which files
there are, what each one needs (a dtype, the self-test, a port and its kernel
table), the include directories and the defines the build computes from the
chosen ports. This module turns the manifest into that description; the
generators in make_packages.py only render it in each framework's terms.

A file's condition is a list of clauses that must all hold, each clause a list
of alternatives (one must hold). The options are:
  DTYPE_F32, DTYPE_F16, DTYPE_I8,
  DTYPE_I16                         the dtypes compiled in
  SELFTEST                          the power-on self-test
  PORT_<NAME>                       a port besides the scalar one
"""

import json
import re
from pathlib import Path

# The ports a firmware package carries: those that need no third-party
# headers (Highway and xsimd do), less the template port, which is the
# documentation's example (the scalar kernels under another name), and the
# RISC-V Vector port, tested on RV64GCV Linux only (no firmware build of it).
EXCLUDED_PORTS = {"template", "rvv"}

DTYPE_OPTION = {"f32": "DTYPE_F32", "f16": "DTYPE_F16", "i8": "DTYPE_I8", "i16": "DTYPE_I16", "kv_i8": "DTYPE_KV_I8"}
DTYPE_TITLE = {"f32": "fp32", "f16": "fp16", "i8": "int8", "i16": "int16", "kv_i8": "int8 KV cache storage"}


class SourceFile:
    def __init__(self, path, condition, group, about=""):
        self.path = path            # relative to the repository root
        self.condition = condition  # list of clauses (see module docstring)
        self.group = group          # "core", "f32", "f16", "i8", "i16", "selftest" or "port:<name>"
        self.about = about


class Port:
    def __init__(self, entry):
        self.name = entry["name"]
        self.enum = entry["enum"]
        self.fused = int(entry["fused"])
        self.rank = entry["rank"] if isinstance(entry["rank"], int) else 0
        self.requires = entry.get("requires")  # preprocessor condition, None: every target
        self.applies_to = entry.get("applies_to", "")
        self.option = "PORT_" + self.name.upper()


class Spec:
    """The library as the packages see it (see module docstring)."""

    def __init__(self, root, manifest_path, data):
        self.root = Path(root)
        self.manifest_path = manifest_path
        self.version = read_version(self.root)
        self.name = "tinyattn"
        self.license = "MIT"
        self.description = ("Scaled dot-product attention for firmware: fixed size, no heap, "
                            "fp32/fp16/int8, a power-on self-test")
        self.cxx_standard = int(data.get("cxx_standard", 17))
        flags = data.get("flags", {})
        self.library_flags = list(flags.get("library", []))
        self.firmware_flags = list(flags.get("firmware", []))
        dirs = data["include_dirs"]
        self.public_includes = list(dirs["public"])
        self.library_includes = list(dirs["library"])
        self.private_includes = [d for d in self.library_includes if d not in self.public_includes]
        self.freestanding_includes = list(dirs.get("freestanding", []))
        self.dtypes = [d for d in DTYPE_OPTION if d in data["dtypes"]]
        self.dtype_tables = {d: list(data["dtypes"][d].get("tables", [])) for d in self.dtypes}
        self.dtype_about = {d: data["dtypes"][d].get("about", "") for d in self.dtypes}

        ports = [Port(p) for p in data["ports"]]
        self.all_ports = ports  # port_list.h order
        self.ports = [p for p in ports if is_firmware_port(p, data)]
        if not self.ports or self.ports[0].name != "scalar":
            raise SystemExit("sources.json: the scalar port must come first")
        self.optional_ports = self.ports[1:]

        self.files = []
        self.entries = []
        for entry in data["core"] + data.get("registry", []):
            if entry.get("role", "library") != "library" or not applies_bare_metal(entry):
                continue
            self.files.append(core_file(entry))
            self.entries.append((self.files[-1], entry))
        for port, entry in zip(ports, data["ports"]):
            if port not in self.ports:
                continue
            for src in entry["sources"]:
                if src.get("role", "library") != "library" or not applies_bare_metal(src):
                    continue
                self.files.append(port_file(self, port, src))
                self.entries.append((self.files[-1], src))
        for f, entry in self.entries:
            # What a package cannot say yet fails here, not in a user's build.
            if entry.get("defines") or (entry.get("flags") and applies_bare_metal(entry, "flags_when")):
                raise SystemExit(f"sources.json: {f.path} needs its own flags or defines on bare metal: "
                                 "scripts/packaging/make_packages.py does not pass those yet")

    # ---- queries

    def sources(self):
        return [f.path for f in self.files]

    def option_names(self):
        return ([DTYPE_OPTION[d] for d in self.dtypes] + ["SELFTEST"] +
                [p.option for p in self.optional_ports])

    def headers(self):
        """Every header a package ships: the include directories' trees, the
        headers beside the sources, and the ports' shared headers."""
        found = set()
        for d in self.library_includes:
            for p in (self.root / d).rglob("*"):
                if p.is_file() and p.suffix in (".h", ".hpp"):
                    rel = p.relative_to(self.root).as_posix()
                    # The ports root: its own headers and backends/*.h, and
                    # the folders of the ports this package carries.
                    if d == "ports" and not self._port_header_wanted(rel):
                        continue
                    found.add(rel)
        for f in self.files:
            for p in (self.root / f.path).parent.glob("*.h"):
                found.add(p.relative_to(self.root).as_posix())
        return sorted(found)

    def _port_header_wanted(self, rel):
        parts = rel.split("/")
        if len(parts) == 2:                       # ports/port.h, ports/registry.h
            return True
        if parts[1] != "backends":
            return False
        if len(parts) == 3:                       # ports/backends/int8_fixed.h
            return True
        return parts[2] in {p.name for p in self.ports}

    def selected(self, config):
        """The files a configuration compiles. config: option -> bool."""
        return [f for f in self.files if holds(f.condition, config)]

    def defines(self, config):
        """The build's defines for a configuration (sources.json build_defines)."""
        built = [p for p in self.all_ports if p in self.ports and (p.name == "scalar" or config.get(p.option))]
        default = best_port(built)
        return {
            "TINYATTN_PORTS_BUILT": ",".join(p.enum for p in built),
            "TINYATTN_DEFAULT_PORT": default.enum,
            "TINYATTN_BUILT_FUSED_BLOCKS": "1" if any(p.fused for p in built) else "0",
        }

    def ports_by_rank(self):
        """The optional ports, the one to prefer first (rank, then list order)."""
        order = {p.name: i for i, p in enumerate(self.all_ports)}
        return sorted(self.optional_ports, key=lambda p: (-p.rank, order[p.name]))


def best_port(built):
    best = built[0]
    for p in built[1:]:
        if p.rank > best.rank:
            best = p
    return best


def holds(condition, config):
    return all(any(config.get(alt, False) for alt in clause) for clause in condition)


def tables_condition(spec, table):
    """The dtypes that need a kernel table ("f32", "i8" or "i16")."""
    return [DTYPE_OPTION[d] for d in spec.dtypes if table in spec.dtype_tables[d]]


def is_selftest(entry):
    return entry.get("role") == "selftest" or Path(entry["file"]).name.startswith("selftest")


def core_file(entry):
    dtype = entry.get("dtype")
    condition = []
    if dtype:
        condition.append([DTYPE_OPTION[dtype]])
    group = dtype or "core"
    if is_selftest(entry):
        condition.append(["SELFTEST"])
        group = "selftest"
    return SourceFile(entry["file"], condition, group, entry.get("about", ""))


def port_file(spec, port, src):
    condition = []
    if port.name != "scalar":
        condition.append([port.option])
        table = src.get("table")
        if table:
            condition.append(tables_condition(spec, table))
    # The scalar port's files are always compiled: every build has the
    # port, and its int8 table calls into its fp32 file (scalar::simd_target),
    # so an int8-only build needs both; --gc-sections drops what is unused.
    return SourceFile(src["file"], condition, "port:" + port.name, src.get("about", ""))


def applies_bare_metal(entry, key="when"):
    """Whether a manifest entry ("when", or a file's "flags_when") holds for
    a bare-metal Cortex-M or RISC-V core. The packages serve both, so an entry
    for one of them alone cannot be expressed: that stops the generator."""
    when = entry.get(key)
    if not when:
        return True
    if when.get("hosted"):
        return False
    arch = set(when.get("arch") or [])
    if not arch:
        return True
    firmware = arch & {"arm", "riscv32", "riscv"}
    if firmware and firmware != {"arm", "riscv32"}:
        raise SystemExit(f"sources.json: {entry['file']}: {key} {when} names some firmware cores only: "
                         "scripts/packaging/make_packages.py cannot express that yet")
    return bool(firmware)


def is_firmware_port(port, data):
    entry = next(e for e in data["ports"] if e["name"] == port.name)
    return not entry.get("external_headers") and port.name not in EXCLUDED_PORTS


def read_version(root):
    text = (Path(root) / "CMakeLists.txt").read_text()
    m = re.search(r"project\(tinyattn\s+VERSION\s+([0-9.]+)", text)
    if not m:
        raise SystemExit("CMakeLists.txt: no project(tinyattn VERSION x.y.z)")
    return m.group(1)


MANIFEST_CANDIDATES = ("sources.json", "cmake/sources.json", "cmake/manifest.json")


def load(root):
    root = Path(root)
    for name in MANIFEST_CANDIDATES:
        path = root / name
        if path.is_file():
            data = json.loads(path.read_text())
            if data.get("format") != 1:
                raise SystemExit(f"{path}: format {data.get('format')}, this generator reads format 1")
            return Spec(root, path, data)
    raise SystemExit("no source manifest (" + ", ".join(MANIFEST_CANDIDATES) + ") in " + str(root))
