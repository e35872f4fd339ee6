#pragma once
// MNIST-format data sets (an IDX image file and an IDX label file) as Datasets of
// f32 [N, 1, rows, cols] in [0, 1] and i64 labels.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "train/data/dataset.hpp"

namespace telar::train {

// Where Debian's dataset-fashion-mnist package (installed by scripts/setup.sh) puts the files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

enum class DataSplit { Train, Test };

// "train" or "test" (also "t10k", the file prefix); throws telar::Error listing the choices.
DataSplit parse_data_split(std::string_view text);
std::string_view data_split_name(DataSplit split);

// Loads any MNIST-format pair by path (gzip or plain). Pixels are divided by 255. Throws
// telar::Error for missing/truncated/foreign files, a count mismatch between the two files,
// or a label >= num_classes.
Dataset load_mnist_format(const std::filesystem::path& images_path,
                          const std::filesystem::path& labels_path, std::string name,
                          std::int64_t num_classes = 10);

// {train,t10k}-{images-idx3,labels-idx1}-ubyte.gz under `dir`; the data set is named
// "fashion-mnist/train" or "fashion-mnist/test".
Dataset load_fashion_mnist(const std::filesystem::path& dir, DataSplit split);
inline Dataset load_fashion_mnist(DataSplit split) {
  return load_fashion_mnist(kFashionMnistDir, split);
}

// The two file paths load_fashion_mnist reads, for messages and for tests that skip without them.
std::filesystem::path fashion_mnist_images_path(const std::filesystem::path& dir, DataSplit split);
std::filesystem::path fashion_mnist_labels_path(const std::filesystem::path& dir, DataSplit split);

}  // namespace telar::train
