#!/usr/bin/python3
"""Exports a small network of PyTorch's F.interpolate in each way telar imports (bilinear with
and without aligned corners, up and down by whole and fractional factors, to one row; nearest by
a scale factor of 2 and to a fractional size) between convolutions, with PyTorch's ONNX exporter,
with a random input and PyTorch's output for it, for telar's ONNX import tests.

    export_resize.py OUT_DIR OPSET

writes OUT_DIR/resize-opsetOPSET.onnx, .x.npy (input, batch 3) and .y.npy.
"""
import sys

import torch
from torch import nn
from torch.nn import functional as F

import pytorch_fixture  # tests/onnx, this script's folder


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.mix = nn.Conv2d(16 * 6, 8, 1)

    def forward(self, x):  # x: [B, 3, 10, 12]
        h = torch.relu(self.stem(x))
        size = h.shape[-2:]
        branches = [
            F.interpolate(h, size=(23, 17), mode="bilinear", align_corners=False),
            F.interpolate(h, size=(7, 5), mode="bilinear", align_corners=True),
            F.interpolate(h, scale_factor=2, mode="nearest"),
            F.interpolate(h, size=(13, 29), mode="nearest"),
            F.interpolate(F.adaptive_avg_pool2d(h, 1), size=(23, 17), mode="bilinear",
                          align_corners=False),
            F.interpolate(h, size=(1, 9), mode="bilinear", align_corners=True),
        ]
        back = [F.interpolate(b, size=size, mode="bilinear", align_corners=False) for b in branches]
        return self.mix(torch.cat(back, 1))


def main():
    out_dir, opset = sys.argv[1], int(sys.argv[2])
    torch.manual_seed(0)
    model = Model().eval()
    pytorch_fixture.export(model, torch.randn(3, 3, 10, 12), out_dir, "resize", opset)


if __name__ == "__main__":
    main()
