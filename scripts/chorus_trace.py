#!/usr/bin/env python3
"""Merges the per-rank Chrome/Perfetto traces that CHORUS_TRACE_FILE writes into one file.

    chorus_trace.py merge OUT.json trace.rank0.json trace.rank1.json ...
    chorus_trace.py table OUT.json          # one line per operation event: rank start_us dur_us name bytes

Each rank's file is the trace-event "JSON array" form; a file cut short (a rank that crashed) lacks its
closing "]" and is read anyway. The merged file is {"traceEvents": [...]}, sorted by time, which Perfetto
(ui.perfetto.dev) and chrome://tracing open; "table" is what perf/trace_timeline.sh plots.
"""
import json
import sys


def load_events(path):
    text = open(path).read().strip()
    if text.startswith("{"):
        return json.loads(text)["traceEvents"]
    if not text.endswith("]"):
        text = text.rstrip().rstrip(",") + "]"
    return json.loads(text)


def merge(out, paths):
    events = []
    for p in paths:
        events.extend(e for e in load_events(p) if e)
    events.sort(key=lambda e: (e.get("ts", 0), -e.get("dur", 0)))
    with open(out, "w") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)
    ops = sum(1 for e in events if e.get("cat") == "op")
    waits = sum(1 for e in events if e.get("cat") == "wait")
    ranks = sorted({e["pid"] for e in events if e.get("cat") == "op"})
    print("chorus_trace: %d operations and %d waits of ranks %s -> %s" % (ops, waits, ranks, out))


def table(path):
    events = [e for e in load_events(path) if e.get("cat") in ("op", "wait")]
    if not events:
        return
    t0 = min(e["ts"] for e in events)
    for e in events:
        args = e.get("args", {})
        print("%d %.3f %.3f %s %s %s" % (e["pid"], e["ts"] - t0, e["dur"], e["cat"], e["name"].replace(" ", "_"),
                                         args.get("bytes", 0)))


def main(argv):
    if len(argv) >= 4 and argv[1] == "merge":
        merge(argv[2], argv[3:])
        return 0
    if len(argv) == 3 and argv[1] == "table":
        table(argv[2])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
