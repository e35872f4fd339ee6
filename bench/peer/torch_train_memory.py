"""PyTorch peer of bench/train_memory.sh: trains a zoo model (torch_models.py) for one epoch over
N random images of a shape, as `telar train --data synthetic:N:SHAPE:10` does (SGD, no momentum,
cross-entropy), then classifies 25 more; prints the throughput of the training phase and the
process's peak resident memory (the data set included) as JSON."""
import argparse, json, os, resource, sys, time

import torch

sys.path.insert(0, os.path.dirname(__file__))
import torch_models  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--input", required=True, help="CxHxW")
    p.add_argument("--samples", type=int, default=512)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--lr", type=float, default=0.05)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    shape = tuple(int(d) for d in a.input.split("x"))
    x = torch.randn(a.samples, *shape)
    y = torch.randint(0, 10, (a.samples,))
    model = torch_models.build(a.model)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr)
    loss_fn = torch.nn.CrossEntropyLoss()
    model.train()
    start = time.perf_counter()
    for i in range(0, a.samples, a.batch_size):
        opt.zero_grad()
        loss_fn(model(x[i:i + a.batch_size]), y[i:i + a.batch_size]).backward()
        opt.step()
    seconds = time.perf_counter() - start
    model.eval()
    with torch.no_grad():
        model(torch.randn(25, *shape))
    print(json.dumps({"samples_per_s": a.samples / seconds,
                      "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "threads": a.threads, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
