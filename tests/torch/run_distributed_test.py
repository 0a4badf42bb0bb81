#!/usr/bin/python3
"""Runs PyTorch's own torch/testing/_internal/distributed/distributed_test.py against a backend.

Debian ships the test module but not its drivers; this is the equivalent of upstream's
test/distributed/test_distributed_spawn.py (one process per rank per test, started with "spawn", or "fork"
to save the re-import of torch in every rank), plus a report.

    run_distributed_test.py run --backend chorus --world-size 2 [--filter REGEX] [--json FILE]
    run_distributed_test.py compare --world-sizes 2,4 [--filter REGEX] [--out DIR]

`run` runs the suite once and prints one line per test and the passed/failed/skipped counts. `compare` runs
it with "gloo" and "chorus" at each world size (one subprocess per run) and prints, per world size, the
counts and every test that Gloo passes and Chorus does not, with the reason.

--beyond-gloo also opens the CPU all_to_all tests the file reserves for MPI (Gloo 1.13 cannot run them).

--as-gloo (the default for backends other than gloo) runs the suite as it runs for Gloo: the file's
`BACKEND == "gloo"` gates and its backend feature lists accept the backend too, so the tests Gloo runs on
CPU run on it (gates that only exist to skip backends without a feature are what would otherwise hide a
missing feature). --as-shipped leaves the file untouched (then those tests skip with the file's reasons).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE = "torch.testing._internal.distributed.distributed_test"


def _parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="mode", required=True)
    run = sub.add_parser("run", help="run the suite once")
    run.add_argument("--backend", default="chorus")
    run.add_argument("--world-size", type=int, default=2)
    run.add_argument("--json", help="write every test's outcome and reason here")
    cmp = sub.add_parser("compare", help="run gloo and chorus at each world size and report the differences")
    cmp.add_argument("--world-sizes", default="2,4")
    cmp.add_argument("--backends", default="gloo,chorus", help="the first one is the reference")
    cmp.add_argument("--out", default=".", help="folder for the per-run JSON files")
    cmp.add_argument("--expect", help="JSON file: tests allowed to differ from the reference, with the reason")
    for q in (run, cmp):
        q.add_argument("--beyond-gloo", action="store_true",
                       help="also run the CPU tests the file reserves for MPI (all_to_all), which Gloo cannot run")
        q.add_argument("--filter", default="", help="only tests whose name matches this regular expression")
        q.add_argument("--start-method", choices=("spawn", "fork"), default="spawn")
        q.add_argument("--timeout", type=int, default=300, help="seconds per test (PyTorch's default is 300)")
        g = q.add_mutually_exclusive_group()
        g.add_argument("--as-gloo", dest="as_gloo", action="store_true", default=None)
        g.add_argument("--as-shipped", dest="as_gloo", action="store_false")
    return p.parse_args(argv)


# ---- the suite, as upstream's spawn driver builds it (runs in the parent and in every spawned rank) ------


def _treat_as_gloo(source, backend):
    """The test file's Gloo gates, opened to `backend` too."""
    b = repr(backend)
    rules = [
        (r'BACKEND != "gloo"', f'BACKEND not in ("gloo", {b})'),
        (r'BACKEND == "gloo"', f'BACKEND in ("gloo", {b})'),
        (r'require_backend\(\{"gloo"\}\)', f'require_backend({{"gloo", {b}}})'),
    ]
    if os.environ.get("CHORUS_DT_BEYOND_GLOO") == "1":
        # The CPU all-to-all tests the file runs for MPI only (Gloo 1.13 lacks all_to_all of lists).
        rules.append((r'BACKEND != "mpi", "Only MPI supports', f'BACKEND not in ("mpi", {b}), "Only MPI supports'))
    for pattern, replacement in rules:
        source = re.sub(pattern, replacement, source)
    return source


def _fix_sharded_tensor_metadata():
    """Debian 12 pairs PyTorch 1.13 with Python 3.11, whose dataclasses refuse the unhashable default of
    ShardedTensorMetadata.tensor_properties (fixed upstream in PyTorch 2.0 with a default_factory). The suite
    turns on DDP's ReplicatedTensor mode, which imports that module, so every DDP test would fail on every
    backend with "mutable default ... is not allowed". This import hook applies upstream's one-line fix when
    the module is loaded (the same for every backend)."""
    import importlib.abc
    import importlib.machinery

    name = "torch.distributed._shard.sharded_tensor.metadata"
    broken, fixed = b"field(default=TensorProperties())", b"field(default_factory=TensorProperties)"

    class Loader(importlib.machinery.SourceFileLoader):
        def get_code(self, fullname):  # from the patched source, never from a cached .pyc of the original
            return self.source_to_code(self.get_data(self.path).replace(broken, fixed), self.path)

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            if fullname != name:
                return None
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is not None:
                spec.loader = Loader(fullname, spec.origin)
            return spec

    if name not in sys.modules:
        sys.meta_path.insert(0, Finder())


def _load_suite():
    backend = os.environ["BACKEND"]
    as_gloo = os.environ.get("CHORUS_DT_AS_GLOO") == "1"
    try:
        import expecttest  # noqa: F401
    except ImportError:
        sys.path.insert(0, os.path.join(HERE, "stubs"))
    import torch  # noqa: F401
    import torch.distributed as dist  # noqa: F401

    _fix_sharded_tensor_metadata()
    if backend not in ("gloo", "nccl", "mpi", "ucc"):
        __import__(f"{backend}_torch")  # registers the backend (chorus_torch)
    import torch.testing._internal.common_distributed as cd

    if as_gloo:
        for feature, backends in cd.DistTestCases.backend_feature.items():
            if "gloo" in backends:
                backends.add(backend)
    import importlib.util
    import logging

    for name in ("torch.testing._internal.common_distributed", "torch.distributed.distributed_c10d"):
        logging.getLogger(name).setLevel(logging.WARNING)

    spec = importlib.util.find_spec(MODULE)
    with open(spec.origin) as f:
        source = f.read()
    if as_gloo:
        source = _treat_as_gloo(source, backend)
    mod = types.ModuleType(MODULE)
    mod.__file__ = spec.origin
    sys.modules[MODULE] = mod
    exec(compile(source, spec.origin, "exec"), mod.__dict__)
    if as_gloo:
        for name in ("PROFILING_SUPPORTED_BACKENDS", "CUDA_PROFILING_SUPPORTED_BACKENDS",
                     "SEND_RECV_PROFILING_SUPPORTED_BACKENDS"):
            getattr(mod, name).append(backend)
    return mod


_ARGV = sys.argv[:]
if "BACKEND" in os.environ and os.environ.get("CHORUS_DT_DRIVER") == "1":
    sys.argv = sys.argv[:1]  # torch's test helpers parse sys.argv at import
    _dt = _load_suite()

    class TestDistBackendWithSpawn(_dt.TestDistBackend, _dt.DistributedTest._DistTestBase):
        def setUp(self):
            super().setUp()
            import torch.multiprocessing

            method = os.environ.get("CHORUS_DT_START_METHOD", "spawn")
            self._start_processes(torch.multiprocessing.get_context(method).Process)


# ---- running and reporting ------------------------------------------------------------------------------


class _Recorder(unittest.TextTestResult):
    """Keeps each test's outcome, reason and seconds, and prints one line per test."""

    def __init__(self, stream):
        super().__init__(stream, descriptions=False, verbosity=0)
        self.records = {}
        self._start = 0.0

    def startTest(self, test):
        super().startTest(test)
        self._start = time.time()

    def _record(self, test, outcome, reason=""):
        name = test.id().split(".")[-1]
        secs = time.time() - self._start
        reason = " ".join(reason.split())[-600:]
        self.records[name] = {"outcome": outcome, "reason": reason, "seconds": round(secs, 2)}
        print(f"{outcome:7s} {secs:6.1f}s {name}" + (f"  [{reason[:160]}]" if reason else ""), flush=True)

    @staticmethod
    def _why(err):
        import traceback

        text = "".join(traceback.format_exception(*err))
        # C++ frames of c10::Error say nothing about the cause: keep the Python side and the messages.
        lines = [line for line in text.strip().splitlines()
                 if line.strip() and not re.match(r"\s*(frame #\d+|Exception raised from)", line)]
        # The child's exception text is embedded in the parent's message; its last lines name the cause.
        return " | ".join(lines[-4:])

    def addSuccess(self, test):
        super().addSuccess(test)
        self._record(test, "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record(test, "failed", self._why(err))

    def addError(self, test, err):
        super().addError(test, err)
        self._record(test, "failed", self._why(err))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._record(test, "skipped", reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._record(test, "passed", "expected failure")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._record(test, "failed", "unexpected success")


def _counts(records):
    c = {"passed": 0, "failed": 0, "skipped": 0}
    for r in records.values():
        c[r["outcome"]] += 1
    return c


def _run(args):
    suite = unittest.TestLoader().loadTestsFromTestCase(TestDistBackendWithSpawn)
    pattern = re.compile(args.filter) if args.filter else None
    tests = [t for t in suite if pattern is None or pattern.search(t.id().split(".")[-1])]
    result = _Recorder(sys.stdout)
    start = time.time()
    unittest.TestSuite(tests).run(result)
    counts = _counts(result.records)
    wall = time.time() - start
    print(f"\n{os.environ['BACKEND']} world_size={os.environ['WORLD_SIZE']}: {counts['passed']} passed, "
          f"{counts['failed']} failed, {counts['skipped']} skipped ({len(tests)} tests, {wall:.0f} s)", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"backend": os.environ["BACKEND"], "world_size": int(os.environ["WORLD_SIZE"]),
                       "as_gloo": os.environ.get("CHORUS_DT_AS_GLOO") == "1", "seconds": round(wall),
                       "counts": counts, "tests": result.records}, f, indent=1, sort_keys=True)
    return 0 if counts["failed"] == 0 else 1


def _compare(args):
    ref, *others = args.backends.split(",")
    os.makedirs(args.out, exist_ok=True)
    expected = {}
    if args.expect:
        with open(args.expect) as f:
            expected = json.load(f)
    status = 0
    for ws in [int(w) for w in args.world_sizes.split(",")]:
        runs = {}
        for backend in [ref] + others:
            path = os.path.join(args.out, f"distributed_test_{backend}_{ws}.json")
            cmd = [sys.executable, os.path.abspath(__file__), "run", "--backend", backend, "--world-size", str(ws),
                   "--json", path, "--start-method", args.start_method, "--timeout", str(args.timeout)]
            if args.filter:
                cmd += ["--filter", args.filter]
            if args.beyond_gloo and backend != ref:
                cmd += ["--beyond-gloo"]
            if args.as_gloo is not None:
                cmd += ["--as-gloo" if args.as_gloo else "--as-shipped"]
            print(f"=== {backend}, {ws} ranks: {' '.join(cmd)}", flush=True)
            subprocess.run(cmd, check=False)
            with open(path) as f:
                runs[backend] = json.load(f)
        print(f"\n=== world size {ws}")
        for backend, run in runs.items():
            c = run["counts"]
            print(f"{backend:8s} {c['passed']:4d} passed {c['failed']:4d} failed {c['skipped']:4d} skipped "
                  f"({run['seconds']} s)")
        for backend in others:
            worse = []
            for name, r in sorted(runs[ref]["tests"].items()):
                mine = runs[backend]["tests"].get(name, {"outcome": "missing", "reason": ""})
                if r["outcome"] == "passed" and mine["outcome"] != "passed":
                    worse.append((name, mine))
            print(f"{len(worse)} tests {ref} passes and {backend} does not:")
            for name, mine in worse:
                allowed = expected.get(name)
                tag = "expected: " + allowed if allowed else "UNEXPECTED"
                print(f"  {name}: {mine['outcome']} [{tag}]: {mine['reason'][:400]}")
                if not allowed:
                    status = 1
    return status


def main():
    args = _parse_args(_ARGV[1:])
    if args.mode == "compare":
        return _compare(args)
    as_gloo = args.as_gloo if args.as_gloo is not None else args.backend != "gloo"
    env = dict(os.environ, BACKEND=args.backend, WORLD_SIZE=str(args.world_size), CHORUS_DT_DRIVER="1",
               CHORUS_DT_AS_GLOO="1" if as_gloo else "0", CHORUS_DT_START_METHOD=args.start_method,
               DISTRIBUTED_TESTS_DEFAULT_TIMEOUT=str(args.timeout),
               CHORUS_DT_BEYOND_GLOO="1" if args.beyond_gloo else "0")
    if args.backend == "chorus" and "CHORUS_TORCH_ANY_SOURCE" not in os.environ:
        # Gloo receives from any source; chorus_torch does when sends announce themselves (off by default).
        env["CHORUS_TORCH_ANY_SOURCE"] = "1"
    if os.environ.get("CHORUS_DT_DRIVER") != "1":
        # The suite reads its configuration from the environment at import: run it in a fresh interpreter.
        return subprocess.run([sys.executable, os.path.abspath(__file__)] + _ARGV[1:], env=env).returncode
    return _run(args)


if __name__ == "__main__":
    sys.exit(main())
