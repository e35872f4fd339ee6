#include "train/data/dataset.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "core/parallel.hpp"

namespace telar::train {

Shape Dataset::stored_sample_shape() const {
  if (!images.defined()) return {};
  return Shape(images.shape().begin() + 1, images.shape().end());
}

Shape Dataset::sample_shape() const {
  return fit ? fit->to() : stored_sample_shape();
}

std::int64_t Dataset::sample_numel() const {
  return shape_numel(sample_shape());
}

void Dataset::read_sample(std::int64_t index, float* out) const {
  const std::int64_t stored = images.numel() / images.dim(0);  // no shape built: no allocation
  const float* in = images.f32() + index * stored;
  if (fit)
    fit->apply(in, out);
  else
    std::copy_n(in, stored, out);
}

Shape Dataset::batch_shape(std::int64_t size) const {
  Shape shape{size};
  const Shape sample = sample_shape();
  shape.insert(shape.end(), sample.begin(), sample.end());
  return shape;
}

void Dataset::read_batch(std::span<const std::int64_t> rows, Tensor& images, Tensor& labels) const {
  const auto size = static_cast<std::int64_t>(rows.size());
  if (size == 0) return;
  const std::int64_t numel = images.numel() / size;  // per sample, as read
  float* dst = images.f32();
  const std::int64_t* src_label = this->labels.data<std::int64_t>();
  std::int64_t* dst_label = labels.data<std::int64_t>();
  // Fitting a sample costs far more than copying it: the rows are split across the threads.
  parallel_for(0, size, fit && size > 1, [&](std::int64_t i) {
    const std::int64_t row = rows[static_cast<std::size_t>(i)];
    read_sample(row, dst + i * numel);
    dst_label[i] = src_label[row];
  });
}

void Dataset::validate() const {
  require(images.defined() && labels.defined(), "data set '{}' has no samples", name);
  require(images.dtype() == DType::F32 && images.rank() >= 2,
          "internal: data set '{}' images must be f32 [N, ...], got {} {}", name,
          dtype_name(images.dtype()), shape_str(images.shape()));
  require(labels.dtype() == DType::I64 && labels.rank() == 1,
          "internal: data set '{}' labels must be i64 [N], got {} {}", name,
          dtype_name(labels.dtype()), shape_str(labels.shape()));
  require(labels.dim(0) == images.dim(0),
          "data set '{}' has {} samples but {} labels; give an image file and a label file of "
          "the same data set",
          name, images.dim(0), labels.dim(0));
  require(num_classes >= 1, "data set '{}' declares {} classes; it needs at least 1", name,
          num_classes);
  const std::int64_t* label = labels.data<std::int64_t>();
  for (std::int64_t i = 0; i < labels.dim(0); ++i)
    if (label[i] < 0 || label[i] >= num_classes)
      fail(
          "data set '{}': label {} of sample {} is outside [0, {}); check the label file or the "
          "number of classes",
          name, label[i], i, num_classes);
}

Dataset subset(const Dataset& data, std::span<const std::int64_t> indices, std::string name) {
  Shape shape = data.images.shape();
  shape[0] = static_cast<std::int64_t>(indices.size());
  Dataset out{std::move(name), Tensor(shape, DType::F32), Tensor({shape[0]}, DType::I64),
              data.num_classes, data.fit};
  const std::size_t row_bytes =
      static_cast<std::size_t>(shape_numel(data.stored_sample_shape())) * sizeof(float);
  const auto* src = static_cast<const char*>(data.images.raw());
  auto* dst = static_cast<char*>(out.images.raw());
  const std::int64_t* src_label = data.labels.data<std::int64_t>();
  std::int64_t* dst_label = out.labels.data<std::int64_t>();
  for (std::size_t i = 0; i < indices.size(); ++i) {
    const std::int64_t index = indices[i];
    require(index >= 0 && index < data.size(),
            "internal: sample index {} outside data set '{}' of {}", index, data.name, data.size());
    std::memcpy(dst + i * row_bytes, src + static_cast<std::size_t>(index) * row_bytes, row_bytes);
    dst_label[i] = src_label[index];
  }
  return out;
}

std::vector<std::int64_t> class_counts(const Dataset& data) {
  std::vector<std::int64_t> counts(
      static_cast<std::size_t>(std::max<std::int64_t>(data.num_classes, 0)), 0);
  const std::int64_t* label = data.labels.data<std::int64_t>();
  for (std::int64_t i = 0; i < data.labels.numel(); ++i)
    if (label[i] >= 0 && label[i] < data.num_classes) ++counts[static_cast<std::size_t>(label[i])];
  return counts;
}

}  // namespace telar::train
