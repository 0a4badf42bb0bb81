"""Failures on the "chorus" backend raise Python exceptions with Chorus's message, and never hang:

- a rank killed (SIGKILL) in the middle of a run makes the others' next operations raise within seconds,
  far below the group's timeout;
- a rank that stops (SIGSTOP) makes the others raise at the group's timeout (the communicator's deadline,
  from init_process_group(timeout=...)), with Gloo's word "Timed out";
- after a failure the group refuses further operations with the first error, and destroying it returns.
"""
import os
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import TorchTestCase, run_ranks  # noqa: E402

try:
    import torch
    import torch.distributed as dist
except ImportError:
    pass


def rank_killed_peer(ctx, victim, size_elems):
    t = torch.ones(size_elems)
    for _ in range(5):
        dist.all_reduce(t)
    if ctx.rank == victim:
        os.kill(os.getpid(), signal.SIGKILL)
    start = time.monotonic()
    try:
        for _ in range(1000):
            dist.all_reduce(t)
    except RuntimeError as e:
        elapsed = time.monotonic() - start
        msg = str(e)
        if "chorus" not in msg or "rank" not in msg:
            raise AssertionError(f"the error does not carry Chorus's message: {msg}")
        # The communicator is unusable now: the next call says so at once.
        try:
            dist.all_reduce(torch.ones(2))
        except RuntimeError as e2:
            if "failed earlier" not in str(e2):
                raise AssertionError(f"unexpected second error: {e2}")
        else:
            raise AssertionError("an operation after the failure succeeded")
        return {"elapsed": elapsed, "message": msg}
    raise AssertionError("1000 all-reduces succeeded with a dead rank")


def rank_stopped_peer(ctx, victim):
    t = torch.ones(100)
    dist.all_reduce(t)
    if ctx.rank == victim:
        # Stopped, not dead: the process is alive and silent, so only the deadline can end the others' wait.
        # The parent kills it afterwards.
        os.kill(os.getpid(), signal.SIGSTOP)
    start = time.monotonic()
    work = dist.all_reduce(t, async_op=True)
    try:
        work.wait()
    except RuntimeError as e:
        return {"elapsed": time.monotonic() - start, "message": str(e)}
    raise AssertionError("an all-reduce with a stopped rank completed")


def rank_async_failure(ctx, victim):
    """The error reaches futures and is_completed()/wait() of operations already in flight."""
    t = torch.ones(1000)
    dist.all_reduce(t)
    if ctx.rank == victim:
        os.kill(os.getpid(), signal.SIGKILL)
    works = [dist.all_reduce(torch.ones(1000), async_op=True) for _ in range(10)]
    fut = works[-1].get_future()
    try:
        fut.wait()
    except RuntimeError as e:
        for w in works:
            if not w.is_completed():
                raise AssertionError("a work is not complete after the failure")
        return {"message": str(e)}
    raise AssertionError("the future of an all-reduce with a dead rank completed")


class TestFault(TorchTestCase):
    def test_killed_rank_makes_others_raise(self):
        for size, victim in ((2, 1), (3, 0), (4, 2)):
            results = run_ranks(rank_killed_peer, size, victim, 1 << 16, pg_timeout=120, timeout=90,
                                expect_dead=(victim,))
            for r, res in enumerate(results):
                if r == victim:
                    continue
                print(f"{size} ranks, rank {victim} killed: rank {r} raised after {res['elapsed']:.2f} s: "
                      f"{res['message'][:200]}", flush=True)
                self.assertLess(res["elapsed"], 30.0, "detection took too long (the group's timeout is 120 s)")

    def test_stopped_rank_times_out_at_group_timeout(self):
        results = run_ranks(rank_stopped_peer, 3, 1, pg_timeout=3, timeout=90, expect_dead=(1,))
        for r in (0, 2):
            res = results[r]
            print(f"rank 1 stopped: rank {r} raised after {res['elapsed']:.2f} s: {res['message'][:200]}", flush=True)
            self.assertIn("Timed out", res["message"])
            self.assertGreater(res["elapsed"], 2.0)
            self.assertLess(res["elapsed"], 30.0)

    def test_failure_reaches_futures_and_pending_works(self):
        results = run_ranks(rank_async_failure, 3, 2, pg_timeout=120, timeout=90, expect_dead=(2,))
        for r in (0, 1):
            self.assertIn("chorus", results[r]["message"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
