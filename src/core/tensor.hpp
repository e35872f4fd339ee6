#pragma once
// Tensor: a shape, a dtype and a reference-counted, 64-byte aligned host buffer.
// Copies share storage (like a handle); clone() copies the data. Device buffers (CUDA) are
// owned by their backend, which converts at its boundary; core tensors are host memory.
#include <cstdint>
#include <memory>
#include <span>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/shape.hpp"

namespace telar {

class Storage {
 public:
  explicit Storage(std::size_t bytes);  // zero-filled
  // Zero pages that the system maps in where first written: what is never written holds no
  // memory (a plan's trial build, whose buffers no kernel runs on).
  static std::shared_ptr<Storage> unwritten(std::size_t bytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  Storage() = default;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t mapped_bytes_ = 0;  // unwritten(): the mapping's length, else 0
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Shape shape, DType dtype = DType::F32);  // zero-filled

  static Tensor from(std::span<const float> values, Shape shape);
  // On Storage::unwritten(): reads zeros, and holds memory only where written.
  static Tensor unwritten(Shape shape, DType dtype = DType::F32);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  std::int64_t dim(int i) const { return shape_.at(i < 0 ? shape_.size() + i : i); }
  std::int64_t numel() const { return shape_numel(shape_); }
  DType dtype() const { return dtype_; }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype_); }

  template <typename T> T* data() {
    check_dtype(dtype_of<T>());
    return reinterpret_cast<T*>(raw());
  }
  template <typename T> const T* data() const {
    check_dtype(dtype_of<T>());
    return reinterpret_cast<const T*>(raw());
  }
  float* f32() { return data<float>(); }
  const float* f32() const { return data<float>(); }
  template <typename T> std::span<T> span() { return {data<T>(), static_cast<std::size_t>(numel())}; }
  template <typename T> std::span<const T> span() const {
    return {data<T>(), static_cast<std::size_t>(numel())};
  }
  void* raw() const { return static_cast<char*>(storage_->data()) + offset_bytes_; }

  Tensor clone() const;
  // Same storage, new shape with the same number of elements.
  Tensor reshaped(Shape shape) const;
  // Rows [begin, end) of the first dimension, sharing storage.
  Tensor slice_rows(std::int64_t begin, std::int64_t end) const;
  // `shape` of `dtype` over this tensor's storage from its byte `offset_bytes` (it must fit):
  // a place in an arena.
  Tensor view(std::size_t offset_bytes, Shape shape, DType dtype) const;
  // The storage every copy and view of this tensor shares (null: undefined).
  const Storage* storage() const { return storage_.get(); }
  void zero();
  void fill(float value);
  void copy_from(const Tensor& other);  // same dtype and numel

 private:
  void check_dtype(DType expected) const;
  std::shared_ptr<Storage> storage_;
  std::size_t offset_bytes_ = 0;
  Shape shape_;
  DType dtype_ = DType::F32;
};

}  // namespace telar
