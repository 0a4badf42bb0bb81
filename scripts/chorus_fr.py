#!/usr/bin/env python3
"""Merges the flight-recorder dumps of all ranks and says which rank is behind, and in which operation.

Reads Chorus logs (files given as arguments, or stdin): the "FR dump ..." and "FR rank=..." lines that a
communicator writes on a timeout, a remote error, an abort or CHORUS_FR_SIGNAL (src/core/flight_recorder.h).
Log prefixes (host:pid:tid [rank] CHORUS WARN, or chorusrun's [rank] tags) are ignored. For each
communicator, the last dump of each rank counts. Prints one block per communicator:

    comm 5f3a... (3 ranks; dumps from 0, 1, 2)
      rank 0: issued 4, done 3, at seq 3 AllReduce(count 1024, float32) failed
      rank 2: issued 3, done 3, idle
      behind: rank 2 has not issued seq 3 AllReduce(count 1024, float32), where ranks 0, 1 wait

and exits 0 (1 when no dump was found). Operations are numbered alike on every rank when the ranks issue
the same operations in the same order, which NCCL's programming model requires of collectives.
"""
import re
import sys

FIELD = re.compile(r'(\w+)=("[^"]*"|\S+)')


def parse(lines):
    """Returns {comm: {rank: {"header": {...}, "entries": {seq: {...}}}}}, the last dump of each rank."""
    comms = {}
    current = {}  # (comm, rank) -> the dump being read
    for line in lines:
        at = line.find("FR dump ")
        if at >= 0:
            f = dict((k, v.strip('"')) for k, v in FIELD.findall(line[at + 8:]))
            key = (f.get("comm"), int(f.get("rank", -1)))
            dump = {"header": f, "entries": {}}
            comms.setdefault(key[0], {})[key[1]] = dump
            current[key] = dump
            continue
        at = line.find("FR rank=")
        if at < 0:
            continue
        f = dict((k, v.strip('"')) for k, v in FIELD.findall(line[at + 3:]))
        key = (f.get("comm"), int(f.get("rank", -1)))
        if key in current:
            current[key]["entries"][int(f["seq"])] = f
    return comms


def describe(e):
    if e is None:
        return "an operation it did not record"
    extra = ""
    if e.get("op") in ("Send", "Recv"):
        extra = ", %s rank %s" % ("to" if e["op"] == "Send" else "from", e.get("peer"))
    elif int(e.get("root", -1)) >= 0:
        extra = ", root %s" % e["root"]
    return "seq %s %s(count %s, %s%s)" % (e["seq"], e["op"], e["count"], e["dtype"], extra)


def summarize(comm, ranks):
    out = []
    some = next(iter(ranks.values()))
    nranks = int(some["header"].get("nranks", len(ranks)))
    out.append("comm %s (%d ranks; dumps from %s)" % (comm, nranks, ", ".join(str(r) for r in sorted(ranks))))
    state = {}
    for r in sorted(ranks):
        d = ranks[r]
        issued = int(d["header"].get("issued", 0))
        entries = d["entries"]
        done = sum(1 for e in entries.values() if e.get("state") == "done")
        # The first operation this rank has not completed, if any.
        open_ops = sorted((s for s, e in entries.items() if e.get("state") != "done"))
        first_open = entries[open_ops[0]] if open_ops else None
        state[r] = (issued, first_open)
        where = "idle" if first_open is None else "at %s %s" % (describe(first_open), first_open["state"])
        out.append("  rank %d: issued %d, %d recorded done, %s (dump: %s)" %
                   (r, issued, done, where, d["header"].get("reason", "")))
    missing = [r for r in range(nranks) if r not in ranks]
    if missing:
        out.append("  no dump from rank%s %s (dead, stopped, or not failed: its log may be elsewhere)" %
                   ("s" if len(missing) > 1 else "", ", ".join(str(r) for r in missing)))
    # The furthest any rank got, and the operation the others wait in.
    furthest = max(s[0] for s in state.values())
    low = min(s[0] for s in state.values())
    if low < furthest:
        behind = [r for r, s in state.items() if s[0] == low]
        waiting = [r for r, s in state.items() if s[0] > low]
        op = None
        for r in waiting:
            op = ranks[r]["entries"].get(low)
            if op is not None:
                break
        out.append("  behind: rank%s %s %s not issued %s, where rank%s %s wait" %
                   ("s" if len(behind) > 1 else "", ", ".join(map(str, behind)),
                    "have" if len(behind) > 1 else "has", describe(op) if op else "seq %d" % low,
                    "s" if len(waiting) > 1 else "", ", ".join(map(str, waiting))))
    else:
        stuck = [(r, s[1]) for r, s in state.items() if s[1] is not None]
        if stuck:
            first = min(int(e["seq"]) for _, e in stuck)
            ranks_at = [r for r, e in stuck if int(e["seq"]) == first]
            idle = [r for r, s in state.items() if s[1] is None or int(s[1]["seq"]) > first]
            e = [e for _, e in stuck if int(e["seq"]) == first][0]
            msg = "  behind: no rank is missing an operation; ranks %s did not complete %s" % (
                ", ".join(map(str, ranks_at)), describe(e))
            if idle:
                msg += " (ranks %s completed it)" % ", ".join(map(str, idle))
            out.append(msg)
        else:
            out.append("  every rank completed every recorded operation")
    if missing:
        out.append("  note: rank%s %s left no dump; if %s never issued the operation above, %s the one behind" %
                   ("s" if len(missing) > 1 else "", ", ".join(map(str, missing)),
                    "they" if len(missing) > 1 else "it", "they are" if len(missing) > 1 else "it is"))
    return out


def main(argv):
    lines = []
    if len(argv) > 1:
        for path in argv[1:]:
            with open(path, errors="replace") as f:
                lines.extend(f)
    else:
        lines = sys.stdin.readlines()
    comms = parse(lines)
    if not comms:
        print("chorus_fr: no flight-recorder dump found")
        return 1
    for comm in sorted(comms):
        print("\n".join(summarize(comm, comms[comm])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
