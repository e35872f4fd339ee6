"""A vision transformer written batch-first, as Hugging Face's ViT and BERT write their
self-attention: heads split by a view and a permute, scores by a matmul of the queries and the
transposed keys, softmax over the last axis; a class token expanded over the batch, position
embeddings, pre-norm encoder blocks with GELU, the class token's features to the head.
(torchvision's vit_b_16 uses nn.MultiheadAttention, whose export is sequence-first.)

    VisionTransformer(dim=768, heads=12, depth=12, patch=16, size=224)  # ViT-B/16's shapes
"""
import math

import torch
from torch import nn


class SelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.query, self.key, self.value = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def split(self, x):  # [B, L, dim] -> [B, heads, L, head_dim]
        b, l, _ = x.shape
        return x.view(b, l, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        context = torch.matmul(scores.softmax(dim=-1), v).permute(0, 2, 1, 3).contiguous()
        return self.out(context.view(x.shape[0], x.shape[1], -1))


class Block(nn.Module):
    def __init__(self, dim, heads, mlp_ratio):
        super().__init__()
        self.norm1, self.attention = nn.LayerNorm(dim), SelfAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp_ratio * dim), nn.GELU(),
                                 nn.Linear(mlp_ratio * dim, dim))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class VisionTransformer(nn.Module):
    def __init__(self, dim=768, heads=12, depth=12, patch=16, size=224, classes=1000, mlp_ratio=4):
        super().__init__()
        self.patches = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.position = nn.Parameter(torch.randn(1, (size // patch) ** 2 + 1, dim))
        self.blocks = nn.Sequential(*[Block(dim, heads, mlp_ratio) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patches(x).flatten(2).transpose(1, 2)  # [B, patches, dim]
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.position
        return self.head(self.norm(self.blocks(x))[:, 0])
