// Reference kernels (ops/) wrapped as plan kernels: the whole op set, plain layouts.
#include <vector>

#include "backend/cpu/kernel.hpp"
#include "core/error.hpp"
#include "ops/kernels.hpp"

namespace telar::backend::cpu {

namespace {

using graph::OpKind;

Tensor* grad_ptr(const GradTarget& g) { return g.tensor; }

class RefLinear final : public Kernel {
 public:
  explicit RefLinear(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override {
    ops::linear_forward(in(0).data, in(1).data, has_bias() ? &in(2).data : nullptr, out().data);
  }
  void backward() override {
    ops::linear_backward(in(0).data, in(1).data, out().grad, grad_ptr(grad_of(0)),
                         grad_ptr(grad_of(1)), has_bias() ? grad_ptr(grad_of(2)) : nullptr);
  }

 private:
  bool has_bias() const { return io_.inputs.size() > 2; }
};

class RefConv final : public Kernel {
 public:
  explicit RefConv(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override {
    ops::conv2d_forward(attrs(), in(0).data, in(1).data, has_bias() ? &in(2).data : nullptr,
                        out().data);
  }
  void backward() override {
    ops::conv2d_backward(attrs(), in(0).data, in(1).data, out().grad, grad_ptr(grad_of(0)),
                         grad_ptr(grad_of(1)), has_bias() ? grad_ptr(grad_of(2)) : nullptr);
  }

 private:
  const graph::Conv2dAttrs& attrs() const { return node().attr<graph::Conv2dAttrs>(); }
  bool has_bias() const { return io_.inputs.size() > 2; }
};

class RefBatchNorm final : public Kernel {
 public:
  explicit RefBatchNorm(KernelIO io) : Kernel(std::move(io)) {
    define_plain_output();
    const auto c = node().attr<graph::BatchNormAttrs>().channels;
    mean_ = Tensor({c});
    inv_std_ = Tensor({c});
  }
  void forward(bool training, std::uint64_t) override {
    const auto& a = node().attr<graph::BatchNormAttrs>();
    if (training)
      ops::batchnorm_forward_train(a, in(0).data, in(1).data, in(2).data, in_mut(3).data,
                                   in_mut(4).data, out().data, mean_, inv_std_);
    else
      ops::batchnorm_forward_eval(a, in(0).data, in(1).data, in(2).data, in(3).data, in(4).data,
                                  out().data);
  }
  void backward() override {
    ops::batchnorm_backward(node().attr<graph::BatchNormAttrs>(), in(0).data, in(1).data, mean_,
                            inv_std_, out().grad, grad_ptr(grad_of(0)), grad_ptr(grad_of(1)),
                            grad_ptr(grad_of(2)));
  }

 private:
  Tensor mean_, inv_std_;
};

class RefActivation final : public Kernel {
 public:
  RefActivation(KernelIO io, ops::Activation kind) : Kernel(std::move(io)), kind_(kind) {
    define_plain_output();
  }
  void forward(bool, std::uint64_t) override {
    ops::activation_forward(kind_, in(0).data, out().data);
  }
  void backward() override {
    if (grad_of(0).tensor)
      ops::activation_backward(kind_, in(0).data, out().data, out().grad, *grad_of(0).tensor);
  }

 private:
  ops::Activation kind_;
};

class RefSoftmax final : public Kernel {
 public:
  explicit RefSoftmax(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override { ops::softmax_forward(in(0).data, out().data); }
  void backward() override {
    if (grad_of(0).tensor) ops::softmax_backward(out().data, out().grad, *grad_of(0).tensor);
  }
};

class RefMaxPool final : public Kernel {
 public:
  explicit RefMaxPool(KernelIO io) : Kernel(std::move(io)) {
    define_plain_output();
    argmax_ = Tensor(out().shape, DType::I32);
  }
  void forward(bool, std::uint64_t) override {
    ops::maxpool2d_forward(node().attr<graph::Pool2dAttrs>(), in(0).data, out().data, argmax_);
  }
  void backward() override {
    if (grad_of(0).tensor)
      ops::maxpool2d_backward(node().attr<graph::Pool2dAttrs>(), argmax_, out().grad,
                              *grad_of(0).tensor);
  }

 private:
  Tensor argmax_;
};

class RefAvgPool final : public Kernel {
 public:
  explicit RefAvgPool(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override {
    ops::avgpool2d_forward(node().attr<graph::Pool2dAttrs>(), in(0).data, out().data);
  }
  void backward() override {
    if (grad_of(0).tensor)
      ops::avgpool2d_backward(node().attr<graph::Pool2dAttrs>(), out().grad, *grad_of(0).tensor);
  }
};

class RefGlobalAvgPool final : public Kernel {
 public:
  explicit RefGlobalAvgPool(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override { ops::global_avgpool_forward(in(0).data, out().data); }
  void backward() override {
    if (grad_of(0).tensor) ops::global_avgpool_backward(out().grad, *grad_of(0).tensor);
  }
};

// Flatten of a plain tensor is a relabelling: the output shares the input's storage.
class RefFlatten final : public Kernel {
 public:
  explicit RefFlatten(KernelIO io) : Kernel(std::move(io)) {
    Slot& o = out();
    o.plain = true;
    o.data = in(0).data.reshaped(o.shape);
    if (o.dtype == DType::F32) o.md = in(0).md.reshape({o.shape.begin(), o.shape.end()});
  }
  void forward(bool, std::uint64_t) override {}
  void backward() override {
    if (grad_of(0).tensor) grad_of(0).tensor->copy_from(out().grad);
  }
};

class RefDropout final : public Kernel {
 public:
  explicit RefDropout(KernelIO io) : Kernel(std::move(io)) {
    define_plain_output();
    mask_ = Tensor(out().shape, DType::U8);
  }
  void forward(bool training, std::uint64_t stream) override {
    const float p = node().attr<graph::DropoutAttrs>().p;
    if (!training || p == 0.0f) {
      out().data.copy_from(in(0).data);
      mask_valid_ = false;
      return;
    }
    Rng rng = Rng::derive(io_.seed, stream);
    ops::dropout_forward(p, rng, in(0).data, out().data, mask_);
    mask_valid_ = true;
  }
  void backward() override {
    if (!grad_of(0).tensor) return;
    if (mask_valid_)
      ops::dropout_backward(node().attr<graph::DropoutAttrs>().p, mask_, out().grad,
                            *grad_of(0).tensor);
    else
      grad_of(0).tensor->copy_from(out().grad);
  }

 private:
  Tensor mask_;
  bool mask_valid_ = false;
};

class RefAdd final : public Kernel {
 public:
  explicit RefAdd(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override { ops::add_forward(in(0).data, in(1).data, out().data); }
  void backward() override {
    for (std::size_t i = 0; i < 2; ++i)
      if (grad_of(i).tensor) grad_of(i).tensor->copy_from(out().grad);
  }
};

class RefConcat final : public Kernel {
 public:
  explicit RefConcat(KernelIO io) : Kernel(std::move(io)) {
    define_plain_output();
    inputs_.resize(io_.inputs.size());
    grads_.resize(io_.inputs.size());
  }
  void forward(bool, std::uint64_t) override {
    for (std::size_t i = 0; i < inputs_.size(); ++i) inputs_[i] = in(i).data;
    ops::concat_forward(inputs_, out().data);
  }
  void prepare_backward() override {
    for (std::size_t i = 0; i < grads_.size(); ++i)
      grads_[i] = grad_of(i).tensor ? *grad_of(i).tensor : Tensor(in(i).shape);
  }
  void backward() override { ops::concat_backward(out().grad, grads_); }

 private:
  std::vector<Tensor> inputs_, grads_;
};

class RefEmbeddingBag final : public Kernel {
 public:
  explicit RefEmbeddingBag(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override {
    ops::embedding_bag_forward(attrs(), in(0).data, in(1).data, in(2).data, psw(), out().data);
  }
  void backward() override {
    if (grad_of(2).tensor)
      ops::embedding_bag_backward(attrs(), in(0).data, in(1).data, psw(), out().grad,
                                  *grad_of(2).tensor);
  }

 private:
  const graph::EmbeddingBagAttrs& attrs() const { return node().attr<graph::EmbeddingBagAttrs>(); }
  const Tensor* psw() const { return io_.inputs.size() > 3 ? &in(3).data : nullptr; }
};

class RefDotInteraction final : public Kernel {
 public:
  explicit RefDotInteraction(KernelIO io) : Kernel(std::move(io)) {
    define_plain_output();
    inputs_.resize(io_.inputs.size());
    grads_.resize(io_.inputs.size());
  }
  void forward(bool, std::uint64_t) override {
    for (std::size_t i = 0; i < inputs_.size(); ++i) inputs_[i] = in(i).data;
    ops::dot_interaction_forward(node().attr<graph::DotInteractionAttrs>(), inputs_, out().data);
  }
  void prepare_backward() override {
    for (std::size_t i = 0; i < grads_.size(); ++i)
      grads_[i] = grad_of(i).tensor ? *grad_of(i).tensor : Tensor(in(i).shape);
  }
  void backward() override {
    ops::dot_interaction_backward(node().attr<graph::DotInteractionAttrs>(), inputs_, out().grad,
                                  grads_);
  }

 private:
  std::vector<Tensor> inputs_, grads_;
};

class RefLoss final : public Kernel {
 public:
  explicit RefLoss(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override { out().data.f32()[0] = compute(nullptr, 1.0f); }
  void backward() override {
    if (grad_of(0).tensor) compute(grad_of(0).tensor, out().grad.f32()[0]);
  }

 private:
  float compute(Tensor* dinput, float scale) {
    switch (node().kind) {
      case OpKind::CrossEntropy:
        return ops::cross_entropy_with_logits(in(0).data, in(1).data, dinput, scale);
      case OpKind::BCEWithLogits: return ops::bce_with_logits(in(0).data, in(1).data, dinput, scale);
      default: return ops::mse(in(0).data, in(1).data, dinput, scale);
    }
  }
};

}  // namespace

std::unique_ptr<Kernel> make_reference_kernel(KernelIO io) {
  switch (io.node->kind) {
    case OpKind::Linear: return std::make_unique<RefLinear>(std::move(io));
    case OpKind::Conv2d: return std::make_unique<RefConv>(std::move(io));
    case OpKind::BatchNorm2d: return std::make_unique<RefBatchNorm>(std::move(io));
    case OpKind::ReLU: return std::make_unique<RefActivation>(std::move(io), ops::Activation::ReLU);
    case OpKind::ReLU6: return std::make_unique<RefActivation>(std::move(io), ops::Activation::ReLU6);
    case OpKind::Sigmoid:
      return std::make_unique<RefActivation>(std::move(io), ops::Activation::Sigmoid);
    case OpKind::Tanh: return std::make_unique<RefActivation>(std::move(io), ops::Activation::Tanh);
    case OpKind::Softmax: return std::make_unique<RefSoftmax>(std::move(io));
    case OpKind::MaxPool2d: return std::make_unique<RefMaxPool>(std::move(io));
    case OpKind::AvgPool2d: return std::make_unique<RefAvgPool>(std::move(io));
    case OpKind::GlobalAvgPool: return std::make_unique<RefGlobalAvgPool>(std::move(io));
    case OpKind::Flatten: return std::make_unique<RefFlatten>(std::move(io));
    case OpKind::Dropout: return std::make_unique<RefDropout>(std::move(io));
    case OpKind::Add: return std::make_unique<RefAdd>(std::move(io));
    case OpKind::Concat: return std::make_unique<RefConcat>(std::move(io));
    case OpKind::EmbeddingBag: return std::make_unique<RefEmbeddingBag>(std::move(io));
    case OpKind::DotInteraction: return std::make_unique<RefDotInteraction>(std::move(io));
    case OpKind::CrossEntropy:
    case OpKind::BCEWithLogits:
    case OpKind::MSE: return std::make_unique<RefLoss>(std::move(io));
  }
  fail("internal: no reference kernel for {}", graph::op_name(io.node->kind));
}

}  // namespace telar::backend::cpu
