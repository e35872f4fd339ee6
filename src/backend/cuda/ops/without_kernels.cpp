// The ops the CUDA backend has no kernel for yet (ConvTranspose2d, LayerNorm, and the
// data-movement ops, attention's MatMul and segmentation's Resize of ONNX import): a model using
// them is refused when its plan is built, naming the node.
#include "backend/cuda/ops/op_kernels.hpp"

namespace telar::backend::cuda {

const OpKernels op_kernel_defs::kConvTranspose2d{no_kernel};
const OpKernels op_kernel_defs::kTranspose{no_kernel};
const OpKernels op_kernel_defs::kSlice{no_kernel};
const OpKernels op_kernel_defs::kPad{no_kernel};
const OpKernels op_kernel_defs::kResize{no_kernel};
const OpKernels op_kernel_defs::kReduceMean{no_kernel};
const OpKernels op_kernel_defs::kLayerNorm{no_kernel};
const OpKernels op_kernel_defs::kMatMul{no_kernel};
const OpKernels op_kernel_defs::kExpand{no_kernel};

}  // namespace telar::backend::cuda
