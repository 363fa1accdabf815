#!/usr/bin/env python3
"""The library's build recipe from the source manifest, sources.json.

sources.json lists every source file of the library (the core, the
registries, each port's), the include directories, the per-file flags and
the defines a build must set. The CMake build reads it
(cmake/TinyattnSources.cmake); this script prints the same recipe for any
other build: a Makefile, an IDE project, a package (docs/firmware.md,
"Without CMake"). Python 3, standard library only.

  sources.py make    [selection]   Makefile variables (include the output)
  sources.py files   [selection]   the source files, one absolute path a line
  sources.py defines [selection]   the -D flags the selection needs
  sources.py includes [selection]  the -I / -isystem flags of the library's files
  sources.py flags   [selection]   the C++ flags of the library's files
  sources.py file-flags [selection]  path<TAB>flags of each file with flags of its own
  sources.py check                 the manifest against the tree, port_list.h and
                                   the recipe docs/firmware.md shows

Selection:
  --ports scalar,dsp     the ports to build (scalar is always added: it is
                         every build's fallback, and int8 needs its table)
  --dtypes f32,i8        the paths to build: f32, f16, i8, i16, kv_i8 (default all);
                         a subset needs --gc-sections at link time (the C
                         API's wrappers reach every path)
  --default PORT         what Port::kDefault is (default: the chosen port of
                         the highest rank, as CMake's TINYATTN_DEFAULT_PORT=best)
  --arch ARCH            x86_64, x86, aarch64, arm, riscv32, riscv64: picks
                         the files and flags that apply to that architecture
                         only (none of them is needed for a microcontroller)
  --hosted               an operating system's target (default: bare metal)
  --freestanding         the compiler has no C++ standard library headers
                         (riscv64-unknown-elf with picolibc): adds
                         lib/freestanding/include
  --check-with "CXX FLAGS..."   stop unless every chosen port applies to
                         this compiler and these flags (its "requires")
"""
import argparse
import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(ROOT, "sources.json")
DTYPES = ("f32", "f16", "i8", "i16", "kv_i8")
ROLES = ("library", "dispatch_runtime", "probe", "test_hook")
WHEN_KEYS = {"arch", "hosted"}


class ManifestError(Exception):
    pass


def load():
    with open(MANIFEST, encoding="utf-8") as f:
        manifest = json.load(f)
    if manifest.get("format") != 1:
        raise ManifestError(f"sources.json: format {manifest.get('format')}, this script reads format 1")
    return manifest


def port_list(manifest):
    """(enumerator, name, fused, int8) of each line of tinyattn/port_list.h, in its order."""
    text = open(os.path.join(ROOT, manifest["port_list"]), encoding="utf-8").read()
    body = text[text.index("#define TINYATTN_PORT_LIST(X)"):]
    lines = []
    for m in re.finditer(r"X\(([^)]*)\)", body.replace("#define TINYATTN_PORT_LIST(X)", "")):
        fields = re.fullmatch(r'\s*(k\w+),\s*"(\w+)",\s*([01]),\s*([01])\s*', m.group(1))
        if not fields:
            raise ManifestError(f"{manifest['port_list']}: cannot read X({m.group(1)})")
        lines.append((fields.group(1), fields.group(2), int(fields.group(3)), int(fields.group(4))))
    return lines


def holds(cond, args):
    """Whether a "when" condition holds for the selection's architecture and hosting."""
    if not cond:
        return True
    if "arch" in cond and args.arch not in cond["arch"]:
        return False
    if "hosted" in cond and bool(cond["hosted"]) != bool(args.hosted):
        return False
    return True


def rank(port, args):
    r = port["rank"]
    if isinstance(r, int):
        return r
    when = port.get("rank_when", {})
    for name, value in r.items():
        if name in when and holds(when[name], args):
            return value
    for name, value in r.items():
        if name not in when:
            return value
    raise ManifestError(f"sources.json: port {port['name']}: no rank applies")


class Selection:
    def __init__(self, manifest, args):
        self.manifest, self.args = manifest, args
        by_name = {p["name"]: p for p in manifest["ports"]}
        wanted = [n for n in (args.ports or "").split(",") if n]
        for n in wanted:
            if n not in by_name:
                raise ManifestError(f"no port '{n}' (sources.json has {', '.join(by_name)})")
        # In port_list.h order (TINYATTN_PORTS_BUILT lists them so), scalar always.
        self.ports = [p for p in manifest["ports"] if p["name"] in wanted or p["name"] == "scalar"]
        self.dtypes = [d for d in (args.dtypes or ",".join(DTYPES)).split(",") if d]
        for d in self.dtypes:
            if d not in manifest["dtypes"]:
                raise ManifestError(f"no dtype '{d}' (sources.json has {', '.join(manifest['dtypes'])})")
        self.tables = {t for d in self.dtypes for t in manifest["dtypes"][d]["tables"]}
        if args.default:
            chosen = [p for p in self.ports if p["name"] == args.default]
            if not chosen:
                raise ManifestError(f"--default {args.default}: not among the chosen ports "
                                    f"({', '.join(p['name'] for p in self.ports)})")
            self.default = chosen[0]
        else:
            # The first of the highest rank, as ports/CMakeLists.txt picks.
            self.default = self.ports[0]
            for p in self.ports:
                if rank(p, args) > rank(self.default, args):
                    self.default = p

    def entries(self):
        """The chosen library files' manifest entries, in the CMake build's order."""
        out = []
        for e in self.manifest["core"] + self.manifest["registry"]:
            if e.get("dtype") in (None, *self.dtypes) and holds(e.get("when"), self.args):
                out.append(e)
        for p in self.ports:
            for e in p["sources"]:
                if e.get("role", "library") != "library" or not holds(e.get("when"), self.args):
                    continue
                if e.get("table") in (None, *self.tables):
                    out.append(e)
        return out

    def files(self):
        return [e["file"] for e in self.entries()]

    def file_flags(self):
        out = []
        for e in self.entries():
            if e.get("flags") and holds(e.get("flags_when"), self.args):
                out.append((e["file"], e["flags"]))
        return out

    def include_dirs(self):
        """(flag, dir) pairs: -isystem for the freestanding headers, -I for the rest."""
        dirs = []
        if self.args.freestanding:
            dirs += [("-isystem", d) for d in self.manifest["include_dirs"]["freestanding"]]
        dirs += [("-I", d) for d in self.manifest["include_dirs"]["library"]]
        for p in self.ports:
            dirs += [("-I", d) for d in p.get("include_dirs", [])]
        return dirs

    def public_include_dirs(self):
        dirs = []
        if self.args.freestanding:
            dirs += [("-isystem", d) for d in self.manifest["include_dirs"]["freestanding"]]
        return dirs + [("-I", d) for d in self.manifest["include_dirs"]["public"]]

    def defines(self):
        built = ",".join(p["enum"] for p in self.ports)
        fused = 1 if any(p["fused"] for p in self.ports) else 0
        out = [f"TINYATTN_PORTS_BUILT={built}", f"TINYATTN_DEFAULT_PORT={self.default['enum']}",
               f"TINYATTN_BUILT_FUSED_BLOCKS={fused}"]
        for p in self.ports:
            for d in p.get("defines", []):
                if d.get("required") and holds(d.get("when"), self.args):
                    out.append(d["name"] + ("=" + d["value"] if "value" in d else ""))
        for e in self.entries():
            out += e.get("defines", [])
        return out

    def cxx_flags(self):
        """The language subset, on bare metal no thread-safe statics (libsupc++'s
        guards can throw), and a section per function and object for --gc-sections."""
        f = self.manifest["flags"]
        return ([f"-std=c++{self.manifest['cxx_standard']}"] + f["library"] +
                ([] if self.args.hosted else f["bare_metal"]) + f["sections"])

    def external_headers(self):
        return [h for p in self.ports for h in p.get("external_headers", [])]


def check_requires(selection, command):
    """Each chosen port's "requires" must hold for this compiler and flags."""
    words = shlex.split(command)
    for p in selection.ports:
        cond = p.get("requires")
        if not cond:
            continue
        probe = f"#if !({cond})\n#error the {p['name']} port does not apply\n#endif\n"
        run = subprocess.run(words + ["-x", "c++", "-E", "-o", os.devnull, "-"], input=probe.encode(),
                             capture_output=True)
        if run.returncode != 0:
            raise ManifestError(f"port {p['name']} does not apply to `{command}`: it requires {cond} "
                                f"({p['applies_to']})")


def join(pairs, path):
    """-I<dir> and -isystem <dir> flags."""
    return " ".join(flag + (" " if flag == "-isystem" else "") + path(d) for flag, d in pairs)


def print_make(selection, argv):
    def path(rel):
        return "$(TINYATTN_DIR)/" + rel

    s = selection
    print(f"# tinyattn, ports {', '.join(p['name'] for p in s.ports)} (default {s.default['name']}), "
          f"dtypes {', '.join(s.dtypes)}:")
    print(f"#   scripts/sources.py {' '.join(shlex.quote(a) for a in argv)}")
    print("# from sources.json (docs/firmware.md, Without CMake). Compile every source with")
    print("# $(TINYATTN_CXXFLAGS) $(TINYATTN_DEFINES) $(TINYATTN_INCLUDES) $(TINYATTN_FLAGS_$(notdir $<))")
    print("# and your core's flags; link with $(TINYATTN_LDFLAGS). Your own files need")
    print("# $(TINYATTN_PUBLIC_INCLUDES) only.")
    print(f"TINYATTN_DIR ?= {ROOT}")
    print("TINYATTN_SOURCES := \\")
    files = s.files()
    for i, f in enumerate(files):
        print(f"  {path(f)}" + (" \\" if i + 1 < len(files) else ""))
    print("TINYATTN_INCLUDES := " + join(s.include_dirs(), path))
    print("TINYATTN_PUBLIC_INCLUDES := " + join(s.public_include_dirs(), path))
    print("TINYATTN_DEFINES := " + " ".join("-D" + d for d in s.defines()))
    print("TINYATTN_CXXFLAGS := " + " ".join(s.cxx_flags()))
    print("TINYATTN_LDFLAGS := " + " ".join(s.manifest["flags"]["link"]))
    externals = s.external_headers()
    if externals:
        print("# Third-party headers these ports include: add their folders with -isystem.")
        print("TINYATTN_EXTERNAL_HEADERS := " + " ".join(externals))
    flagged = s.file_flags()
    if flagged:
        print("# Flags of single files (only these files may get them).")
        for f, flags in flagged:
            print(f"TINYATTN_FLAGS_{os.path.basename(f)} := {' '.join(flags)}")


def check(manifest):
    """Problems of the manifest against the tree and port_list.h, as messages."""
    problems = []
    listed = []
    for section in ("core", "registry"):
        for e in manifest[section]:
            listed.append(e["file"])
            if e.get("dtype") not in (None, *manifest["dtypes"]):
                problems.append(f"{e['file']}: unknown dtype {e['dtype']}")
    for p in manifest["ports"]:
        if not os.path.isdir(os.path.join(ROOT, "ports", "backends", p["name"])):
            problems.append(f"port {p['name']}: no folder ports/backends/{p['name']}")
        for e in p["sources"]:
            listed.append(e["file"])
            if e.get("role", "library") not in ROLES:
                problems.append(f"{e['file']}: unknown role {e['role']}")
            if e.get("table") not in (None, "f32", "i8", "i16"):
                problems.append(f"{e['file']}: unknown table {e['table']}")
    for group in [manifest["core"], manifest["registry"]] + [p["sources"] for p in manifest["ports"]]:
        for e in group:
            for key in ("when", "flags_when"):
                if set(e.get(key, {})) - WHEN_KEYS:
                    problems.append(f"{e['file']}: {key} may only name {', '.join(sorted(WHEN_KEYS))}")
    for f in listed:
        if not os.path.isfile(os.path.join(ROOT, f)):
            problems.append(f"sources.json lists {f}, which does not exist")
    if len(set(listed)) != len(listed):
        problems.append("sources.json lists a file twice")
    found = []
    for folder, recursive in (("lib/src", False), ("ports", False), ("ports/backends", True)):
        base = os.path.join(ROOT, folder)
        for dirpath, dirnames, names in os.walk(base):
            found += [os.path.relpath(os.path.join(dirpath, n), ROOT) for n in names if n.endswith(".cc")]
            if not recursive:
                dirnames[:] = []
    for f in sorted(set(found) - set(listed)):
        problems.append(f"{f} is not in sources.json")
    for kind in manifest["include_dirs"].values():
        for d in kind:
            if not os.path.isdir(os.path.join(ROOT, d)):
                problems.append(f"include directory {d} does not exist")
    lines = port_list(manifest)
    names = [p["name"] for p in manifest["ports"]]
    if names != [line[1] for line in lines]:
        problems.append(f"sources.json lists the ports {names}, {manifest['port_list']} "
                        f"{[line[1] for line in lines]}: one entry per line, in its order")
    by_name = {p["name"]: p for p in manifest["ports"]}
    for enum, name, fused, int8 in lines:
        p = by_name.get(name)
        if not p:
            continue
        if (p["enum"], p["fused"], p["int8"]) != (enum, fused, int8):
            problems.append(f"port {name}: sources.json says {p['enum']}, fused {p['fused']}, int8 {p['int8']}, "
                            f"port_list.h X({enum}, \"{name}\", {fused}, {int8})")
        has_i8 = any(e.get("table") == "i8" for e in p["sources"])
        if has_i8 != bool(int8):
            problems.append(f"port {name}: int8 {int8} but {'a' if has_i8 else 'no'} source with table i8")
    problems += check_firmware_doc(manifest)
    return problems


def check_firmware_doc(manifest):
    """docs/firmware.md shows what `make` prints for its command: the recipe
    printed now, with the page's placeholder for the tree, must be the page's."""
    doc = os.path.join(ROOT, "docs", "firmware.md")
    command = "scripts/sources.py make --ports scalar,dsp --dtypes f32,i8"
    with open(doc, encoding="utf-8") as f:
        page = f.read()
    start = page.find(f"#   {command}\n")
    if start < 0:
        return [f"docs/firmware.md: no recipe printed by `{command}`"]
    start = page.rfind("\n", 0, start - 1) + 1  # the line before: ports and dtypes
    end = page.find("```", start)
    args = argparse.Namespace(ports="scalar,dsp", dtypes="f32,i8", default=None, arch=None, hosted=False,
                              freestanding=False)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        print_make(Selection(manifest, args), ["make", "--ports", "scalar,dsp", "--dtypes", "f32,i8"])
    expected = printed.getvalue().replace(f"TINYATTN_DIR ?= {ROOT}", "TINYATTN_DIR ?= /path/to/tinyattn")
    if page[start:end] != expected:
        return [f"docs/firmware.md: its recipe differs from what `{command}` prints now; paste the new one"]
    return []


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["make", "files", "defines", "includes", "flags", "file-flags", "check"])
    parser.add_argument("--ports", default="scalar")
    parser.add_argument("--dtypes")
    parser.add_argument("--default")
    parser.add_argument("--arch")
    parser.add_argument("--hosted", action="store_true")
    parser.add_argument("--freestanding", action="store_true")
    parser.add_argument("--check-with", metavar="COMMAND")
    args = parser.parse_args(argv)
    try:
        manifest = load()
        if args.mode == "check":
            problems = check(manifest)
            for p in problems:
                print(f"sources.json: {p}", file=sys.stderr)
            if problems:
                return 1
            print(f"sources.json: {len(manifest['ports'])} ports, every source listed, agrees with "
                  f"{manifest['port_list']}")
            return 0
        selection = Selection(manifest, args)
        if args.check_with:
            check_requires(selection, args.check_with)
    except (ManifestError, OSError, KeyError, ValueError) as e:
        print(f"sources.py: {e}", file=sys.stderr)
        return 2
    if args.mode == "make":
        print_make(selection, argv)
    elif args.mode == "files":
        for f in selection.files():
            print(os.path.join(ROOT, f))
    elif args.mode == "defines":
        print(" ".join("-D" + d for d in selection.defines()))
    elif args.mode == "includes":
        print(join(selection.include_dirs(), lambda d: os.path.join(ROOT, d)))
    elif args.mode == "flags":
        print(" ".join(selection.cxx_flags()))
    elif args.mode == "file-flags":
        for f, flags in selection.file_flags():
            print(f"{os.path.join(ROOT, f)}\t{' '.join(flags)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
