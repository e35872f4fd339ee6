"""The telar zoo models written in PyTorch 1.13, layer for layer, for side-by-side benchmarks."""
import torch
from torch import nn


def mlp(widths):
    layers = [nn.Flatten()]
    for i in range(1, len(widths)):
        layers.append(nn.Linear(widths[i - 1], widths[i]))
        if i + 1 < len(widths):
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def mnist_cnn(classes=10):
    return nn.Sequential(
        nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(1568, 1024), nn.ReLU(), nn.Dropout(0.4), nn.Linear(1024, classes))


def mobilenet_v1(classes=10, width=1.0):
    def ch(c):
        return max(8, int(round(c * width)))

    def conv_bn(i, o, s):
        return [nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]

    def conv_dw(i, o, s):
        return [nn.Conv2d(i, i, 3, s, 1, groups=i, bias=False), nn.BatchNorm2d(i), nn.ReLU(inplace=True),
                nn.Conv2d(i, o, 1, 1, 0, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]

    cfg = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1), (512, 1),
           (512, 1), (512, 1), (1024, 2), (1024, 1)]
    layers = conv_bn(3, ch(32), 2)
    c = ch(32)
    for o, s in cfg:
        layers += conv_dw(c, ch(o), s)
        c = ch(o)
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, classes)]
    return nn.Sequential(*layers)


class SegmentationOutput(nn.Module):
    """A torchvision segmentation model's per-pixel scores: the "out" of the dict it returns."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def build(spec, classes=10):
    name, _, args = spec.partition(":")
    if name == "mlp":
        return mlp([int(w) for w in args.split("-")])
    if name == "mnist_cnn":
        return mnist_cnn(classes)
    if name == "mobilenet_v1":
        return mobilenet_v1(classes, float(args) if args else 1.0)
    if name == "resnet18":  # telar's zoo resnet18 is torchvision's
        import torchvision
        return torchvision.models.resnet18(num_classes=classes)
    if name == "vit":  # vit:DIM-HEADS-DEPTH-PATCH at 224x224, written batch-first
        from vit_batch_first import VisionTransformer
        dim, heads, depth, patch = (int(v) for v in (args or "768-12-12-16").split("-"))
        return VisionTransformer(dim, heads, depth, patch, 224, classes)
    if name == "torchvision":  # any torchvision classifier, e.g. torchvision:efficientnet_b0,
        import torchvision     # or segmentation model, e.g. torchvision:fcn_resnet50
        if hasattr(torchvision.models, args):
            return getattr(torchvision.models, args)()
        if hasattr(torchvision.models.segmentation, args):
            model = getattr(torchvision.models.segmentation, args)(weights_backbone=None)  # no download
            return SegmentationOutput(model)
        raise SystemExit(f"torch peer: torchvision has no model '{args}'")
    raise SystemExit(f"torch peer: no PyTorch version of model '{spec}'")
