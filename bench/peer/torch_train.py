"""PyTorch peer for `telar train`: a standard training loop (DataLoader over the Fashion-MNIST
tensors, shuffled, SGD with momentum), timed over the training phase, printed as JSON.
--device cuda: the model and each batch on the GPU (the batch copied from host memory each step,
as a DataLoader loop does); the clock is read after a synchronize, so it counts the GPU's work.
Each epoch's own throughput is printed too (the first includes cuDNN's algorithm choice)."""
import argparse, gzip, json, os, sys, time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
import torch_models  # noqa: E402

DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"


def idx(path, offset):
    with gzip.open(path) as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="mlp:784-256-128-10")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--limit-batches", type=int, default=0)
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    p.add_argument("--data", default=DEFAULT_DATA, help="folder of the Fashion-MNIST .gz files")
    a = p.parse_args()
    DATA = a.data
    dev = torch.device(a.device)
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    x = torch.from_numpy(idx(f"{DATA}/train-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)
                         .astype(np.float32) / 255.0)
    y = torch.from_numpy(idx(f"{DATA}/train-labels-idx1-ubyte.gz", 8).astype(np.int64))
    tx = torch.from_numpy(idx(f"{DATA}/t10k-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)
                          .astype(np.float32) / 255.0)
    ty = torch.from_numpy(idx(f"{DATA}/t10k-labels-idx1-ubyte.gz", 8).astype(np.int64))
    model = torch_models.build(a.model).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum)
    loss_fn = torch.nn.CrossEntropyLoss()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y),
                                         batch_size=a.batch_size, shuffle=True)
    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    samples, seconds, per_epoch = 0, 0.0, []
    for _ in range(a.epochs):
        model.train()
        sync()
        start, n = time.perf_counter(), 0
        for i, (bx, by) in enumerate(loader):
            if a.limit_batches and i >= a.limit_batches:
                break
            bx, by = bx.to(dev), by.to(dev)
            opt.zero_grad()
            loss = loss_fn(model(bx), by)
            loss.backward()
            opt.step()
            n += bx.shape[0]
        sync()
        took = time.perf_counter() - start
        samples, seconds = samples + n, seconds + took
        per_epoch.append(n / took)
    model.eval()
    with torch.no_grad():
        acc = (model(tx.to(dev)).argmax(1) == ty.to(dev)).float().mean().item()
    print(json.dumps({"samples_per_s": samples / seconds, "epoch_samples_per_s": per_epoch,
                      "test_accuracy": acc, "threads": a.threads, "device": a.device,
                      "torch": torch.__version__}))


if __name__ == "__main__":
    main()
