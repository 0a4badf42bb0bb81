#!/usr/bin/python3
"""Every parallel layout of chorus-train on 8 ranks, over Chorus and over Open MPI, as one Markdown table.

Each row runs `chorus-train` (chorusrun for Chorus, mpirun --backend mpi for Open MPI) on the same model and
global batch, and reads its summary: tokens/s, step time, exposed communication, pipeline bubble, rank 0's
memory (parameters + gradients + optimizer state, activations) and the MiB per step rank 0 moved through each
group. Usage: perf/train/layouts.py [--bin build/bin] [--steps 12] [--ranks 8] [--backends chorus,mpi]
"""
import argparse
import re
import subprocess
import sys

MODEL = ["--layers", "8", "--heads", "8", "--d-model", "128", "--seq-len", "128", "--batch", "4",
         "--corpus", "jargon", "--eval-every", "0", "--quiet=false", "--peak-ms", "200"]

# (name, flags): global batch 64 sequences in each (dp x micro-batches x batch 4).
LAYOUTS = [
    ("DP 8", ["--dp", "8", "--grad-accum", "2"]),
    ("DP 8, ZeRO-3", ["--dp", "8", "--grad-accum", "2", "--zero", "3"]),
    ("DP 4 x TP 2", ["--dp", "4", "--tp", "2", "--grad-accum", "4"]),
    ("DP 4 x TP 2, SP", ["--dp", "4", "--tp", "2", "--grad-accum", "4", "--sequence-parallel"]),
    ("DP 2 x TP 4", ["--dp", "2", "--tp", "4", "--grad-accum", "8"]),
    ("DP 4 x PP 2, 1F1B", ["--dp", "4", "--pp", "2", "--grad-accum", "4"]),
    ("DP 2 x PP 4, 1F1B", ["--dp", "2", "--pp", "4", "--grad-accum", "8"]),
    ("DP 2 x PP 4, GPipe", ["--dp", "2", "--pp", "4", "--grad-accum", "8", "--schedule", "gpipe"]),
    ("DP 2 x PP 4, interleaved V=2", ["--dp", "2", "--pp", "4", "--grad-accum", "8", "--schedule", "interleaved",
                                      "--virtual-stages", "2"]),
    ("DP 2 x TP 2 x PP 2, ZeRO-1", ["--dp", "2", "--tp", "2", "--pp", "2", "--grad-accum", "8", "--zero", "1"]),
    ("TP 2 x PP 4", ["--dp", "1", "--tp", "2", "--pp", "4", "--grad-accum", "16"]),
]


def run(args, cmd_prefix):
    p = subprocess.run(cmd_prefix + args, capture_output=True, text=True, timeout=1200)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd_prefix + args)} failed:\n{p.stderr[-2000:]}")
    return p.stdout


def parse(out):
    out = re.sub(r"^\[\d+\] ", "", out, flags=re.M)
    row = {}
    m = re.search(r"done: \d+ steps, ([\d.]+) tokens/s, ([\d.]+) ms per step, exposed communication ([\d.]+) ms", out)
    row["tok"], row["ms"], row["comm"] = m.group(1), m.group(2), m.group(3)
    m = re.search(r"pipeline: bubble ([\d.]+) % measured .* vs ([\d.]+) %", out)
    row["bubble"] = f"{m.group(1)} ({m.group(2)})" if m else "-"
    mem = re.search(r"^\s+0\s+\d+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", out, re.M)
    row["pgo"], row["act"] = mem.group(4), mem.group(6)
    vol = {"tensor-parallel": 0.0, "pipeline": 0.0, "data-parallel": 0.0}
    for line in out.splitlines():
        m = re.match(r"\s+(data-parallel|tensor-parallel|parameter-gather|pipeline [a-z ()]+|tied-embedding)\s+"
                     r"(all-reduce|reduce-scatter|all-gather|send/recv|broadcast|reduce)\s+([\d.]+)\s+([\d.]+)", line)
        if not m:
            continue
        group = m.group(1)
        key = "pipeline" if group.startswith("pipeline") or group == "tied-embedding" else \
            ("data-parallel" if group in ("data-parallel", "parameter-gather") else group)
        vol[key] += float(m.group(4))
    row["tp"], row["pp"], row["dp"] = (f"{vol['tensor-parallel']:.1f}", f"{vol['pipeline']:.1f}",
                                       f"{vol['data-parallel']:.1f}")
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--backends", default="chorus,mpi")
    a = ap.parse_args()
    print("| layout | backend | tokens/s | step ms | exposed comm ms | bubble % (formula) | rank 0 p+g+o MiB | "
          "rank 0 activations MiB | TP MiB/step | PP MiB/step | DP MiB/step |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, flags in LAYOUTS:
        for backend in a.backends.split(","):
            if backend == "chorus":
                prefix = [f"{a.bin}/chorusrun", "-np", str(a.ranks), f"{a.bin}/chorus-train"]
            else:
                prefix = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np",
                          str(a.ranks), f"{a.bin}/chorus-train", "--backend", "mpi"]
            r = parse(run(MODEL + ["--steps", str(a.steps)] + flags, prefix))
            print(f"| {name} | {backend} | {r['tok']} | {r['ms']} | {r['comm']} | {r['bubble']} | {r['pgo']} | "
                  f"{r['act']} | {r['tp']} | {r['pp']} | {r['dp']} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
