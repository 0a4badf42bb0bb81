#!/usr/bin/python3
"""The same GPT as chorus-train, trained with Debian's PyTorch on one process: the baseline a user would pick.

The model matches src/train (token + position embedding, pre-LN blocks, causal multi-head attention, tanh-GELU
MLP, final LN, head tied to the embedding, byte vocabulary), as do the data (bytes of the Jargon File, the
same train/validation split), the sampler's idea (random windows) and AdamW's settings. Prints one line per
step and tokens/s, and can write a CSV (step,loss,...) that perf/train/plot_loss.sh draws beside chorus-train's.
"""
import argparse
import gzip
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, c, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(c)
        self.qkv = nn.Linear(c, 3 * c)
        self.proj = nn.Linear(c, c)
        self.ln2 = nn.LayerNorm(c)
        self.fc = nn.Linear(c, 4 * c)
        self.fc_proj = nn.Linear(4 * c, c)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.proj(y)
        return x + self.fc_proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, layers, heads, c, seq_len, vocab=256):
        super().__init__()
        self.wte = nn.Embedding(vocab, c)
        self.wpe = nn.Embedding(seq_len, c)
        self.blocks = nn.ModuleList(Block(c, heads) for _ in range(layers))
        self.lnf = nn.LayerNorm(c)
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif p.dim() == 2:
                std = 0.02 / math.sqrt(2 * layers) if name.endswith("proj.weight") else 0.02
                nn.init.normal_(p, std=std)

    def forward(self, idx, targets):
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(t))
        for blk in self.blocks:
            x = blk(x)
        logits = self.lnf(x) @ self.wte.weight.t()
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def load_corpus(path):
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
        data = torch.frombuffer(bytearray(f.read()), dtype=torch.uint8).long()
    split = len(data) * 9 // 10
    return data[:split], data[split:]


def batch(data, b, t, gen):
    ix = torch.randint(len(data) - t - 1, (b,), generator=gen)
    x = torch.stack([data[i : i + t] for i in ix])
    y = torch.stack([data[i + 1 : i + t + 1] for i in ix])
    return x, y


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--clip", type=float, default=1.0, help="global gradient-norm clipping (0: off)")
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--eval-batches", type=int, default=8)
    ap.add_argument("--corpus", default="/usr/share/doc/jargon-text/jargon.txt.gz")
    ap.add_argument("--csv", default="")
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    train, val = load_corpus(a.corpus)
    model = GPT(a.layers, a.heads, a.d_model, a.seq_len)
    decay = [p for n, p in model.named_parameters() if p.dim() == 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), eps=1e-8)
    gen = torch.Generator().manual_seed(a.seed)
    vgen = torch.Generator().manual_seed(a.seed + 1)
    vbatches = [batch(val, a.batch, a.seq_len, vgen) for _ in range(a.eval_batches)]
    csv = open(a.csv, "w") if a.csv else None
    if csv:
        csv.write("step,loss,val_loss,tokens_per_s,step_ms\n")
    tokens = a.batch * a.seq_len
    total_t = 0.0
    for step in range(1, a.steps + 1):
        x, y = batch(train, a.batch, a.seq_len, gen)
        t0 = time.perf_counter()
        loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if a.clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip)
        opt.step()
        dt = time.perf_counter() - t0
        total_t += dt
        vloss = ""
        if step % a.eval_every == 0 or step == a.steps:
            with torch.no_grad():
                vloss = sum(model(vx, vy).item() for vx, vy in vbatches) / len(vbatches)
        print(f"step {step:5d} loss {loss.item():.4f} {tokens / dt:8.0f} tok/s {dt * 1e3:7.1f} ms"
              + (f" val {vloss:.4f}" if vloss != "" else ""), flush=True)
        if csv:
            csv.write(f"{step},{loss.item():.6f},{vloss if vloss == '' else f'{vloss:.6f}'},{tokens / dt:.0f},"
                      f"{dt * 1e3:.3f}\n")
    print(f"mean {a.steps * tokens / total_t:.0f} tokens/s over {a.steps} steps")


if __name__ == "__main__":
    sys.exit(main())
