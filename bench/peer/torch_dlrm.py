"""PyTorch peer for `telar dlrm --benchmark`: DLRM as facebookresearch/dlrm's dlrm_s_pytorch.py
builds it (nn.EmbeddingBag(mode="sum", sparse=True), Linear+ReLU MLPs, dot interaction over the
strictly lower triangle, sigmoid), timed in eval mode under torch.no_grad().

  --benchmark inference       whole-model forward, samples/s
  --benchmark embedding-bag   the first table's EmbeddingBag alone, effective GB/s
                              (rows read: indices x dim x 4 bytes, per second)

Inputs follow the reference random generator (dlrm_data_pytorch.generate_uniform_input_batch):
L lookups per bag (--num-indices-per-lookup-fixed) or round(max(1, r*min(n, L))), indices
unique(round(U[0,1)^L * (n-1))). A few batches are generated before timing and cycled.
"""
import argparse, json, os, sys, time

import numpy as np
import torch
from torch import nn


def mlp(widths, sigmoid_last):
    layers = []
    for i in range(len(widths) - 1):
        n, m = widths[i], widths[i + 1]
        lin = nn.Linear(n, m, bias=True)
        with torch.no_grad():  # DLRM's initialisation
            lin.weight.copy_(torch.from_numpy(
                np.random.normal(0.0, np.sqrt(2 / (m + n)), size=(m, n)).astype(np.float32)))
            lin.bias.copy_(torch.from_numpy(
                np.random.normal(0.0, np.sqrt(1 / m), size=m).astype(np.float32)))
        layers.append(lin)
        layers.append(nn.Sigmoid() if sigmoid_last and i == len(widths) - 2 else nn.ReLU())
    return nn.Sequential(*layers)


class Dlrm(nn.Module):
    def __init__(self, dim, rows, bot, top_user, itself=False):
        super().__init__()
        self.emb = nn.ModuleList()
        for n in rows:
            e = nn.EmbeddingBag(n, dim, mode="sum", sparse=True)
            with torch.no_grad():
                e.weight.uniform_(-np.sqrt(1 / n), np.sqrt(1 / n))
            self.emb.append(e)
        self.bot = mlp(bot, False)
        fea = len(rows) + 1
        pairs = fea * (fea + 1) // 2 if itself else fea * (fea - 1) // 2
        self.top = mlp([pairs + bot[-1]] + top_user, True)
        off = 1 if itself else 0
        self.li = torch.tensor([i for i in range(fea) for j in range(i + off)])
        self.lj = torch.tensor([j for i in range(fea) for j in range(i + off)])

    def forward(self, x, offsets, indices):
        x = self.bot(x)
        ly = [e(indices[k], offsets[k]) for k, e in enumerate(self.emb)]
        b, d = x.shape
        t = torch.cat([x] + ly, dim=1).view((b, -1, d))
        z = torch.bmm(t, torch.transpose(t, 1, 2))
        r = torch.cat([x, z[:, self.li, self.lj]], dim=1)
        return self.top(r)


def random_batch(rng, m_den, rows, n, lookups, fixed):
    x = torch.from_numpy(rng.random((n, m_den)).astype(np.float32))
    offsets, indices = [], []
    for size in rows:
        offs, idx, at = [], [], 0
        for _ in range(n):
            if fixed:
                g = lookups
            else:
                g = int(np.round(max(1.0, rng.random() * min(size, lookups))))
            group = np.unique(np.round(rng.random(g) * (size - 1)).astype(np.int64))
            offs.append(at)
            idx.append(group)
            at += group.size
        offsets.append(torch.tensor(offs, dtype=torch.int64))
        indices.append(torch.from_numpy(np.concatenate(idx)))
    return x, offsets, indices


def ints(text):
    return [int(v) for v in text.split("-")]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--benchmark", choices=["inference", "embedding-bag"], default="inference")
    p.add_argument("--arch-sparse-feature-size", type=int, default=32)
    p.add_argument("--arch-embedding-size", default="1000000-1000000-1000000-1000000-1000000")
    p.add_argument("--arch-mlp-bot", default="128-64-64-32")
    p.add_argument("--arch-mlp-top", default="128-64-1")
    p.add_argument("--arch-interaction-itself", action="store_true")
    p.add_argument("--mini-batch-size", type=int, default=2048)
    p.add_argument("--num-indices-per-lookup", type=int, default=50)
    p.add_argument("--num-indices-per-lookup-fixed", action="store_true")
    p.add_argument("--numpy-rand-seed", type=int, default=123)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--distinct-batches", type=int, default=4)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    np.random.seed(a.numpy_rand_seed)
    torch.manual_seed(a.numpy_rand_seed)
    rng = np.random.default_rng(a.numpy_rand_seed)
    rows = ints(a.arch_embedding_size)
    bot = ints(a.arch_mlp_bot)
    if a.benchmark == "embedding-bag":
        rows = rows[:1]
    batches = [random_batch(rng, bot[0], rows, a.mini_batch_size, a.num_indices_per_lookup,
                            a.num_indices_per_lookup_fixed) for _ in range(a.distinct_batches)]
    if a.benchmark == "inference":
        model = Dlrm(a.arch_sparse_feature_size, rows, bot, ints(a.arch_mlp_top),
                     a.arch_interaction_itself).eval()
        run = lambda b: model(b[0], b[1], b[2])
    else:
        table = nn.EmbeddingBag(rows[0], a.arch_sparse_feature_size, mode="sum", sparse=True)
        with torch.no_grad():
            table.weight.uniform_(-np.sqrt(1 / rows[0]), np.sqrt(1 / rows[0]))
        run = lambda b: table(b[2][0], b[1][0])
    times = []
    with torch.no_grad():
        for i in range(a.warmup + a.repeats):
            b = batches[i % len(batches)]
            t = time.perf_counter()
            run(b)
            if i >= a.warmup:
                times.append(time.perf_counter() - t)
    times.sort()
    median = times[len(times) // 2]
    nnz = sum(int(b[2][0].numel()) for b in batches) / len(batches)  # table 0
    lookups = sum(int(i.numel()) for b in batches for i in b[2]) / len(batches)
    best = times[0]
    result = {"benchmark": a.benchmark, "seconds_median": median, "seconds_min": best,
              "samples_per_s": a.mini_batch_size / median,
              "samples_per_s_best": a.mini_batch_size / best, "threads": a.threads,
              "torch": torch.__version__, "lookups_per_call": lookups}
    if a.benchmark == "embedding-bag":
        result["effective_gb_per_s"] = nnz * a.arch_sparse_feature_size * 4 / median / 1e9
        result["effective_gb_per_s_best"] = nnz * a.arch_sparse_feature_size * 4 / best / 1e9
    print(json.dumps(result))


if __name__ == "__main__":
    main()
