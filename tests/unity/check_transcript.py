#!/usr/bin/env python3
"""Runs the Unity fixture and checks its transcript line by line.

  check_transcript.py <unity_demo binary> <expected_transcript.txt> <unity_summary.py> [emulator args...]

The run must exit non-zero (it holds a failing case), print exactly the
expected lines after the "tinyattn ports:" banner, and unity_summary.py must
count 3 tests, 1 failure, 1 ignored and exit 1.
"""
import subprocess
import sys


def main(binary, expected_path, summary_script, *emulator):
    run = subprocess.run([*emulator, binary, "--reporters=unity"], capture_output=True, text=True)
    lines = [l for l in run.stdout.splitlines() if not l.startswith("tinyattn ports:")]
    with open(expected_path, encoding="utf-8") as f:
        expected = f.read().splitlines()
    ok = True
    if run.returncode == 0:
        print("FAILED: the fixture exited 0 although one case fails")
        ok = False
    if lines != expected:
        print("FAILED: transcript differs from", expected_path)
        for i in range(max(len(lines), len(expected))):
            got = lines[i] if i < len(lines) else "<missing>"
            want = expected[i] if i < len(expected) else "<missing>"
            print(("   " if got == want else "!! ") + f"got  {got!r}\n   want {want!r}")
        ok = False
    summary = subprocess.run([sys.executable, summary_script, "-"], input=run.stdout, capture_output=True, text=True)
    print(summary.stdout, end="")
    if summary.returncode != 1 or "1 transcripts: 3 Tests 1 Failures 1 Ignored (1 passed)" not in summary.stdout:
        print("FAILED: unity_summary.py miscounted the transcript (exit %d)" % summary.returncode)
        ok = False
    print("transcript OK" if ok else "transcript check FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
