"""DistributedDataParallel on "chorus" against "gloo" in the same processes: the same small model, the same
initial weights and the same data, trained 300 steps with each backend; every step's loss must agree within
1e-6 (the all-reduced gradients differ at most by the order of a floating-point sum).
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import TorchTestCase, run_ranks  # noqa: E402

try:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
except ImportError:
    pass

STEPS = 300


def _model():
    torch.manual_seed(1234)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64), torch.nn.Tanh(),
                               torch.nn.Linear(64, 4))


def _batch(rank, step):
    g = torch.Generator().manual_seed(1000 * step + rank)
    x = torch.randn(16, 32, generator=g)
    y = torch.randint(0, 4, (16,), generator=g)
    return x, y


def _train(ctx, group, steps, bucket_mb, hook):
    model = DDP(_model(), process_group=group, bucket_cap_mb=bucket_mb)
    if hook is not None:
        model.register_comm_hook(group, hook)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for step in range(steps):
        x, y = _batch(ctx.rank, step)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().clone() for p in model.parameters()]


def _hook_then(group, bucket):
    """A Python comm hook chaining a then() on the all-reduce future (the futures path of the backend)."""
    fut = dist.all_reduce(bucket.buffer(), group=group, async_op=True).get_future()
    size = dist.get_world_size(group)
    return fut.then(lambda f: f.value()[0].div_(size))


def rank_ddp(ctx, steps, bucket_mb, use_hook):
    hook = _hook_then if use_hook else None
    chorus_losses, chorus_params = _train(ctx, None, steps, bucket_mb, hook)
    gloo_losses, gloo_params = _train(ctx, ctx.gloo, steps, bucket_mb, hook)
    worst = max(abs(a - b) for a, b in zip(chorus_losses, gloo_losses))
    if worst > 1e-6:
        step = max(range(steps), key=lambda i: abs(chorus_losses[i] - gloo_losses[i]))
        raise AssertionError(f"rank {ctx.rank}: losses differ by {worst:.3g} at step {step}: "
                             f"chorus {chorus_losses[step]!r} gloo {gloo_losses[step]!r}")
    # Replicas stay identical across ranks: every rank's parameters equal rank 0's (checked with a broadcast).
    for p in chorus_params:
        ref = p.clone()
        dist.broadcast(ref, 0)
        if not torch.equal(ref, p):
            raise AssertionError(f"rank {ctx.rank}: DDP replicas diverged")
    return {"worst": worst, "first": chorus_losses[0], "last": chorus_losses[-1]}


class TestDDP(TorchTestCase):
    def run_case(self, size, bucket_mb, use_hook):
        results = run_ranks(rank_ddp, size, STEPS, bucket_mb, use_hook, timeout=600)
        worst = max(r["worst"] for r in results)
        print(f"DDP at {size} ranks, bucket {bucket_mb} MB, hook {use_hook}: {STEPS} steps, loss "
              f"{results[0]['first']:.4f} -> {results[0]['last']:.4f}, largest |chorus - gloo| {worst:.3g}", flush=True)
        # The loss must actually fall, or the comparison proves little.
        self.assertLess(results[0]["last"], results[0]["first"])

    def test_ddp_losses_equal_gloo_2_ranks(self):
        self.run_case(2, 25, False)

    def test_ddp_losses_equal_gloo_4_ranks_small_buckets(self):
        # 0.01 MB buckets: several all-reduces in flight during each backward pass.
        self.run_case(4, 0.01, False)

    def test_ddp_comm_hook_with_then_3_ranks(self):
        self.run_case(3, 0.01, True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
