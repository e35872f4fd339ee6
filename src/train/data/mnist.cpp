#include "train/data/mnist.hpp"

#include "core/error.hpp"
#include "train/data/idx.hpp"

namespace telar::train {

namespace fs = std::filesystem;

DataSplit parse_data_split(std::string_view text) {
  if (text == "train") return DataSplit::Train;
  if (text == "test" || text == "t10k") return DataSplit::Test;
  fail("unknown data split '{}'; choose train or test", text);
}

std::string_view data_split_name(DataSplit split) {
  return split == DataSplit::Train ? "train" : "test";
}

namespace {
std::string_view file_prefix(DataSplit split) {
  return split == DataSplit::Train ? "train" : "t10k";
}
}  // namespace

fs::path fashion_mnist_images_path(const fs::path& dir, DataSplit split) {
  return dir / (std::string(file_prefix(split)) + "-images-idx3-ubyte.gz");
}

fs::path fashion_mnist_labels_path(const fs::path& dir, DataSplit split) {
  return dir / (std::string(file_prefix(split)) + "-labels-idx1-ubyte.gz");
}

Dataset load_mnist_format(const fs::path& images_path, const fs::path& labels_path,
                          std::string name, std::int64_t num_classes) {
  require(num_classes >= 1 && num_classes <= 256,
          "data set '{}': {} classes requested; u8 IDX labels allow 1 to 256", name, num_classes);
  // Labels first: they are small, so a mismatched pair fails before the large read.
  const std::vector<std::uint8_t> labels = read_idx_labels(labels_path);
  IdxImages images = read_idx_images(images_path);
  if (static_cast<std::int64_t>(labels.size()) != images.count)
    fail(
        "'{}' holds {} images but '{}' holds {} labels; give the label file that belongs to "
        "these images",
        images_path.string(), images.count, labels_path.string(), labels.size());
  require(images.rows > 0 && images.cols > 0,
          "'{}' declares images of {}x{} pixels; the file is "
          "damaged",
          images_path.string(), images.rows, images.cols);

  Dataset out{std::move(name), Tensor({images.count, 1, images.rows, images.cols}, DType::F32),
              Tensor({images.count}, DType::I64), num_classes, nullptr};
  float* pixel = out.images.f32();
  const std::size_t pixel_count = images.pixels.size();
  for (std::size_t i = 0; i < pixel_count; ++i)
    pixel[i] = static_cast<float>(images.pixels[i]) / 255.0f;  // as torchvision ToTensor
  std::int64_t* label = out.labels.data<std::int64_t>();
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] >= num_classes)
      fail(
          "'{}': label {} of sample {} is outside [0, {}); check the label file or the number "
          "of classes",
          labels_path.string(), labels[i], i, num_classes);
    label[i] = labels[i];
  }
  return out;
}

Dataset load_fashion_mnist(const fs::path& dir, DataSplit split) {
  return load_mnist_format(fashion_mnist_images_path(dir, split),
                           fashion_mnist_labels_path(dir, split),
                           "fashion-mnist/" + std::string(data_split_name(split)), 10);
}

}  // namespace telar::train
