#!/usr/bin/python3
"""Exports a small decoder of transposed convolutions (nn.ConvTranspose2d: stride, padding,
output padding, groups, dilation, with and without bias) with PyTorch's ONNX exporter, with a
random input and PyTorch's output for it, for telar's ONNX import tests.

    export_conv_transpose.py OUT_DIR OPSET

writes OUT_DIR/conv_transpose-opsetOPSET.onnx, .x.npy (input, batch 2) and .y.npy.
"""
import sys

import torch

import pytorch_fixture  # tests/onnx, this script's folder


def main():
    out_dir, opset = sys.argv[1], int(sys.argv[2])
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
        torch.nn.ReLU(),
        torch.nn.ConvTranspose2d(6, 3, 2, stride=1, dilation=2, bias=False),
    ).eval()
    pytorch_fixture.export(model, torch.randn(2, 4, 5, 6), out_dir, "conv_transpose", opset)


if __name__ == "__main__":
    main()
