#!/usr/bin/python3
"""chorus_torch against Gloo, in the same processes and the same run: dist.all_reduce of float32 tensors from
8 B to 256 MiB, and one DistributedDataParallel training step.

    PYTHONPATH=build/python /usr/bin/python3 perf/torch/bench_torch.py --ranks 2,4 [--max-bytes 268435456]

For every rank count, every rank initializes a "chorus" default group and a "gloo" group over the same
ranks; each size is timed on both, alternating backends round by round so that machine noise hits both.
all_reduce: the time of one blocking call (mean over the iterations after warm-up, the slowest rank's),
algbw = bytes / time, busbw = algbw * 2 (n - 1) / n (nccl-tests' convention).

DDP step: forward, backward (gradients all-reduced by DDP in buckets while backward runs) and an SGD step
of an MLP; "exposed communication" is the step time minus the same step without DDP (no communication),
measured in the same processes, the three variants interleaved step by step (median of each). Each rank uses one intra-op thread (torch.set_num_threads(1)) for both
backends.
"""
import argparse
import datetime
import os
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import chorus_torch  # noqa: F401


def _sizes(max_bytes):
    s, out = 8, []
    while s <= max_bytes:
        out.append(s)
        s *= 4 if s < 1 << 19 else 2
    return out


def _time_all_reduce(t, group, iters):
    dist.barrier(group=group)
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(t, group=group)
    elapsed = (time.perf_counter() - start) / iters
    # The slowest rank's time.
    e = torch.tensor([elapsed], dtype=torch.float64)
    dist.all_reduce(e, op=dist.ReduceOp.MAX, group=group)
    return e.item()


def _bench_all_reduce(rank, n, groups, sizes, rounds):
    rows = []
    for size in sizes:
        t = torch.ones(max(1, size // 4), dtype=torch.float32)
        # About 0.3 s per measurement at the first estimate, at least 3 and at most 2000 iterations.
        best = {}
        for name, g in groups.items():
            _time_all_reduce(t, g, 2)  # warm-up (connections, buffers)
            est = _time_all_reduce(t, g, 3)
            best[name] = (max(3, min(2000, int(0.3 / max(est, 1e-6)))), [])
        for _ in range(rounds):
            for name, g in groups.items():
                iters, samples = best[name]
                samples.append(_time_all_reduce(t, g, iters))
        row = {"bytes": size}
        for name, (_, samples) in best.items():
            row[name] = min(samples)  # the least disturbed round
        rows.append(row)
        if rank == 0:
            print(f"  all_reduce {size:>10d} B: " + "  ".join(f"{k} {row[k] * 1e6:10.1f} us" for k in groups),
                  flush=True)
    return rows


class _MLP(torch.nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.layers = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU())
                                            for _ in range(depth)])

    def forward(self, x):
        return self.layers(x)


def _bench_ddp(rank, n, groups, width, depth, batch, steps, rounds, bucket_mb):
    """Per-step times of the same MLP trained without DDP, with DDP on chorus and with DDP on gloo, the three
    interleaved step by step (in a rotating order, ranks aligned by a barrier before each step) so that
    machine load hits all three alike; the median of each, the slowest rank's."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.manual_seed(0)
    models = {"compute": _MLP(width, depth)}
    for name, g in groups.items():
        models[name] = DDP(_MLP(width, depth), process_group=g, bucket_cap_mb=bucket_mb)
    opts = {k: torch.optim.SGD(m.parameters(), lr=1e-4) for k, m in models.items()}
    x = torch.randn(batch, width)

    def step(k):
        loss = models[k](x).square().mean()
        opts[k].zero_grad()
        loss.backward()
        opts[k].step()

    names = list(models)
    times = {k: [] for k in names}
    for i in range(3 + steps * rounds):
        order = names[i % len(names):] + names[:i % len(names)]
        for k in order:
            dist.barrier(group=groups["gloo"])
            start = time.perf_counter()
            step(k)
            if i >= 3:  # warm-up steps (DDP's first iterations rebuild buckets)
                times[k].append(time.perf_counter() - start)
    results = {"params": sum(p.numel() for p in models["compute"].parameters())}
    for k, t in times.items():
        e = torch.tensor([sorted(t)[len(t) // 2]], dtype=torch.float64)
        dist.all_reduce(e, op=dist.ReduceOp.MAX, group=groups["gloo"])
        results[k] = e.item()
    return results


def _worker(rank, n, path, args, out_path):
    torch.set_num_threads(1)
    dist.init_process_group("chorus", init_method="file://" + path, rank=rank, world_size=n,
                            timeout=datetime.timedelta(seconds=600))
    groups = {"chorus": dist.group.WORLD, "gloo": dist.new_group(backend="gloo")}
    if rank == 0:
        print(f"== {n} ranks", flush=True)
    rows = _bench_all_reduce(rank, n, groups, _sizes(args.max_bytes), args.rounds) if not args.ddp_only else []
    ddp = _bench_ddp(rank, n, groups, args.width, args.depth, args.batch, args.steps, args.rounds, args.bucket_mb)
    if rank == 0:
        torch.save({"ranks": n, "all_reduce": rows, "ddp": ddp}, out_path)
    dist.destroy_process_group()


def _table(res):
    n = res["ranks"]
    lines = [f"### {n} ranks", "",
             "| size | chorus time (us) | gloo time (us) | chorus busbw (GB/s) | gloo busbw (GB/s) | chorus/gloo busbw |",
             "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in res["all_reduce"]:
        b = r["bytes"]
        bw = {k: b / r[k] / 1e9 * 2 * (n - 1) / n for k in ("chorus", "gloo")}
        size = f"{b >> 20} MiB" if b >= 1 << 20 else (f"{b >> 10} KiB" if b >= 1 << 10 else f"{b} B")
        lines.append(f"| {size} | {r['chorus'] * 1e6:.1f} | {r['gloo'] * 1e6:.1f} | {bw['chorus']:.3f} | "
                     f"{bw['gloo']:.3f} | {r['gloo'] / r['chorus']:.2f}x |")
    d = res["ddp"]
    exposed = {k: max(0.0, d[k] - d["compute"]) for k in ("chorus", "gloo")}
    lines += ["", f"DDP step, MLP of {d['params'] / 1e6:.1f} M parameters ({d['params'] * 4 / 2**20:.0f} MiB of "
              f"gradients): compute alone {d['compute'] * 1e3:.1f} ms; chorus {d['chorus'] * 1e3:.1f} ms "
              f"(exposed communication {exposed['chorus'] * 1e3:.1f} ms); gloo {d['gloo'] * 1e3:.1f} ms "
              f"(exposed communication {exposed['gloo'] * 1e3:.1f} ms); exposed chorus/gloo "
              f"{exposed['chorus'] / exposed['gloo'] if exposed['gloo'] > 0 else float('nan'):.2f}", ""]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ranks", default="2,4")
    p.add_argument("--max-bytes", type=int, default=256 << 20)
    p.add_argument("--rounds", type=int, default=3, help="alternating measurement rounds; the best is kept")
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--depth", type=int, default=8)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=10, help="DDP steps per round and variant")
    p.add_argument("--bucket-mb", type=float, default=25, help="DDP's bucket_cap_mb (its default: 25)")
    p.add_argument("--ddp-only", action="store_true")
    args = p.parse_args()
    print(f"load average before the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    tables = []
    for n in [int(x) for x in args.ranks.split(",")]:
        path = tempfile.mktemp(prefix="bench_torch_store_")
        out = tempfile.mktemp(prefix="bench_torch_out_")
        mp.start_processes(_worker, args=(n, path, args, out), nprocs=n, start_method="fork")
        tables.append(_table(torch.load(out)))
        os.unlink(out)
    print(f"load average after the run: {os.getloadavg()[0]:.1f}")
    print("\n" + "\n".join(tables))


if __name__ == "__main__":
    sys.exit(main())
