"""Real processes for the chorus_torch tests: each rank is a forked process with a "chorus" default group and
a "gloo" group over the same ranks, so every operation can be compared with Gloo's in the same processes.

    results = run_ranks(fn, world_size, arg...)   # fn(ctx, arg...) runs on every rank; returns their results

A rank that raises makes run_ranks raise AssertionError with that rank's traceback; a rank that does not
finish within `timeout` seconds is killed and reported (a hang is a failure, never a wait).
"""
import datetime
import faulthandler
import multiprocessing
import os
import sys
import tempfile
import traceback
import unittest

SKIP_REASON = None
try:
    import torch
    import torch.distributed as dist

    import chorus_torch  # noqa: F401  (registers "chorus")
except ImportError as e:  # the ctest wrapper reports this as a skip, with the reason
    SKIP_REASON = f"chorus_torch cannot be imported: {e}"


class Ctx:
    """What a rank's function gets: its rank, the group size, and the Gloo group to compare with."""

    def __init__(self, rank, size, gloo):
        self.rank = rank
        self.size = size
        self.gloo = gloo


def _child(fn, rank, size, path, timeout_s, conn, args, env):
    faulthandler.enable()  # a crash prints the Python stack of every thread
    try:
        os.environ.update(env)
        dist.init_process_group("chorus", init_method="file://" + path, rank=rank, world_size=size,
                                timeout=datetime.timedelta(seconds=timeout_s))
        gloo = dist.new_group(backend="gloo")
        result = fn(Ctx(rank, size, gloo), *args)
        dist.destroy_process_group()
        conn.send(("ok", result))
    except BaseException:  # noqa: B902 (report everything to the parent)
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def run_ranks(fn, size, *args, timeout=180, pg_timeout=60, env=None, expect_dead=()):
    """Runs fn(ctx, *args) on `size` forked ranks; returns the results in rank order.

    Ranks listed in expect_dead may die (a test that kills one); their result is None."""
    ctx = multiprocessing.get_context("fork")
    path = tempfile.mktemp(prefix="chorus_torch_store_")
    procs, conns = [], []
    for rank in range(size):
        parent, child = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_child, args=(fn, rank, size, path, pg_timeout, child, args, env or {}))
        p.start()
        child.close()
        procs.append(p)
        conns.append(parent)
    results, errors = [None] * size, []
    deadline = multiprocessing.connection.time.monotonic() + timeout
    # The ranks that must finish first; the ones allowed to die (or stop) only get what is left.
    order = [r for r in range(size) if r not in expect_dead] + [r for r in range(size) if r in expect_dead]
    for rank in order:
        c = conns[rank]
        left = max(0.0, deadline - multiprocessing.connection.time.monotonic())
        if rank in expect_dead:
            left = 0.0
        if c.poll(left):
            try:
                status, value = c.recv()
            except EOFError:
                status, value = "dead", "exited without a result"
        else:
            status, value = "hang", f"no result after {timeout} s"
        if status == "ok":
            results[rank] = value
        elif rank not in expect_dead:
            errors.append(f"--- rank {rank} ({status}):\n{value}")
    for p in procs:
        p.join(0 if expect_dead else 1)
        if p.is_alive():
            p.kill()
            p.join()
    try:
        os.unlink(path)
    except OSError:
        pass
    if errors:
        raise AssertionError(f"{fn.__name__} at {size} ranks failed:\n" + "\n".join(errors))
    return results


class TorchTestCase(unittest.TestCase):
    """Skips (with the reason printed) when chorus_torch cannot be imported."""

    @classmethod
    def setUpClass(cls):
        if SKIP_REASON is not None:
            raise unittest.SkipTest(SKIP_REASON)


# Element types PyTorch and Chorus share, and the ones Chorus lacks (they move as bytes, reduce by gather+fold).
NATIVE_DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int32", "int64", "uint8", "bool"]
OTHER_DTYPES = ["int16"]


def dtype_of(name):
    return getattr(torch, name)


def pattern(rank, count, dtype, salt=0):
    """Deterministic input of (rank, index): small integers, exact in every type (so any summation order gives
    the same bits), 0/1 for bool."""
    i = torch.arange(count, dtype=torch.int64)
    v = (i * 7 + rank * 13 + salt * 5) % 11 - (0 if dtype in (torch.uint8, torch.bool) else 3)
    if dtype == torch.bool:
        return (v % 2 == 1)
    return v.to(dtype)
