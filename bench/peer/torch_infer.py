"""PyTorch peer for `telar infer`: median eval-mode latency of a model at a batch size."""
import argparse, json, os, sys, time

import torch

sys.path.insert(0, os.path.dirname(__file__))
import torch_models  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="mobilenet_v1")
    p.add_argument("--input", default="3x224x224")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--repeats", type=int, default=30)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    model = torch_models.build(a.model).eval()
    x = torch.rand([a.batch] + [int(d) for d in a.input.split("x")])
    times = []
    with torch.no_grad():
        for i in range(a.warmup + a.repeats):
            t = time.perf_counter()
            model(x)
            if i >= a.warmup:
                times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    median = times[len(times) // 2]
    print(json.dumps({"latency_ms_median": median, "samples_per_s": a.batch / median * 1e3,
                      "threads": a.threads, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
