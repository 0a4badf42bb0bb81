#!/usr/bin/env python3
"""CTest driver for the *_perf programs.

  check_perf.py badflags PROGRAM
      every bad input exits with status 2 and one line on stderr that names the flag.
  check_perf.py run [--nranks N] [--expect-wrong] -- COMMAND...
      runs COMMAND (the program, or a launcher and the program), parses its output as nccl-tests output and
      checks it: a header, rows of 13 columns, #wrong 0 (N/A only where nccl-tests prints it), the footer.
      --expect-wrong: the run must instead fail with wrong elements counted and the footer saying FAILED.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parse_nccl_tests  # noqa: E402

BAD_INPUTS = [
    (["--no-such-flag"], "--no-such-flag"),
    (["-q", "1"], "-q"),
    (["-b", "2M", "-e", "1M"], "-b"),
    (["-d", "float7"], "-d"),
    (["-o", "xor"], "-o"),
    (["-o", "mulsum"], "-o"),
    (["-r", "99"], "-r"),
    (["-n", "many"], "-n"),
    (["-z", "9"], "-z"),
    (["-b", "12Q"], "-b"),
    (["--backend", "nccl"], "--backend"),
]
NA_IN_PLACE = {"alltoall_perf", "sendrecv_perf"}


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def bad_flags(program):
    name = os.path.basename(program)
    for args, flag in BAD_INPUTS:
        if args[0] == "-r" and name not in ("broadcast_perf", "reduce_perf", "gather_perf", "scatter_perf"):
            continue  # root applies to rooted collectives only
        p = subprocess.run([program] + args, capture_output=True, text=True, timeout=60)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        shown = "%s %s" % (name, " ".join(args))
        if p.returncode != 2:
            fail("%s: exit status %d, not 2 (stderr: %r)" % (shown, p.returncode, p.stderr))
        if len(lines) != 1:
            fail("%s: %d lines on stderr, not 1: %r" % (shown, len(lines), p.stderr))
        if flag not in lines[0]:
            fail("%s: the message does not name %s: %r" % (shown, flag, lines[0]))
        print("ok  %-40s -> %s" % (shown, lines[0]))
    p = subprocess.run([program, "-h"], capture_output=True, text=True, timeout=60)
    if p.returncode != 0 or "USAGE" not in p.stdout:
        fail("%s -h: status %d" % (name, p.returncode))


def run(nranks, expect_wrong, command):
    p = subprocess.run(command, capture_output=True, text=True, timeout=600)
    print(p.stdout)
    print(p.stderr, file=sys.stderr)
    try:
        r = parse_nccl_tests.parse(p.stdout)
    except parse_nccl_tests.ParseError as e:
        fail("output does not parse: %s" % e)
    program = os.path.basename(next(c for c in command if c.endswith("_perf")))
    if r["program"] != program or r["concluded"] != program:
        fail("program %r / concluded %r, expected %s" % (r["program"], r["concluded"], program))
    if nranks is not None and r["nranks"] != nranks:
        fail("%d rank lines, expected %d" % (r["nranks"], nranks))
    if not r["rows"]:
        fail("no result rows")
    wrong = 0
    for row in r["rows"]:
        for half in ("out_of_place", "in_place"):
            w = row[half]["wrong"]
            if w is None:
                if not (half == "in_place" and program in NA_IN_PLACE):
                    fail("#wrong is N/A in %s of %s" % (half, row))
                continue
            wrong += w
        for key in ("time", "algbw", "busbw"):
            if row["out_of_place"][key] < 0 or row["in_place"][key] < 0:
                fail("negative %s in %s" % (key, row))
    if expect_wrong:
        if p.returncode == 0 or wrong == 0 or r["out_of_bounds_ok"]:
            fail("expected a failure with wrong elements: status %d, #wrong %d" % (p.returncode, wrong))
        print("ok: wrong results detected (%d elements), exit status %d" % (wrong, p.returncode))
        return
    if p.returncode != 0:
        fail("exit status %d" % p.returncode)
    if wrong != 0 or r["out_of_bounds"] != 0 or not r["out_of_bounds_ok"]:
        fail("%d wrong elements, out of bounds %s" % (wrong, r["out_of_bounds"]))
    print("ok: %d rows, %d ranks, avg busbw %g" % (len(r["rows"]), r["nranks"], r["avg_busbw"]))


def main(argv):
    if len(argv) >= 3 and argv[1] == "badflags":
        bad_flags(argv[2])
        return 0
    if len(argv) >= 3 and argv[1] == "run":
        nranks = None
        expect_wrong = False
        i = 2
        while argv[i] != "--":
            if argv[i] == "--nranks":
                nranks = int(argv[i + 1])
                i += 2
            elif argv[i] == "--expect-wrong":
                expect_wrong = True
                i += 1
            else:
                fail("unknown option %s" % argv[i])
        run(nranks, expect_wrong, argv[i + 1:])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
