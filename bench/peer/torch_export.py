"""Exports a peer model (torch_models.py, eval mode, random weights) to ONNX with a dynamic
batch, as a user deploying it would: the file ONNX Runtime and telar both run.

    torch_export.py --model mobilenet_v1 --input 3x224x224 --out mobilenet_v1.onnx
"""
import argparse, os, sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
import torch_models  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--input", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--opset", type=int, default=13)
    a = p.parse_args()
    torch.manual_seed(0)
    model = torch_models.build(a.model).eval()
    x = torch.rand([1] + [int(d) for d in a.input.split("x")])
    torch.onnx.export(model, x, a.out, opset_version=a.opset, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})


if __name__ == "__main__":
    main()
