#!/usr/bin/env python3
"""Runs every command block of README.md and docs/*.md verbatim.

A fenced block tagged `sh` is a command block: its text runs as it stands
under `bash -e -o pipefail`, so a command a page shows that no longer works
fails the test run. Every fence carries a tag (`text` for output, listings and
formulas), so a command block cannot hide as an untagged one.

Blocks run in page order (README.md, then docs/ by name) in a copy of the
tracked files, WORK/tinyattn, so the build trees they make (`build`, ...)
are shared between pages and never touch the developer's checkout. An HTML
comment on the line before a fence (blank lines between allowed) sets how
its block runs:

    <!-- doc-run: cwd=parent fixture=firmware:tests/firmware path=build/tools root -->

  cwd=parent      run in WORK, where the copy is `tinyattn/` (firmware.md's
                  "next to your firmware project")
  fixture=D:S     copy the tree's folder S to WORK/D first (the project a page
                  calls "your firmware")
  path=DIR        put the tree's DIR first on PATH (the built host tool)
  root            writes outside WORK (an install prefix under /opt): skipped,
                  and reported, when not run as root
  self            the test command itself or one of its stages: the run this
                  check belongs to executes it, so running it here would recurse
  measure         a benchmark measurement (minutes of a quiet CPU): run only
                  with --measure, never by the test command

  scripts/doc_commands.py list            every command block and its settings
  scripts/doc_commands.py run WORK [--only FILE[:LINE]] [--measure]
                                          run them; one line per block, then
                                          "doc commands: N ran, N failed, N skipped"
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
DIRECTIVE = re.compile(r"^<!--\s*doc-run:(.*?)-->\s*$")
KNOWN = {"cwd", "fixture", "path", "root", "self", "measure"}


class Block:
    def __init__(self, page, line, tag, text, settings):
        self.page, self.line, self.tag, self.text, self.settings = page, line, tag, text, settings

    @property
    def where(self):
        return f"{self.page}:{self.line}"


def pages():
    docs = os.path.join(ROOT, "docs")
    names = ["README.md"] + sorted(
        os.path.join("docs", n) for n in os.listdir(docs) if n.endswith(".md"))
    return names


def parse(page):
    """Every fenced block of a page; raises ValueError on an untagged fence or a bad directive."""
    lines = open(os.path.join(ROOT, page), encoding="utf-8").read().split("\n")
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        marker, tag = m.group(2), m.group(3).strip()
        start = i
        i += 1
        body = []
        while i < len(lines) and not lines[i].strip().startswith(marker):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise ValueError(f"{page}:{start + 1}: fence never closed")
        i += 1
        if not tag:
            raise ValueError(f"{page}:{start + 1}: fence without a tag (sh for commands, text for the rest)")
        settings = {}
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        d = DIRECTIVE.match(lines[k].strip()) if k >= 0 else None
        if d:
            for word in d.group(1).split():
                key, _, value = word.partition("=")
                if key not in KNOWN:
                    raise ValueError(f"{page}:{k + 1}: unknown doc-run setting {key!r}")
                settings[key] = value or True
            if tag.split()[0] != "sh":
                raise ValueError(f"{page}:{k + 1}: doc-run settings on a block that is not `sh`")
        blocks.append(Block(page, start + 1, tag.split()[0], "\n".join(body), settings))
    return blocks


def command_blocks():
    found = []
    for page in pages():
        found += [b for b in parse(page) if b.tag == "sh"]
    return found


def tracked_files():
    """The files of the checkout (git ls-files), or every file outside build trees."""
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], check=True, capture_output=True).stdout
        return [f for f in out.decode().split("\0") if f and os.path.isfile(os.path.join(ROOT, f))]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for base, dirs, names in os.walk(ROOT):
            dirs[:] = [d for d in dirs if not d.startswith("build") and d != ".git"]
            files += [os.path.relpath(os.path.join(base, n), ROOT) for n in names]
        return files


def sync_tree(dest):
    """Copies the tracked files to dest, keeping unchanged files' times (build trees stay incremental)."""
    wanted = set(tracked_files())
    for rel in wanted:
        src, dst = os.path.join(ROOT, rel), os.path.join(dest, rel)
        s = os.stat(src)
        try:
            d = os.stat(dst)
            if d.st_size == s.st_size and int(d.st_mtime) == int(s.st_mtime):
                continue
        except FileNotFoundError:
            pass
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)
    # A file deleted from the checkout goes from the copy too (lib/src is globbed).
    for base, dirs, names in os.walk(dest):
        rel_base = os.path.relpath(base, dest)
        dirs[:] = [d for d in dirs if not (rel_base == "." and d.startswith("build"))]
        for n in names:
            rel = os.path.normpath(os.path.join(rel_base, n))
            if rel not in wanted:
                os.remove(os.path.join(base, n))


def run_block(block, work, log, measure):
    tree = os.path.join(work, "tinyattn")
    s = block.settings
    if "measure" in s and not measure:
        return "skipped", "a benchmark measurement: runs with --measure"
    if "self" in s:
        return "skipped", "the test command or one of its stages: this run executes it"
    if "root" in s and os.geteuid() != 0:
        return "skipped", "needs root (writes outside the work folder)"
    if "fixture" in s:
        name, _, src = s["fixture"].partition(":")
        target = os.path.join(work, name)
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(os.path.join(tree, src), target)
    cwd = work if s.get("cwd") == "parent" else tree
    env = dict(os.environ)
    if "path" in s:
        env["PATH"] = os.path.join(tree, s["path"]) + os.pathsep + env.get("PATH", "")
    log.write(f"\n==> {block.where} (in {cwd})\n{block.text}\n--\n")
    log.flush()
    rc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.text], cwd=cwd, env=env,
                        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT).returncode
    return ("passed", "") if rc == 0 else ("failed", f"exit status {rc}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    r = sub.add_parser("run")
    r.add_argument("work")
    r.add_argument("--only", help="FILE or FILE:LINE of the blocks to run")
    r.add_argument("--measure", action="store_true", help="also run the benchmark measurements")
    args = ap.parse_args()
    try:
        blocks = command_blocks()
    except ValueError as e:
        print(f"doc_commands: {e}", file=sys.stderr)
        return 2
    if args.cmd == "list":
        for b in blocks:
            opts = " ".join(k if v is True else f"{k}={v}" for k, v in b.settings.items())
            print(f"{b.where}\t{opts}\t{b.text.splitlines()[0] if b.text else ''}")
        return 0
    if args.only:
        blocks = [b for b in blocks if b.where == args.only or b.page == args.only]
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    sync_tree(os.path.join(work, "tinyattn"))
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    with open(os.path.join(work, "doc-commands.log"), "w", encoding="utf-8") as log:
        for b in blocks:
            t0 = time.monotonic()
            result, why = run_block(b, work, log, args.measure)
            counts[result] += 1
            first = b.text.strip().splitlines()[0] if b.text.strip() else ""
            print(f"{result:7} {time.monotonic() - t0:6.1f}s  {b.where}  {first[:70]}"
                  + (f"  ({why})" if why else ""), flush=True)
    print(f"doc commands: {counts['passed']} ran, {counts['failed']} failed, {counts['skipped']} skipped "
          f"(log: {os.path.join(work, 'doc-commands.log')})")
    return 0 if counts["failed"] == 0 and blocks else 1


if __name__ == "__main__":
    sys.exit(main())
