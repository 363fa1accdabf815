#!/usr/bin/env python3
"""Totals of Unity transcripts, as both tinyattn test runners print them.

Reads transcript files or whole logs (ctest -V output, qemu console captures;
'-' or no file means stdin). A transcript is a run of result lines

    <file>:<line>:<name>:PASS
    <file>:<line>:<name>:FAIL: <message>
    <file>:<line>:<name>:IGNORE: <reason>

closed by "-----------------------", "<N> Tests <F> Failures <I> Ignored" and
"OK" or "FAIL". Other lines are ignored. Prints one line per failure and the
totals; exits 1 if anything failed, a summary disagrees with its result lines,
or result lines are left without a summary (a run that crashed), else 0.
"""
import re
import sys

RESULT = re.compile(r"^(?P<file>[^:\s]+):(?P<line>\d+):(?P<name>.*?):(?P<result>PASS|FAIL|IGNORE)(?:: (?P<detail>.*))?$")
SUMMARY = re.compile(r"^(?P<tests>\d+) Tests (?P<failures>\d+) Failures (?P<ignored>\d+) Ignored$")


def scan(lines, source):
    """Returns (totals dict, list of problems)."""
    totals = {"transcripts": 0, "tests": 0, "pass": 0, "fail": 0, "ignore": 0}
    problems = []
    pending = {"PASS": 0, "FAIL": 0, "IGNORE": 0}
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        m = RESULT.match(line)
        if m:
            pending[m.group("result")] += 1
            if m.group("result") == "FAIL":
                problems.append(f"{source}:{number}: {line}")
            continue
        m = SUMMARY.match(line)
        if m:
            tests, failures, ignored = (int(m.group(k)) for k in ("tests", "failures", "ignored"))
            seen = (sum(pending.values()), pending["FAIL"], pending["IGNORE"])
            if (tests, failures, ignored) != seen:
                problems.append(f"{source}:{number}: summary says {tests}/{failures}/{ignored} "
                                f"tests/failures/ignored, result lines say {seen[0]}/{seen[1]}/{seen[2]}")
            totals["transcripts"] += 1
            totals["tests"] += tests
            totals["fail"] += failures
            totals["ignore"] += ignored
            totals["pass"] += tests - failures - ignored
            pending = {"PASS": 0, "FAIL": 0, "IGNORE": 0}
    if sum(pending.values()):
        problems.append(f"{source}: {sum(pending.values())} result lines without a summary (incomplete run)")
    return totals, problems


def main(argv):
    paths = argv[1:] or ["-"]
    grand = {"transcripts": 0, "tests": 0, "pass": 0, "fail": 0, "ignore": 0}
    problems = []
    for path in paths:
        if path == "-":
            t, p = scan(sys.stdin, "<stdin>")
        else:
            with open(path, encoding="utf-8", errors="replace") as f:
                t, p = scan(f, path)
        for k in grand:
            grand[k] += t[k]
        problems += p
    for p in problems:
        print(p)
    print(f"{grand['transcripts']} transcripts: {grand['tests']} Tests {grand['fail']} Failures "
          f"{grand['ignore']} Ignored ({grand['pass']} passed)")
    if grand["transcripts"] == 0:
        print("no Unity summary found")
        return 1
    return 1 if problems or grand["fail"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
