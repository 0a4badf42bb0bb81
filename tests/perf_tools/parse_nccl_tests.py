#!/usr/bin/env python3
"""Parses nccl-tests output (ours or NVIDIA's) the way scripts that consume all_reduce_perf usually do.

Header: '# nccl-tests version', '# Collective test starting: X', '# nThread ...', one '#  Rank' line per rank.
Rows: lines that do not start with '#' and hold at least 13 whitespace-separated columns:
  size count type redop root | time algbw busbw #wrong (out-of-place) | time algbw busbw #wrong (in-place)
  (extra columns after the 13th, such as --compare mpi's, are kept in 'extra').
Footer: '# Out of bounds values : N OK|FAILED', '# Avg bus bandwidth : X', '# Collective test concluded: X'.
Launchers may prefix each line with the rank ('[0] ' from chorusrun --tag-output, '[1,0]<stdout>:' from mpirun --tag-output).

Usage: parse_nccl_tests.py FILE|-    prints the parsed result as JSON.
"""
import json
import re
import sys

_PREFIX = re.compile(r"^(\[\d+\] |\[\d+,\d+\]<stdout>:)")


class ParseError(Exception):
    pass


def _number(text):
    return None if text == "N/A" else float(text)


def _half(cols):
    return {"time": float(cols[0]), "algbw": float(cols[1]), "busbw": float(cols[2]), "wrong": _number(cols[3])}


def parse(text):
    result = {"version": None, "program": None, "nranks": 0, "backend": "chorus", "rows": [],
              "out_of_bounds": None, "out_of_bounds_ok": None, "avg_busbw": None, "concluded": None,
              "columns": None}
    for raw in text.splitlines():
        line = _PREFIX.sub("", raw).rstrip()
        if not line:
            continue
        if line.startswith("#"):
            m = re.match(r"# nccl-tests version (\S+)", line)
            if m:
                result["version"] = m.group(1)
            m = re.match(r"# Collective test starting: (\S+)", line)
            if m:
                result["program"] = m.group(1)
            if re.match(r"#\s+Rank\s+\d+ Group\s+\d+ Pid\s+\d+ on\s+\S+ device\s+-?\d+", line):
                result["nranks"] += 1
            m = re.match(r"# Backend: (\S+)", line)
            if m:
                result["backend"] = m.group(1)
            if re.match(r"#\s+size\s+count\s+type\s+redop\s+root\s+", line):
                result["columns"] = line[1:].split()
            m = re.match(r"# Out of bounds values\s*: (\d+) (OK|FAILED)", line)
            if m:
                result["out_of_bounds"] = int(m.group(1))
                result["out_of_bounds_ok"] = m.group(2) == "OK"
            m = re.match(r"# Avg bus bandwidth\s*: (\S+)", line)
            if m:
                result["avg_busbw"] = float(m.group(1))
            m = re.match(r"# Collective test concluded: (\S+)", line)
            if m:
                result["concluded"] = m.group(1)
            continue
        cols = line.split()
        if len(cols) < 13:
            continue  # not a result row (a launcher's message, a partial row)
        try:
            row = {"size": int(cols[0]), "count": int(cols[1]), "type": cols[2], "redop": cols[3],
                   "root": int(cols[4]), "out_of_place": _half(cols[5:9]), "in_place": _half(cols[9:13]),
                   "extra": cols[13:]}
        except ValueError as e:
            raise ParseError("bad row %r: %s" % (line, e))
        result["rows"].append(row)
    for key in ("version", "program", "out_of_bounds", "avg_busbw", "concluded", "columns"):
        if result[key] is None:
            raise ParseError("missing %s" % key)
    if len(result["columns"]) < 13:
        raise ParseError("the column header has %d names, not 13" % len(result["columns"]))
    return result


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    text = sys.stdin.read() if argv[1] == "-" else open(argv[1]).read()
    try:
        print(json.dumps(parse(text), indent=1))
    except ParseError as e:
        print("parse error: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
