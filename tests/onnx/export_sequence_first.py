#!/usr/bin/python3
"""Exports a small torchvision vision transformer (torchvision.models.VisionTransformer: its
encoder's nn.MultiheadAttention lays the tokens out sequence-first, [L, B, E], and merges the
batch with the heads, [L, B*H, d]; two layers of 4 heads over 32 features, patches of 8 on 32x32
images) followed by a sequence-first nn.TransformerEncoderLayer (norm_first: its layer norms and
feed-forward work on [L, B, E]) before the head, with PyTorch's ONNX exporter, with a random
input and PyTorch's output for it, for telar's ONNX import tests.

    export_sequence_first.py OUT_DIR OPSET

writes OUT_DIR/sequence_first-opsetOPSET.onnx, .x.npy (input, batch 3) and .y.npy.
"""
import sys

import torch
from torch import nn
from torchvision.models.vision_transformer import VisionTransformer

import pytorch_fixture  # tests/onnx, this script's folder


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.vit = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4,
                                     hidden_dim=32, mlp_dim=64, num_classes=10)
        self.extra = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                                norm_first=True)

    def forward(self, x):
        v = self.vit
        tokens = v._process_input(x)
        tokens = torch.cat([v.class_token.expand(x.shape[0], -1, -1), tokens], dim=1)
        tokens = v.encoder(tokens)  # [B, L, E]
        tokens = self.extra(tokens.transpose(0, 1)).transpose(0, 1)
        return v.heads(tokens[:, 0])


def main():
    out_dir, opset = sys.argv[1], int(sys.argv[2])
    torch.manual_seed(0)
    model = Model().eval()
    with torch.no_grad():  # away from the initial zeros and ones
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
            if isinstance(m, nn.MultiheadAttention):
                m.in_proj_bias.uniform_(-0.5, 0.5)
                m.out_proj.bias.uniform_(-0.5, 0.5)
        model.vit.heads.head.weight.normal_(0, 0.2)
        model.vit.encoder.pos_embedding.normal_(0, 0.5)
        model.vit.class_token.normal_(0, 0.5)
    pytorch_fixture.export(model, torch.randn(3, 3, 32, 32), out_dir, "sequence_first", opset)


if __name__ == "__main__":
    main()
