#include "core/tensor.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include <sys/mman.h>

namespace telar {

namespace {
constexpr std::size_t kAlignment = 64;
constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
}  // namespace

Storage::Storage(std::size_t bytes) : bytes_(bytes) {
  std::size_t rounded = (std::max<std::size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  const std::size_t used = rounded;
  if (rounded >= 4 * kHugePageBytes) {
    // Large tensors (data sets, big layers) on transparent huge pages where the kernel offers
    // them on request (THP "madvise"): a 4 KiB page per fault and per TLB entry made zeroing a
    // data set and gathering random rows from it several times slower in this VM.
    rounded = (rounded + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    data_ = std::aligned_alloc(kHugePageBytes, rounded);
    if (data_) madvise(data_, rounded, MADV_HUGEPAGE);  // advice only: failure changes nothing
  } else {
    data_ = std::aligned_alloc(kAlignment, rounded);
  }
  if (!data_) throw std::bad_alloc();
  std::memset(data_, 0, used);
}

std::shared_ptr<Storage> Storage::unwritten(std::size_t bytes) {
  std::shared_ptr<Storage> s(new Storage());
  s->bytes_ = bytes;
  s->mapped_bytes_ = std::max<std::size_t>(bytes, 1);
  s->data_ = mmap(nullptr, s->mapped_bytes_, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (s->data_ == MAP_FAILED) {
    s->data_ = nullptr;
    throw std::bad_alloc();
  }
  return s;
}

Storage::~Storage() {
  if (mapped_bytes_ > 0) {
    if (data_) munmap(data_, mapped_bytes_);
  } else {
    std::free(data_);
  }
}

Tensor::Tensor(Shape shape, DType dtype) : shape_(std::move(shape)), dtype_(dtype) {
  require(shape_is_concrete(shape_), "internal: tensor shape {} is not concrete", shape_str(shape_));
  storage_ = std::make_shared<Storage>(nbytes());
}

Tensor Tensor::from(std::span<const float> values, Shape shape) {
  Tensor t(std::move(shape));
  require(static_cast<std::size_t>(t.numel()) == values.size(),
          "internal: {} values given for shape {}", values.size(), shape_str(t.shape()));
  std::copy(values.begin(), values.end(), t.f32());
  return t;
}

Tensor Tensor::unwritten(Shape shape, DType dtype) {
  require(shape_is_concrete(shape), "internal: tensor shape {} is not concrete", shape_str(shape));
  Tensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.storage_ = Storage::unwritten(t.nbytes());
  return t;
}

Tensor Tensor::view(std::size_t offset_bytes, Shape shape, DType dtype) const {
  require(defined() && shape_is_concrete(shape), "internal: a view of {} as {}",
          defined() ? "a tensor" : "an undefined tensor", shape_str(shape));
  Tensor out = *this;
  out.offset_bytes_ = offset_bytes_ + offset_bytes;
  out.shape_ = std::move(shape);
  out.dtype_ = dtype;
  require(out.offset_bytes_ + out.nbytes() <= storage_->bytes(),
          "internal: a view of {} bytes at {} over a storage of {}", out.nbytes(),
          out.offset_bytes_, storage_->bytes());
  return out;
}

Tensor Tensor::clone() const {
  if (!defined()) return {};
  Tensor out(shape_, dtype_);
  std::memcpy(out.raw(), raw(), nbytes());
  return out;
}

Tensor Tensor::reshaped(Shape shape) const {
  require(shape_numel(shape) == numel(), "internal: cannot reshape {} to {}", shape_str(shape_),
          shape_str(shape));
  Tensor out = *this;
  out.shape_ = std::move(shape);
  return out;
}

Tensor Tensor::slice_rows(std::int64_t begin, std::int64_t end) const {
  require(rank() >= 1 && begin >= 0 && begin <= end && end <= shape_[0],
          "internal: row slice [{}, {}) out of range for {}", begin, end, shape_str(shape_));
  Tensor out = *this;
  std::int64_t row = numel() / std::max<std::int64_t>(shape_[0], 1);
  out.offset_bytes_ += static_cast<std::size_t>(begin * row) * dtype_size(dtype_);
  out.shape_[0] = end - begin;
  return out;
}

void Tensor::zero() {
  if (defined()) std::memset(raw(), 0, nbytes());
}

void Tensor::fill(float value) { std::fill_n(f32(), numel(), value); }

void Tensor::copy_from(const Tensor& other) {
  require(other.dtype_ == dtype_ && other.numel() == numel(), "internal: copy {} {} into {} {}",
          dtype_name(other.dtype_), shape_str(other.shape_), dtype_name(dtype_), shape_str(shape_));
  std::memcpy(raw(), other.raw(), nbytes());
}

void Tensor::check_dtype(DType expected) const {
  if (!defined()) throw Error("internal: access to an undefined tensor");
  if (expected != dtype_)
    fail("internal: tensor of dtype {} accessed as {}", dtype_name(dtype_), dtype_name(expected));
}

}  // namespace telar
