#!/usr/bin/python3
"""Proofs that chorus-train's layouts compute what one process computes, run as real processes.

Each test trains a tiny GPT on the synthetic corpus under chorusrun (one rank per process), mpirun or as
threads, and compares the parameters of the checkpoints (`chorus-train ckpt-diff`, |a-b|/|a| over the whole
parameter vector) and the per-step losses of the CSV logs. Registered in CTest one test per method (label
`train`; the GPU proofs, class GpuProofs, under label `gpu`, exit status 77 when skipped); run one by hand with
`train_proofs.py --bin build/bin test_name`.
"""
import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

BIN = "build/bin"
HAVE_MPI = True
TINY = ["--layers", "2", "--heads", "4", "--d-model", "64", "--seq-len", "32", "--batch", "4",
        "--corpus", "synthetic", "--eval-every", "0", "--peak-ms", "20", "-q"]


SKIPPED = 77  # exit status of a run whose every test was skipped (CTest's SKIP_RETURN_CODE)


def run(cmd, expect=0, timeout=300):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if expect is not None and p.returncode != expect:
        raise AssertionError(f"{' '.join(cmd)}\nexited {p.returncode}, expected {expect}\n"
                             f"stdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}")
    return p


def train(args, np=1, launcher="chorus", expect=0):
    """Runs chorus-train on np ranks: 'chorus' (chorusrun), 'tcp' (chorusrun, two simulated hosts),
    'threads' (-t np) or 'mpi' (mpirun with the MPI backend)."""
    exe = os.path.join(BIN, "chorus-train")
    if np == 1:
        cmd = [exe] + TINY + args
    elif launcher == "threads":
        cmd = [exe, "-t", str(np)] + TINY + args
    elif launcher == "mpi":
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np", str(np), exe,
               "--backend", "mpi"] + TINY + args
    else:
        hosts = ["--hosts", "2"] if launcher == "tcp" else []
        cmd = [os.path.join(BIN, "chorusrun"), "-np", str(np)] + hosts + [exe] + TINY + args
    return run(cmd, expect=expect)


def diff(a, b):
    """|a-b|/|a| over the parameters of two checkpoints."""
    out = run([os.path.join(BIN, "chorus-train"), "ckpt-diff", a, b, "--rtol", "1e9"]).stdout
    return float(re.search(r"\|a-b\| / \|a\| = (\S+)", out).group(1))


def per_tensor(a, b):
    """|a-b|/|a| of every tensor of two checkpoints (ckpt-diff's table)."""
    out = run([os.path.join(BIN, "chorus-train"), "ckpt-diff", a, b, "--rtol", "1e9"]).stdout
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^(\S+)\s+max \|a-b\| \S+\s+\|a-b\|/\|a\| (\S+)$",
                                                                out, re.M)}


def snapshot(directory):
    """Every file under a directory with its bytes, to show that a refused run changed nothing."""
    files = {}
    for root, _, names in os.walk(directory):
        for n in names:
            path = os.path.join(root, n)
            with open(path, "rb") as f:
                files[os.path.relpath(path, directory)] = f.read()
    return files


def losses(path):
    with open(path) as f:
        return {int(r["step"]): float(r["loss"]) for r in csv.DictReader(f)}


class Proofs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="chorus-train-proof-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def assertSameLosses(self, a, b, rtol=0.0, steps=None):
        la, lb = losses(a), losses(b)
        keys = steps if steps is not None else sorted(la)
        self.assertTrue(keys)
        for s in keys:
            self.assertIn(s, lb)
            if rtol == 0:
                self.assertEqual(la[s], lb[s], f"step {s}")
            else:
                self.assertLessEqual(abs(la[s] - lb[s]), rtol * abs(la[s]), f"step {s}: {la[s]} vs {lb[s]}")

    # ---- data parallelism equals one process accumulating the same global batch -------------------------

    def test_dp2_equals_one_process_bitwise(self):
        train(["--steps", "5", "--grad-accum", "2", "--save", self.path("one"), "--csv", self.path("one.csv")])
        train(["--steps", "5", "--save", self.path("dp"), "--csv", self.path("dp.csv")], np=2)
        self.assertEqual(diff(self.path("one"), self.path("dp")), 0.0)
        self.assertSameLosses(self.path("one.csv"), self.path("dp.csv"))

    def test_dp4_equals_one_process(self):
        train(["--steps", "5", "--grad-accum", "4", "--save", self.path("one"), "--csv", self.path("one.csv")])
        train(["--steps", "5", "--save", self.path("dp"), "--csv", self.path("dp.csv")], np=4)
        self.assertLessEqual(diff(self.path("one"), self.path("dp")), 1e-6)
        self.assertSameLosses(self.path("one.csv"), self.path("dp.csv"), rtol=1e-6)

    def test_torchrun_style_variables(self):
        # Two processes started by hand with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, as torchrun sets them.
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        exe = os.path.join(BIN, "chorus-train")
        procs = []
        for r in range(2):
            env = dict(os.environ, RANK=str(r), WORLD_SIZE="2", LOCAL_RANK=str(r), MASTER_ADDR="127.0.0.1",
                       MASTER_PORT=str(port))
            args = [exe] + TINY + ["--steps", "3", "--save", self.path("torchrun")]
            procs.append(subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        for p in procs:
            out, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err)
        train(["--steps", "3", "--save", self.path("chorusrun")], np=2)
        self.assertEqual(diff(self.path("torchrun"), self.path("chorusrun")), 0.0)

    def test_threads_and_tcp_equal_processes_bitwise(self):
        train(["--steps", "3", "--zero", "1", "--save", self.path("proc")], np=2)
        train(["--steps", "3", "--zero", "1", "--save", self.path("threads")], np=2, launcher="threads")
        train(["--steps", "3", "--zero", "1", "--save", self.path("tcp")], np=2, launcher="tcp")
        self.assertEqual(diff(self.path("proc"), self.path("threads")), 0.0)
        self.assertEqual(diff(self.path("proc"), self.path("tcp")), 0.0)

    # ---- ZeRO equals DDP after every step -----------------------------------------------------------------

    def zero_against_ddp(self, np, tol):
        args = ["--steps", "5", "--save-every", "1"]
        train(args + ["--zero", "0", "--save", self.path("z0")], np=np)
        for z in (1, 2, 3):
            train(args + ["--zero", str(z), "--save", self.path(f"z{z}")], np=np)
            for step in range(1, 6):
                d = diff(self.path(f"z0/step-{step:08d}"), self.path(f"z{z}/step-{step:08d}"))
                self.assertLessEqual(d, tol, f"ZeRO-{z} at step {step}")

    def test_zero_equals_ddp_every_step_2_ranks_bitwise(self):
        self.zero_against_ddp(2, 0.0)

    def test_zero_equals_ddp_every_step_4_ranks(self):
        self.zero_against_ddp(4, 1e-6)

    def test_memory_matches_zero_formulas(self):
        for z in (0, 1, 2, 3):
            out = train(["--steps", "1", "--zero", str(z), "--quiet=false"], np=4, launcher="threads").stdout
            self.assertIn(f"ZeRO-{z}:", out)
            rows = [l for l in out.splitlines() if re.match(r"^\s+\d+\s+[\d.]+\s", l)]
            self.assertEqual(len(rows), 4, out)
            for r in rows:
                cols = r.split()
                self.assertEqual(cols[5], cols[6], f"ZeRO-{z}: p+g+o {cols[5]} MiB vs formula {cols[6]} MiB")
            self.assertNotIn("differs from the formula", out)

    # ---- gradient accumulation, bf16 gradients ------------------------------------------------------------

    def test_grad_accum_equals_one_big_batch(self):
        # The accumulated gradient equals the big batch's (they differ only in the order a GEMM sums the
        # rows), and so do the losses of every step. The parameters after AdamW differ more (2.4e-6 after 4
        # steps here): Adam scales each update to about the learning rate, so elements whose gradient is
        # near its epsilon (1e-8), such as the embedding rows of bytes absent from the batch, move by
        # rounding-sized differences; later gradients are then taken at slightly different points.
        train(["--steps", "1", "--grad-accum", "4", "--dump-grads", self.path("ga")])
        train(["--steps", "1", "--batch", "16", "--dump-grads", self.path("gb")])
        self.assertLessEqual(diff(self.path("ga"), self.path("gb")), 1e-6)
        train(["--steps", "4", "--grad-accum", "4", "--csv", self.path("a.csv"), "--save", self.path("accum")])
        train(["--steps", "4", "--batch", "16", "--csv", self.path("b.csv"), "--save", self.path("big")])
        self.assertSameLosses(self.path("a.csv"), self.path("b.csv"), rtol=1e-6)
        self.assertLessEqual(diff(self.path("accum"), self.path("big")), 1e-5)

    def test_accumulation_communicates_on_the_last_micro_step_only(self):
        out = train(["--steps", "2", "--grad-accum", "3", "--bucket-mb", "0.1"], np=2, launcher="threads").stdout
        one = train(["--steps", "2", "--bucket-mb", "0.1"], np=2, launcher="threads").stdout
        calls = [re.search(r"data-parallel\s+all-reduce\s+([\d.]+)", o) for o in (out, one)]
        self.assertTrue(all(calls), out)
        self.assertEqual(calls[0].group(1), calls[1].group(1))

    def test_bf16_gradients_track_fp32(self):
        train(["--steps", "20", "--csv", self.path("f.csv")], np=2)
        for z in (0, 2):
            train(["--steps", "20", "--zero", str(z), "--grad-comm-dtype", "bf16", "--csv", self.path(f"h{z}.csv")],
                  np=2)
            lf, lh = losses(self.path("f.csv")), losses(self.path(f"h{z}.csv"))
            self.assertLess(lh[20], lh[1] - 0.5)  # it learns
            for s in lf:
                self.assertLess(abs(lf[s] - lh[s]), 0.05 * lf[s], f"ZeRO-{z} step {s}")

    # ---- checkpoints --------------------------------------------------------------------------------------

    def test_resume_is_bitwise(self):
        for z in (0, 3):
            ck, full = self.path(f"ck{z}"), self.path(f"full{z}")
            train(["--steps", "6", "--zero", str(z), "--save", full, "--csv", self.path(f"full{z}.csv")], np=2)
            train(["--steps", "3", "--zero", str(z), "--save", ck], np=2)
            train(["--steps", "6", "--zero", str(z), "--resume", ck, "--save", ck, "--csv", self.path(f"res{z}.csv")],
                  np=2)
            self.assertEqual(diff(full, ck), 0.0)
            self.assertSameLosses(self.path(f"full{z}.csv"), self.path(f"res{z}.csv"), steps=[4, 5, 6])

    def test_recut_resume_4_to_2(self):
        # Saved on 4 ranks, resumed on 2 with twice the accumulation (the same global batch), against a 2-rank
        # run that trained from the start.
        train(["--steps", "3", "--zero", "2", "--save", self.path("ck")], np=4)
        train(["--steps", "6", "--zero", "1", "--grad-accum", "2", "--resume", self.path("ck"), "--save",
               self.path("ck"), "--csv", self.path("res.csv")], np=2)
        train(["--steps", "6", "--zero", "1", "--grad-accum", "2", "--save", self.path("two"), "--csv",
               self.path("two.csv")], np=2)
        self.assertSameLosses(self.path("two.csv"), self.path("res.csv"), rtol=1e-6, steps=[4, 5, 6])
        self.assertLessEqual(diff(self.path("two"), self.path("ck")), 1e-6)

    # ---- elastic data parallelism -------------------------------------------------------------------------

    def elastic_run(self, fault_rank):
        # Rank `fault_rank` of 4 SIGKILLs itself at the start of step 10 (a real process death); the last
        # in-memory snapshot is step 8. The 3 survivors revoke, agree on the lost rank, shrink, rebuild the
        # state of step 8 from the neighbours' copies, re-cut the ZeRO-1 shards and train steps 9-20.
        # Reference: the same 4-rank run saved at step 8, resumed on 3 ranks.
        common = ["--zero", "1", "--lr", "3e-3"]
        ref = self.path(f"ref{fault_rank}")
        train(["--steps", "8", "--save", ref] + common, np=4)
        train(["--steps", "20", "--resume", ref, "--csv", ref + ".csv"] + common, np=3)
        cmd = ([os.path.join(BIN, "chorusrun"), "-np", "4", "--keep-going", os.path.join(BIN, "chorus-train")] +
               [a for a in TINY if a != "-q"] +
               ["--steps", "20", "--elastic", "--snapshot-every", "4", "--fault-rank", str(fault_rank),
                "--fault-step", "10", "--log-every", "100", "--csv", self.path(f"elastic{fault_rank}.csv")] + common)
        p = run(cmd, expect=0)
        out = p.stdout + p.stderr
        self.assertRegex(out, rf"elastic: at step 10 lost rank\(s\) {fault_rank} .*3 ranks go on from the snapshot "
                         r"of step 8", out[-3000:])
        took = re.search(r"elastic: 3 ranks completed step 9, ([0-9.]+) s after the failure was detected "
                         r"\(wall clock ([0-9.]+) s\)", out)
        self.assertIsNotNone(took, out[-3000:])
        died = re.search(rf"fault injection: world rank {fault_rank} SIGKILLs itself at the start of step 10 "
                         r"\(wall clock ([0-9.]+) s\)", out)
        self.assertIsNotNone(died, out[-3000:])
        since_death = float(took.group(2)) - float(died.group(1))
        self.assertGreater(since_death, 0.0)
        print(f"killed rank {fault_rank}: from its death to the next completed step {since_death:.3f} s "
              f"(from the detected failure {float(took.group(1)):.3f} s)")
        self.assertRegex(out, r"after the elastic recovery, on 3 ranks:\s+(\[\d+\] )?done: 12 steps")
        # Steps 9-20 as the survivors ran them (the CSV keeps the 4-rank rows before them; the later row of a
        # step wins) against the resumed 3-rank run.
        self.assertSameLosses(ref + ".csv", self.path(f"elastic{fault_rank}.csv"), rtol=1e-6,
                              steps=list(range(9, 21)))

    def test_elastic_dp4_survives_a_killed_rank(self):
        self.elastic_run(2)

    def test_elastic_dp4_survives_the_loss_of_rank_0(self):
        # Rank 0 reports: after the recovery the survivors' rank 0 (old rank 1) takes over the log and the CSV.
        self.elastic_run(0)

    def test_elastic_refuses_what_it_cannot_do(self):
        for bad in (["--tp", "2"], ["--backend", "mpi"]):
            p = train(["--steps", "2", "--elastic"] + bad, np=1, expect=2)
            self.assertIn("--elastic", p.stdout + p.stderr)

    def test_bad_checkpoints_are_refused_before_training(self):
        ck = self.path("ck")
        train(["--steps", "2", "--zero", "1", "--save", ck], np=2)
        step = os.path.join(ck, "step-00000002")
        shard = os.path.join(step, "rank-00001.bin")
        good = open(shard, "rb").read()
        cases = {
            "truncated": good[:-100],
            "corrupted": good[:len(good) // 2] + bytes([good[len(good) // 2] ^ 1]) + good[len(good) // 2 + 1:],
        }
        for what, data in cases.items():
            with open(shard, "wb") as f:
                f.write(data)
            before = snapshot(ck)
            p = train(["--steps", "4", "--resume", ck, "--save", ck, "--save-every", "1", "--csv", self.path("log.csv")],
                      np=2, expect=2)
            self.assertIn("rank-00001.bin", p.stderr, what)
            self.assertIn("truncated" if what == "truncated" else "checksum mismatch", p.stderr, what)
            self.assertFalse(os.path.exists(self.path("log.csv")), "the run wrote its log before refusing")
            self.assertEqual(snapshot(ck), before, f"{what}: the refused run changed the checkpoint directory")
        with open(shard, "wb") as f:
            f.write(good)
        p = train(["--steps", "4", "--layers", "3", "--resume", ck], np=2, expect=2)
        self.assertIn("another model", p.stderr)
        self.assertIn("layers=2", p.stderr)
        os.remove(shard)
        p = train(["--steps", "4", "--resume", ck], np=2, expect=2)
        self.assertIn("rank-00001.bin", p.stderr)

    # ---- the MPI backend ----------------------------------------------------------------------------------

    def test_mpi_backend_equals_chorus(self):
        if not HAVE_MPI:
            self.skipTest("this build has no MPI (CHORUS_ENABLE_MPI resolved OFF)")
        for z in (0, 3):
            train(["--steps", "4", "--zero", str(z), "--csv", self.path(f"c{z}.csv"), "--save", self.path(f"c{z}")],
                  np=2)
            train(["--steps", "4", "--zero", str(z), "--csv", self.path(f"m{z}.csv"), "--save", self.path(f"m{z}")],
                  np=2, launcher="mpi")
            self.assertSameLosses(self.path(f"c{z}.csv"), self.path(f"m{z}.csv"), rtol=1e-6)
            self.assertLessEqual(diff(self.path(f"c{z}"), self.path(f"m{z}")), 1e-6)

    # ---- tensor and pipeline parallelism (part 2) --------------------------------------------------------

    def against_one_process(self, layout, np, steps=3, micros=4, tol=1e-5, extra=(), launcher="chorus", tag="x"):
        """Trains `layout` and one process on the same global batch; returns nothing, asserts the loss of every
        step, the last step's gradient and the weights agree within tol."""
        one = self.path("one")
        common = ["--layers", "4", "--steps", str(steps), "--grad-accum", str(micros)] + list(extra)
        if not os.path.exists(one):
            train(common + ["--dp", "1", "--dump-grads", self.path("one-g"), "--save", one, "--csv", self.path("one.csv")])
        dp = np
        for flag, value in zip(layout[::2], layout[1::2]):
            if flag in ("--tp", "--pp"):
                dp //= int(value)
        # The same global batch: dp ranks of micros / dp micro-batches each.
        args = [a for a in common if a not in (str(micros),)]
        args = ["--layers", "4", "--steps", str(steps), "--grad-accum", str(micros // dp)] + list(extra) + layout
        train(args + ["--dump-grads", self.path(f"{tag}-g"), "--save", self.path(tag), "--csv",
                      self.path(f"{tag}.csv")], np=np, launcher=launcher)
        self.assertSameLosses(self.path("one.csv"), self.path(f"{tag}.csv"), rtol=tol)
        self.assertLessEqual(diff(self.path("one-g"), self.path(f"{tag}-g")), tol, f"{layout}: gradient")
        self.assertLessEqual(diff(one, self.path(tag)), tol, f"{layout}: weights")

    def test_tp_equals_one_process(self):
        for tp in (2, 4):
            for sp in ([], ["--sequence-parallel"]):
                self.against_one_process(["--tp", str(tp)] + sp, tp, launcher="threads", tag=f"tp{tp}{len(sp)}")

    def test_pp_equals_one_process_for_every_schedule(self):
        for pp in (2, 4):
            for sched in ("gpipe", "1f1b"):
                self.against_one_process(["--pp", str(pp), "--schedule", sched], pp, tag=f"pp{pp}{sched}")
        self.against_one_process(["--pp", "2", "--schedule", "interleaved", "--virtual-stages", "2"], 2, tag="pp2i")
        # GPipe and 1F1B accumulate the micro-batches in the same order: the same bits.
        self.assertEqual(diff(self.path("pp2gpipe"), self.path("pp21f1b")), 0.0)
        self.assertEqual(diff(self.path("pp4gpipe"), self.path("pp41f1b")), 0.0)

    def test_first_step_gradients_match_tensor_by_tensor(self):
        # The whole-vector comparisons above, tensor by tensor: every tensor's gathered gradient of the first step
        # (before Adam has amplified any rounding) within 1e-6 of one process's, for TP (with and without
        # sequence parallelism), PP (every schedule) and 2x2x2.
        common = ["--layers", "4", "--steps", "1"]
        train(common + ["--grad-accum", "4", "--dump-grads", self.path("one")])
        layouts = [(["--tp", "2"], 2, "threads"), (["--tp", "4", "--sequence-parallel"], 4, "threads"),
                   (["--pp", "2", "--schedule", "gpipe"], 2, "chorus"), (["--pp", "4"], 4, "chorus"),
                   (["--pp", "2", "--schedule", "interleaved", "--virtual-stages", "2"], 2, "chorus"),
                   (["--tp", "2", "--pp", "2", "--zero", "1"], 8, "threads")]
        for flags, np, launcher in layouts:
            size = {f: int(flags[flags.index(f) + 1]) if f in flags else 1 for f in ("--tp", "--pp")}
            dp = np // (size["--tp"] * size["--pp"])
            name = "-".join(flags).replace("--", "")
            train(common + ["--grad-accum", str(4 // dp), "--dump-grads", self.path(name)] + flags, np=np,
                  launcher=launcher)
            rel = per_tensor(self.path("one"), self.path(name))
            self.assertTrue(rel, name)
            worst = max(rel, key=rel.get)
            self.assertLessEqual(rel[worst], 1e-6, f"{name}: gradient of {worst}")

    def test_pp4_interleaved_equals_one_process(self):
        train(["--layers", "8", "--steps", "3", "--grad-accum", "4", "--save", self.path("one"), "--csv",
               self.path("one.csv")])
        train(["--layers", "8", "--steps", "3", "--grad-accum", "4", "--pp", "4", "--schedule", "interleaved",
               "--virtual-stages", "2", "--save", self.path("il"), "--csv", self.path("il.csv")], np=4)
        self.assertSameLosses(self.path("one.csv"), self.path("il.csv"), rtol=1e-5)
        self.assertLessEqual(diff(self.path("one"), self.path("il")), 1e-5)

    def test_pipeline_reports_bubble_and_stored_activations(self):
        for sched, peak in (("gpipe", "8"), ("1f1b", "4")):
            out = train(["--layers", "4", "--steps", "2", "--grad-accum", "8", "--pp", "4", "--schedule", sched,
                         "--quiet=false"], np=4, launcher="threads").stdout
            m = re.search(r"bubble ([\d.]+) % measured .* vs ([\d.]+) % = .*peak stored micro-batch activations "
                          r"(\d+) vs (\d+)", out)
            self.assertIsNotNone(m, out)
            self.assertEqual(m.group(2), "27.3")  # (4-1)/(8+4-1)
            self.assertEqual(m.group(3), peak)
            self.assertEqual(m.group(4), peak)

    def test_communication_matches_the_formulas(self):
        # Issue 11 item 5: every rank compares the bytes it passed to each collective of each group with the
        # formula (Megatron's TP and SP volumes, the cross-entropy's reductions, PP's b*s*h per boundary, ZeRO's
        # P per step or per micro-batch), exactly; ZeRO-3's parameter gathers against their upper bound.
        layouts = [["-t", "2", "--zero", z, "--grad-accum", "2"] for z in ("0", "1", "2", "3")] + [
            ["-t", "2", "--zero", "2", "--grad-comm-dtype", "bf16"],
            ["--zero", "3"],
            ["-t", "2", "--tp", "2"],
            ["-t", "4", "--tp", "2", "--pp", "2", "--sequence-parallel", "--grad-accum", "2"],
            ["-t", "2", "--pp", "2", "--schedule", "interleaved", "--virtual-stages", "2", "--grad-accum", "2"],
            ["-t", "8", "--tp", "2", "--pp", "2", "--zero", "1", "--grad-accum", "2"],
        ]
        exe = os.path.join(BIN, "chorus-train")
        for layout in layouts:
            out = run([exe] + TINY + ["--layers", "4", "--steps", "2"] + layout).stdout
            self.assertNotIn("differs from the formula", out, " ".join(layout))
            self.assertIn("communication: every rank's volume per group and collective equals its formula", out,
                          " ".join(layout) + "\n" + out)
            rows = [l for l in out.splitlines() if re.match(r"\s+(data|tensor|pipeline|tied|parameter)", l)]
            self.assertTrue(rows, out)
            for r in rows:
                self.assertNotRegex(r, r"\s-$", f"{' '.join(layout)}: a row without a formula: {r}")

    def test_3d_with_zero1_equals_one_process_and_resumes(self):
        layout = ["--tp", "2", "--pp", "2", "--zero", "1"]
        self.against_one_process(layout, 8, tag="3d")
        # Resume bitwise at the same layout.
        ck = self.path("ck")
        train(["--layers", "4", "--steps", "2", "--grad-accum", "2", "--save", ck] + layout, np=8)
        train(["--layers", "4", "--steps", "3", "--grad-accum", "2", "--resume", ck, "--save", ck, "--csv",
               self.path("res.csv")] + layout, np=8)
        self.assertEqual(diff(self.path("3d"), ck), 0.0)
        self.assertSameLosses(self.path("3d.csv"), self.path("res.csv"), steps=[3])
        # Re-cut: the 2x2x2 checkpoint of step 2 loads into 1x2x2 (4 micro-batches) and 2x1x2.
        for name, other, np in (("1x2x2", ["--tp", "2", "--pp", "2", "--grad-accum", "4"], 4),
                                ("2x1x2", ["--pp", "2", "--grad-accum", "2"], 4)):
            d = self.path(name)
            shutil.copytree(ck, d)
            os.remove(os.path.join(d, "latest"))
            with open(os.path.join(d, "latest"), "w") as f:
                f.write("step-00000002\n")
            shutil.rmtree(os.path.join(d, "step-00000003"))
            train(["--layers", "4", "--steps", "3", "--resume", d, "--save", d, "--csv", self.path(f"{name}.csv")] +
                  other, np=np)
            self.assertSameLosses(self.path("3d.csv"), self.path(f"{name}.csv"), rtol=1e-5, steps=[3])
            self.assertLessEqual(diff(self.path("3d"), d), 1e-5, name)

    def test_bad_layouts_exit_2_before_any_work(self):
        exe = os.path.join(BIN, "chorus-train")
        cases = [
            (["-t", "4", "--dp", "2", "--tp", "3"], "do not divide"),
            (["-t", "4", "--dp", "3", "--tp", "2"], "is not the number of ranks"),
            (["-t", "3", "--tp", "3"], "--heads (4) must divide by --tp (3)"),
            (["-t", "3", "--tp", "3", "--heads", "3", "--d-model", "63"], "the vocabulary (256) must divide by --tp (3)"),
            (["-t", "3", "--pp", "3", "--layers", "4"], "--layers (4) must divide by --pp x --virtual-stages (3)"),
            (["-t", "2", "--pp", "2", "--layers", "6", "--schedule", "interleaved", "--virtual-stages", "2"],
             "--layers (6) must divide by --pp x --virtual-stages (4)"),
            (["-t", "2", "--pp", "2", "--layers", "4", "--schedule", "interleaved", "--virtual-stages", "2",
              "--grad-accum", "3"],
             "multiple of --pp"),
            (["--virtual-stages", "2"], "--virtual-stages above 1 needs --schedule interleaved"),
            (["--sequence-parallel"], "--sequence-parallel needs --tp above 1"),
        ]
        for args, needle in cases:
            p = run([exe] + TINY + ["--steps", "1"] + args, expect=2)
            self.assertIn(needle, p.stderr, " ".join(args))

    # ---- the device path without a GPU (--device emulated) ---------------------------------------------

    def test_emulated_device_equals_host(self):
        # The CUDA path's kernels and GEMM calls, run on the host, against the host layers: one process, bit for
        # bit (without clipping, whose norm the two sum in different orders), and within 1e-6 with it.
        for clip, tol in (("0", 0.0), ("1.0", 1e-6)):
            train(["--steps", "3", "--clip", clip, "--save", self.path(f"h{clip}"), "--csv", self.path(f"h{clip}.csv")])
            train(["--steps", "3", "--clip", clip, "--device", "emulated", "--save", self.path(f"e{clip}"), "--csv",
                   self.path(f"e{clip}.csv")])
            self.assertSameLosses(self.path(f"h{clip}.csv"), self.path(f"e{clip}.csv"), rtol=tol)
            self.assertLessEqual(diff(self.path(f"h{clip}"), self.path(f"e{clip}")), tol)

    def test_emulated_device_layouts_equal_one_process(self):
        # The same parallel code over the device path: DP 2 with ZeRO-3, TP 2 with sequence parallelism and PP 2
        # (1F1B), each against one process on the same device.
        dev = ["--device", "emulated"]
        self.against_one_process(["--zero", "3"], 2, extra=dev, tag="dp2z3")
        self.against_one_process(["--tp", "2", "--sequence-parallel"], 2, extra=dev, launcher="threads", tag="tp2sp")
        self.against_one_process(["--pp", "2"], 2, extra=dev, tag="pp2")

    # ---- bad input ----------------------------------------------------------------------------------------

    def test_bad_input_exits_2_before_any_work(self):
        exe = os.path.join(BIN, "chorus-train")
        keep = self.path("keep.csv")
        with open(keep, "w") as f:
            f.write("precious\n")
        cases = [
            ([exe, "--bogus-flag"], "bogus-flag"),
            ([exe, "--corpus", "/no/such/corpus.txt", "--csv", keep], "/no/such/corpus.txt"),
            ([exe, "--d-model", "30", "--heads", "4", "--csv", keep], "--d-model"),
            ([exe, "--zero", "5"], "--zero"),
            ([exe, "-t", "2", "--global-batch", "6", "--batch", "4", "--csv", keep], "--global-batch"),
            ([os.path.join(BIN, "chorusrun"), "-np", "3", exe, "--dp", "2", "--csv", keep], "is not the number of ranks"),
            ([exe, "-t", "2", "--backend", "mpi"], "--backend mpi"),
            ([exe, "--save-every", "2"], "--save-every needs --save"),
        ]
        for cmd, needle in cases:
            p = run(cmd + ["--steps", "1", "--peak-ms", "20"] if "chorusrun" not in cmd[0] else cmd, expect=2)
            self.assertIn(needle, p.stderr + p.stdout, " ".join(cmd))
            self.assertEqual(open(keep).read(), "precious\n", " ".join(cmd))
        # A save directory of another model is left alone.
        train(["--steps", "1", "--save", self.path("other")])
        before = sorted(os.listdir(os.path.join(self.path("other"), "step-00000001")))
        p = train(["--steps", "1", "--layers", "3", "--save", self.path("other")], expect=2)
        self.assertIn("another model", p.stderr)
        self.assertEqual(sorted(os.listdir(os.path.join(self.path("other"), "step-00000001"))), before)


def os_sees_gpu():
    try:
        if os.listdir("/proc/driver/nvidia/gpus"):
            return True
    except OSError:
        pass
    return os.path.exists("/dev/nvidia0")


class GpuProofs(Proofs):
    """The DP, TP and PP proofs on a GPU (--device cuda), several ranks sharing one GPU as threads of one process
    (-t): each layout against one process on the GPU. Skipped, saying why, where the trainer cannot use a GPU;
    failed when the operating system shows one (or CHORUS_REQUIRE_GPU=1) that it cannot use. On an H200
    (2026-11-27) the TP, PP and GPU-equals-host proofs passed with the host proofs' tolerances; the DP proof
    passed ZeRO-0 and 1 and stopped at ZeRO-3, the 3-D proof hung (ranks as threads: docs/training.md)."""

    def setUp(self):
        # Before the temporary directory is made: a skip raised here skips tearDown too.
        p = run([os.path.join(BIN, "chorus-train"), "--device", "cuda", "--steps", "1", "-q", "--corpus", "synthetic",
                 "--layers", "1", "--d-model", "16", "--heads", "2", "--seq-len", "8", "--batch", "1",
                 "--eval-every", "0", "--peak-ms", "1"], expect=None)
        if p.returncode == 2 and "--device cuda" in p.stderr:
            why = p.stderr.strip().splitlines()[-1]
            if os_sees_gpu() or os.environ.get("CHORUS_REQUIRE_GPU") == "1":
                self.fail(f"a GPU is present (or CHORUS_REQUIRE_GPU=1) but the trainer cannot use it: {why}")
            self.skipTest(why)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        super().setUp()

    def gpu(self, layout, np, tag):
        self.against_one_process(layout, np, extra=["--device", "cuda"], launcher="threads", tag=tag)

    def test_gpu_dp_equals_one_process(self):
        for z in ("0", "1", "3"):
            self.gpu(["--zero", z], 2, f"dp2z{z}")
        self.gpu(["--zero", "2"], 4, "dp4z2")

    def test_gpu_tp_equals_one_process(self):
        for tp in (2, 4):
            for sp in ([], ["--sequence-parallel"]):
                self.gpu(["--tp", str(tp)] + sp, tp, f"tp{tp}{len(sp)}")

    def test_gpu_pp_equals_one_process(self):
        for sched in ("gpipe", "1f1b"):
            self.gpu(["--pp", "2", "--schedule", sched], 2, f"pp2{sched}")
        self.gpu(["--pp", "2", "--schedule", "interleaved", "--virtual-stages", "2"], 2, "pp2i")

    def test_gpu_3d_with_zero1_equals_one_process(self):
        self.gpu(["--tp", "2", "--pp", "2", "--zero", "1"], 8, "3d")

    def test_gpu_equals_host_within_rounding(self):
        # cuBLAS sums in another order than OpenBLAS: three steps of one process within 1e-4.
        train(["--steps", "3", "--save", self.path("host"), "--csv", self.path("host.csv")])
        train(["--steps", "3", "--device", "cuda", "--save", self.path("gpu"), "--csv", self.path("gpu.csv")])
        self.assertSameLosses(self.path("host.csv"), self.path("gpu.csv"), rtol=1e-4)
        self.assertLessEqual(diff(self.path("host"), self.path("gpu")), 1e-4)


def test_names(cls):
    own = [n for n in cls.__dict__ if n.startswith("test_")]
    return sorted(own)


def main():
    global BIN, HAVE_MPI
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=BIN)
    ap.add_argument("--mpi", default="ON")
    ap.add_argument("--list", action="store_true", help="print the test names, one per line")
    ap.add_argument("--kind", choices=("cpu", "gpu"), default="cpu", help="with --list: the host or the GPU proofs")
    ap.add_argument("tests", nargs="*")
    a = ap.parse_args()
    if a.list:
        print("\n".join(test_names(Proofs if a.kind == "cpu" else GpuProofs)))
        return 0
    BIN, HAVE_MPI = a.bin, a.mpi.upper() in ("ON", "1", "TRUE", "YES")
    names = a.tests or test_names(Proofs)
    suite = unittest.TestSuite((GpuProofs if n in GpuProofs.__dict__ else Proofs)(n) for n in names)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    if not result.wasSuccessful():
        return 1
    return SKIPPED if result.skipped and len(result.skipped) == result.testsRun else 0


if __name__ == "__main__":
    sys.exit(main())
