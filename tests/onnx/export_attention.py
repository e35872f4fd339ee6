#!/usr/bin/python3
"""Exports a small vision transformer written batch-first (bench/peer/vit_batch_first.py: as
Hugging Face's ViT and BERT write their self-attention, heads split by a reshape and a permute,
scores by a matmul of queries and transposed keys, softmax over the last axis; two blocks of 4
heads over 32 features, patches of 4 on 16x16 images), with PyTorch's ONNX exporter, with a random input
and PyTorch's output for it, for telar's ONNX import tests.

    export_attention.py OUT_DIR OPSET

writes OUT_DIR/attention-opsetOPSET.onnx, .x.npy (input, batch 2) and .y.npy.
"""
import os
import sys

import torch
from torch import nn

import pytorch_fixture  # tests/onnx, this script's folder

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench", "peer"))
from vit_batch_first import VisionTransformer  # noqa: E402


def main():
    out_dir, opset = sys.argv[1], int(sys.argv[2])
    torch.manual_seed(0)
    model = VisionTransformer(dim=32, heads=4, depth=2, patch=4, size=16, classes=10).eval()
    with torch.no_grad():  # LayerNorm's affine parameters away from 1 and 0
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
    pytorch_fixture.export(model, torch.randn(2, 3, 16, 16), out_dir, "attention", opset)


if __name__ == "__main__":
    main()
