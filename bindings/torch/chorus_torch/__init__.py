"""Chorus collectives as a torch.distributed backend.

    import chorus_torch                      # registers the backend "chorus"
    import torch.distributed as dist
    dist.init_process_group("chorus")        # then every torch.distributed call runs on Chorus

Each process group (the default one and every ``new_group``) gets its own Chorus communicator; the group's
``timeout`` is the communicator's deadline. CPU tensors run on a Chorus host stream per group (operations
are asynchronous: ``async_op=True`` returns at once); CUDA tensors run on a CUDA communicator of their
device when PyTorch and Chorus were built with CUDA.
"""
import torch  # noqa: F401  (loads libtorch before the extension)
import torch.distributed as dist
import torch.distributed.distributed_c10d as _c10d

from ._C import ProcessGroupChorus, cuda_built, version

__all__ = ["ProcessGroupChorus", "BACKEND", "cuda_built", "version"]

BACKEND = "chorus"


def _create_process_group(store, rank, size, timeout):
    return ProcessGroupChorus(store, rank, size, timeout)


if not hasattr(dist.Backend, BACKEND.upper()):
    dist.Backend.register_backend(BACKEND, _create_process_group)


# torch.distributed.monitored_barrier refuses every backend but Gloo before reaching the process group;
# ProcessGroupChorus implements monitoredBarrier, so let it through for "chorus" groups.
_gloo_only_monitored_barrier = _c10d.monitored_barrier


def _monitored_barrier(group=_c10d.GroupMember.WORLD, timeout=None, wait_all_ranks=False):
    if not _c10d._rank_not_in_group(group) and _c10d.get_backend(group) == BACKEND:
        if timeout is None:
            timeout = _c10d.default_pg_timeout
        group_to_use = _c10d._get_default_group() if group is None else group
        return group_to_use.monitored_barrier(timeout, wait_all_ranks=wait_all_ranks)
    return _gloo_only_monitored_barrier(group, timeout, wait_all_ranks)


_monitored_barrier.__doc__ = _gloo_only_monitored_barrier.__doc__
if getattr(_c10d.monitored_barrier, "__name__", "") != "_monitored_barrier":
    _c10d.monitored_barrier = _monitored_barrier
    dist.monitored_barrier = _monitored_barrier
