"""What each tests/onnx/export_NAME.py writes: its model (in eval mode) exported by PyTorch's
ONNX exporter with a dynamic batch, the input and PyTorch's output for it, as
OUT_DIR/NAME-opsetOPSET.onnx, .x.npy and .y.npy."""
import numpy as np
import torch


def export(model, x, out_dir, name, opset):
    with torch.no_grad():
        y = model(x)
    stem = f"{out_dir}/{name}-opset{opset}"
    torch.onnx.export(model, x, stem + ".onnx", opset_version=opset, input_names=["x"],
                      output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    np.save(stem + ".x.npy", x.numpy())
    np.save(stem + ".y.npy", y.numpy())
