#!/usr/bin/python3
"""Exports a torchvision 0.14 classifier or segmentation model (random weights; a segmentation
model's "out" scores) with PyTorch's ONNX exporter, with a random input and PyTorch's output
for it, for telar's ONNX import tests.

    export_torchvision.py OUT_DIR MODEL OPSET SIZE [CLASSES MODE]

writes OUT_DIR/MODEL-opsetOPSET.onnx, .x.npy (input, batch 2) and .y.npy (PyTorch's output).
With CLASSES and MODE (eval or train) it writes OUT_DIR/MODEL-CLASSES-MODE.onnx instead: a
model of CLASSES outputs exported for training (MODE train: PyTorch's training mode, BatchNorm
and Dropout as in training), without the input and output files.
"""
import os
import sys

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench", "peer"))
from torch_models import SegmentationOutput  # noqa: E402


def main():
    out_dir, name, opset, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    torch.manual_seed(0)
    kwargs = {"aux_logits": False, "init_weights": True} if name in ("googlenet", "inception_v3") else {}
    if len(sys.argv) > 6:
        classes, mode = int(sys.argv[5]), sys.argv[6]
        model = getattr(torchvision.models, name)(num_classes=classes, **kwargs)
        model.train(mode == "train")
        training = torch.onnx.TrainingMode.TRAINING if mode == "train" else torch.onnx.TrainingMode.EVAL
        torch.onnx.export(model, torch.randn(2, 3, size, size), f"{out_dir}/{name}-{classes}-{mode}.onnx",
                          opset_version=opset, training=training, do_constant_folding=mode != "train")
        return
    if hasattr(torchvision.models.segmentation, name):  # its per-pixel scores, "out"
        model = SegmentationOutput(getattr(torchvision.models.segmentation, name)(
            weights_backbone=None)).eval()
    else:
        model = getattr(torchvision.models, name)(**kwargs).eval()
    # Give BatchNorm layers running statistics other than 0/1, so that folding them is tested.
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    x = torch.randn(2, 3, size, size)
    with torch.no_grad():
        y = model(x)
    stem = f"{out_dir}/{name}-opset{opset}"
    # Swin and MaxViT merge the batch with their windows ([B*windows, 49, C]), which telar
    # follows where the file reads the batch from the input, as a deployed model does (a dynamic
    # batch).
    windowed = name.startswith(("swin", "maxvit"))
    dynamic = {"input_names": ["x"], "output_names": ["y"],
               "dynamic_axes": {"x": {0: "batch"}, "y": {0: "batch"}}} if windowed else {}
    torch.onnx.export(model, x, stem + ".onnx", opset_version=opset, **dynamic)
    np.save(stem + ".x.npy", x.numpy())
    np.save(stem + ".y.npy", y.numpy())


if __name__ == "__main__":
    main()
