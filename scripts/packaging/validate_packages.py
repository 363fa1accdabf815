#!/usr/bin/env python3
"""Checks the packages make_packages.py wrote against each format's published
rules, offline:

  zephyr      zephyr/module.yml against the module schema (pykwalify, as
              Zephyr's scripts/zephyr_module.py validates it), its build.cmake
              folder and build.kconfig file; zephyr/Kconfig parses (kconfiglib)
  esp-idf     idf_component.yml against the component manager's rules
              (JSON Schema, python3-jsonschema); Kconfig parses
  platformio  library.json against PlatformIO's library schema (JSON Schema);
              the headers and examples it names exist
  arduino     library.properties by the Arduino library specification (rev.
              2.2): fields, name, version, category, includes; the layout
              (src/, examples/<name>/<name>.ino, no 1.0-format sources at the
              root); the archive holds one folder with the library
  cmsis-pack  the .pdsc against PACK.xsd's definitions (xmllint --schema); every
              file it names is in the pack, every condition it refers to is
              defined; the pack's name and layout

  validate_packages.py DIR [--kind KIND ...]

Prints one line per check ("ok: ..." or "FAILED: ...") and, last, per kind,
"<kind>: N checks, M failed"; exit status 1 when a check failed.
"""

import argparse
import json
import logging
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import jsonschema
import kconfiglib
import yaml
from pykwalify.core import Core
from pykwalify.errors import PyKwalifyException

logging.getLogger("pykwalify").setLevel(logging.CRITICAL)  # its errors are the checks' details

HERE = Path(__file__).resolve().parent
SCHEMAS = HERE / "schemas"
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")


class Checks:
    def __init__(self, kind):
        self.kind = kind
        self.n = 0
        self.failed = 0

    def check(self, ok, what, detail=""):
        self.n += 1
        if ok:
            print(f"ok: {self.kind}: {what}")
        else:
            self.failed += 1
            print(f"FAILED: {self.kind}: {what}" + (f": {detail}" if detail else ""))
        return ok

    def run(self, what, fn):
        try:
            fn()
        except Exception as e:  # a schema tool's error is the check's detail
            return self.check(False, what, " ".join(str(e).split())[:300] or repr(e))
        return self.check(True, what)


def json_schema(name):
    schema = json.loads((SCHEMAS / name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def kconfig_parses(path, prelude):
    """Parses a Kconfig file under a root that defines the symbols it may
    refer to; a warning (undefined symbol, syntax) fails."""
    root = path.parent / ".kconfig-check"
    root.write_text(prelude + f'\nsource "{path}"\n')
    try:
        kconf = kconfiglib.Kconfig(str(root), warn_to_stderr=False)
        if kconf.warnings:
            raise ValueError("; ".join(kconf.warnings))
        syms = [s.name for s in kconf.unique_defined_syms if s.name.startswith("TINYATTN")]
        if not syms:
            raise ValueError("defines no TINYATTN option")
    finally:
        root.unlink()


def zephyr(pkg, c):
    yml = pkg / "zephyr" / "module.yml"
    meta = yaml.safe_load(yml.read_text()) if yml.is_file() else None
    c.check(meta is not None, "zephyr/module.yml exists and is YAML")
    if meta is None:
        return
    schema = yaml.safe_load((SCHEMAS / "zephyr-module.pykwalify.yml").read_text())

    def kwalify():
        try:
            Core(source_data=meta, schema_data=schema).validate(raise_exception=True)
        except PyKwalifyException as e:
            raise ValueError(" ".join(str(e.msg).split())) from None
    if not c.run("module.yml against the module schema (pykwalify)", kwalify):
        return
    build = meta.get("build", {})
    c.check((pkg / build.get("cmake", "zephyr") / "CMakeLists.txt").is_file(),
            "build.cmake names a folder with CMakeLists.txt")
    kconfig = pkg / build.get("kconfig", "zephyr/Kconfig")
    c.check(kconfig.is_file(), "build.kconfig names a file")
    if kconfig.is_file():
        prelude = "\n".join(f"config {s}\n\tbool" for s in
                            ("CPP", "REQUIRES_FULL_LIBCPP", "CPU_CORTEX_M4", "CPU_CORTEX_M7", "ARMV8_M_DSP",
                             "ARMV8_1_M_MVEF", "FPU"))
        c.run("zephyr/Kconfig parses (kconfiglib), no warning", lambda: kconfig_parses(kconfig, prelude))


def espidf(pkg, c):
    yml = pkg / "idf_component.yml"
    data = yaml.safe_load(yml.read_text()) if yml.is_file() else None
    c.check(isinstance(data, dict), "idf_component.yml exists and is a YAML map")
    if not isinstance(data, dict):
        return
    schema = json_schema("idf_component.schema.json")
    c.run("idf_component.yml against the component manager's rules (jsonschema)",
          lambda: jsonschema.validate(data, schema))
    text = (pkg / "CMakeLists.txt").read_text() if (pkg / "CMakeLists.txt").is_file() else ""
    c.check("idf_component_register(" in text, "CMakeLists.txt registers the component (idf_component_register)")
    if (pkg / "Kconfig").is_file():
        c.run("Kconfig parses (kconfiglib), no warning", lambda: kconfig_parses(pkg / "Kconfig", ""))


def platformio(pkg, c):
    path = pkg / "library.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        c.check(False, "library.json exists and is JSON", str(e))
        return
    c.check(True, "library.json exists and is JSON")
    schema = json_schema("platformio-library.schema.json")
    c.run("library.json against PlatformIO's library schema (jsonschema)", lambda: jsonschema.validate(data, schema))
    build = data.get("build", {})
    dirs = [pkg / build.get("includeDir", "include"), pkg / build.get("srcDir", "src")]
    headers = data.get("headers", [])
    headers = [headers] if isinstance(headers, str) else headers
    missing = [h for h in headers if not any((d / h).is_file() for d in dirs)]
    c.check(not missing, "the headers it names are in includeDir or srcDir", " ".join(missing))
    missing = [f"{e['base']}/{f}" for e in data.get("examples", []) for f in e["files"]
               if not (pkg / e["base"] / f).is_file()]
    c.check(not missing, "the example files it names exist", " ".join(missing))


ARDUINO_REQUIRED = ["name", "version", "author", "maintainer", "sentence", "paragraph", "category", "url",
                    "architectures"]
ARDUINO_CATEGORIES = {"Display", "Communication", "Signal Input/Output", "Sensors", "Device Control", "Timing",
                      "Data Storage", "Data Processing", "Other", "Uncategorized"}
ARDUINO_EXT = {".c", ".cpp", ".S"}


def parse_properties(text):
    props = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if "=" not in line:
            raise ValueError(f"line {n} is not key=value")
        k, v = line.split("=", 1)
        props[k.strip()] = v.strip()
    return props


def arduino_library(lib, c, where):
    path = lib / "library.properties"
    try:
        text = path.read_bytes().decode("utf-8")
        props = parse_properties(text)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        c.check(False, f"{where}library.properties is UTF-8 key=value lines", str(e))
        return
    c.check(True, f"{where}library.properties is UTF-8 key=value lines")
    missing = [k for k in ARDUINO_REQUIRED if not props.get(k)]
    c.check(not missing, f"{where}library.properties has every required field", " ".join(missing))
    name = props.get("name", "")
    c.check(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 _.\-]*", name) is not None and re.search(r"[A-Za-z]", name)
            and not name.startswith("Arduino"), f"{where}name: letters, digits, space, _ . -; a letter; not Arduino*",
            name)
    c.check(SEMVER.match(props.get("version", "")) is not None, f"{where}version is semver", props.get("version"))
    c.check(props.get("category", "Uncategorized") in ARDUINO_CATEGORIES, f"{where}category is one of the allowed",
            props.get("category"))
    c.check(re.match(r"^https?://", props.get("url", "")) is not None, f"{where}url is a web address")
    archs = [a.strip() for a in props.get("architectures", "*").split(",")]
    c.check(all(re.fullmatch(r"\*|[A-Za-z0-9_]+", a) for a in archs), f"{where}architectures is a comma list")
    src = lib / "src"
    c.check(src.is_dir(), f"{where}src/ holds the sources (1.5 format)")
    includes = [i.strip() for i in props.get("includes", "").split(",") if i.strip()]
    missing = [i for i in includes if not (src / i).is_file()]
    c.check(not missing, f"{where}includes: each is a header at the top of src/", " ".join(missing))
    root_sources = [p.name for p in lib.iterdir() if p.is_file() and p.suffix in ARDUINO_EXT]
    utility = (lib / "utility").exists()
    c.check(not root_sources and not utility, f"{where}no 1.0-format sources at the root or in utility/",
            " ".join(root_sources))
    sources = [p for p in src.rglob("*") if p.suffix in ARDUINO_EXT] if src.is_dir() else []
    c.check(bool(sources), f"{where}src/ has .c/.cpp/.S files (what the builder compiles)")
    examples = lib / "examples"
    bad = []
    if examples.is_dir():
        for ex in examples.iterdir():
            if not (ex / f"{ex.name}.ino").is_file():
                bad.append(ex.name)
    c.check(examples.is_dir() and not bad, f"{where}examples/<name>/<name>.ino for each example", " ".join(bad))
    folder = lib.name
    c.check(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,62}", folder) is not None,
            f"{where}the library folder's name ({folder}) is valid")


def arduino(pkg, c):
    arduino_library(pkg, c, "")
    zips = sorted(pkg.parent.glob("tinyattn-*.zip"))
    if not c.check(len(zips) == 1, "one archive tinyattn-<version>.zip beside the library"):
        return
    with zipfile.ZipFile(zips[0]) as z:
        names = z.namelist()
        tops = {n.split("/")[0] for n in names}
        c.check(tops == {pkg.name}, "the archive holds one folder, the library", " ".join(sorted(tops)))
        out = pkg.parent / ".unzipped"
        shutil.rmtree(out, ignore_errors=True)
        z.extractall(out)
    try:
        arduino_library(out / pkg.name, c, "archive: ")
    finally:
        shutil.rmtree(out, ignore_errors=True)


def cmsis(pkg, c):
    pdscs = sorted(pkg.glob("*.pdsc"))
    if not c.check(len(pdscs) == 1, "one .pdsc at the pack's root"):
        return
    pdsc = pdscs[0]
    r = subprocess.run(["xmllint", "--noout", "--schema", str(SCHEMAS / "pdsc-subset.xsd"), str(pdsc)],
                       capture_output=True, text=True)
    c.check(r.returncode == 0, "the .pdsc against PACK.xsd's definitions (xmllint --schema)",
            (r.stderr or r.stdout).strip().splitlines()[0] if (r.stderr or r.stdout).strip() else "")
    root = ET.parse(pdsc).getroot()
    vendor, name = root.findtext("vendor"), root.findtext("name")
    version = root.find("releases/release").get("version")
    c.check(pdsc.name == f"{vendor}.{name}.pdsc", "the .pdsc is named <vendor>.<name>.pdsc", pdsc.name)
    missing = [f.get("name") for f in root.iter("file") if not (pkg / f.get("name")).exists()]
    c.check(not missing, "every file the .pdsc names is in the pack", " ".join(missing[:5]))
    ids = {cd.get("id") for cd in root.iter("condition")}
    refs = {e.get("condition") for e in root.iter() if e.get("condition") is not None}
    c.check(refs <= ids, "every condition it refers to is defined", " ".join(sorted(refs - ids)))
    c.check(len(ids) == len(list(root.iter("condition"))), "condition ids are unique")
    idents = [(e.get("Cclass"), e.get("Cgroup"), e.get("Csub")) for e in root.iter("component")]
    c.check(len(idents) == len(set(idents)), "component identities are unique")
    pack = pkg.parent / f"{vendor}.{name}.{version}.pack"
    if c.check(pack.is_file(), "the pack is named <vendor>.<name>.<version>.pack", pack.name):
        with zipfile.ZipFile(pack) as z:
            c.check(pdsc.name in z.namelist(), "the pack's zip has the .pdsc at its root")


KINDS = {"zephyr": zephyr, "esp-idf": espidf, "platformio": platformio, "arduino": arduino, "cmsis-pack": cmsis}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=Path, help="make_packages.py's --out folder")
    ap.add_argument("--kind", action="append", choices=sorted(KINDS))
    args = ap.parse_args()
    failed = 0
    summary = []
    for kind in args.kind or list(KINDS):
        c = Checks(kind)
        pkg = args.dir / kind / "tinyattn"
        if c.check(pkg.is_dir(), f"{pkg} exists"):
            KINDS[kind](pkg, c)
        summary.append(f"{kind}: {c.n} checks, {c.failed} failed")
        failed += c.failed
    print("\n".join(summary))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
