#include "train/checkpoint.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <vector>

#include "core/rng.hpp"
#include "graph/builder.hpp"
#include "test_support.hpp"
#include "train/model_fingerprint.hpp"

using namespace telar;
using namespace telar::train;
using graph::ParameterSet;
using graph::ValueId;
using telar::train::testing::expect_error;
using telar::train::testing::TempDir;

namespace {

// A small CNN with a BatchNorm (so there are buffers) and a configurable head width.
graph::Graph small_cnn(std::int64_t hidden = 6, const std::string& name = "small_cnn",
                       float dropout = 0.25f) {
  graph::GraphBuilder b(name);
  ValueId x = b.input("x", {1, 6, 6});
  x = b.relu(b.batchnorm2d(b.conv2d(x, 3, 3, 1, 1, 1, true, "conv1"), "bn1"));
  x = b.dropout(b.flatten(b.maxpool2d(x, 2, 2)), dropout);
  b.output(b.linear(b.relu(b.linear(x, hidden, "fc1")), 4, "fc2"));
  return b.finish();
}

std::vector<char> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::filesystem::path& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

// A model in the middle of training: initialized, a few Adam steps taken, BatchNorm running
// statistics changed, and a trainer state with every field set.
Checkpoint read_and_write_back(const std::filesystem::path& path, const Checkpoint& c) {
  write_checkpoint(path, c);
  return read_checkpoint(path);
}

struct TrainedModel {
  graph::Graph graph = small_cnn();
  ParameterSet params = ParameterSet::initialize(graph, 5);
  std::unique_ptr<Optimizer> optimizer;
  TrainerState trainer;

  explicit TrainedModel(const std::string& optimizer_name = "adam") {
    optimizer = make_optimizer({.name = optimizer_name});
    ParameterSet grads = ParameterSet::zeros_like_parameters(graph);
    Rng rng(17);
    for (int s = 0; s < 3; ++s) {
      for (ValueId id : graph.parameters())
        for (float& g : grads.at(id).span<float>()) g = rng.normal(0.0f, 1.0f);
      optimizer->step(params, grads, graph.parameters(), 0.01f);
    }
    for (ValueId id : graph.buffers())
      for (float& v : params.at(id).span<float>()) v = rng.uniform(0.5f, 1.5f);
    trainer.epoch = 3;
    trainer.step_in_epoch = 17;
    trainer.global_step = 3 * 469 + 17;
    Rng trainer_rng(99);
    trainer_rng.next_u64();
    trainer.rng_state = trainer_rng.state();
    trainer.best_metric = 0.8731;
    trainer.best_metric_name = "val_accuracy";
    trainer.config_json = R"({"model":"small_cnn","lr":0.01,"note":"ünïcode ok"})";
  }
};

}  // namespace

TEST(Checkpoint, RoundTripIsBitwiseExact) {
  TempDir dir("ckpt_roundtrip");
  TrainedModel model;
  const auto path = dir / kCheckpointFileName;
  save_checkpoint(path, model.graph, model.params, model.optimizer.get(), model.trainer);

  // Restore into a differently initialized model and a fresh optimizer.
  ParameterSet params = ParameterSet::initialize(model.graph, 6);
  const void* weight_storage = params.at(model.graph.value_id("fc1.weight")).raw();
  auto optimizer = make_optimizer({.name = "adam"});
  TrainerState trainer = load_checkpoint(path, model.graph, params, optimizer.get());

  std::vector<ValueId> all = model.graph.parameters();
  for (ValueId id : model.graph.buffers()) all.push_back(id);
  for (ValueId id : all)
    EXPECT_TRUE(same_bytes(params.at(id), model.params.at(id))) << model.graph.value(id).name;
  // Loaded in place: a backend holding the tensors sees the new values.
  EXPECT_EQ(params.at(model.graph.value_id("fc1.weight")).raw(), weight_storage);

  const NamedTensors saved_state = model.optimizer->state(model.graph);
  const NamedTensors loaded_state = optimizer->state(model.graph);
  ASSERT_EQ(saved_state.size(), loaded_state.size());
  for (std::size_t i = 0; i < saved_state.size(); ++i) {
    EXPECT_EQ(saved_state[i].name, loaded_state[i].name);
    EXPECT_TRUE(same_bytes(saved_state[i].tensor, loaded_state[i].tensor)) << saved_state[i].name;
  }

  EXPECT_EQ(trainer.epoch, 3);
  EXPECT_EQ(trainer.step_in_epoch, 17);
  EXPECT_EQ(trainer.global_step, 3 * 469 + 17);
  EXPECT_EQ(trainer.rng_state, model.trainer.rng_state);
  EXPECT_EQ(trainer.best_metric, 0.8731);
  EXPECT_EQ(trainer.best_metric_name, "val_accuracy");
  EXPECT_EQ(trainer.config_json, model.trainer.config_json);
}

// The optional "extra" section (state outside the graph, e.g. DLRM's tables) round-trips, and
// a checkpoint without it reads back with none.
TEST(Checkpoint, ExtraTensorsRoundTripAndAreOptional) {
  TempDir dir("ckpt_extra");
  TrainedModel model;
  Checkpoint c = capture_checkpoint(model.graph, model.params, nullptr, model.trainer);
  EXPECT_TRUE(read_and_write_back(dir / "plain.telar", c).extra.empty());
  Tensor rows(Shape{3}, DType::I64);
  for (int i = 0; i < 3; ++i) rows.data<std::int64_t>()[i] = 10 * i + 1;
  Tensor values =
      Tensor::from(std::vector<float>{1.5f, -2.0f, 0.25f, 8.0f, 1e-30f, -0.0f}, Shape{3, 2});
  c.extra = {{"emb/0.rows", rows}, {"emb/0.values", values}};
  const Checkpoint back = read_and_write_back(dir / "extra.telar", c);
  ASSERT_EQ(back.extra.size(), 2u);
  EXPECT_EQ(back.extra[0].name, "emb/0.rows");
  EXPECT_TRUE(same_bytes(back.extra[0].tensor, rows));
  EXPECT_EQ(back.extra[1].name, "emb/0.values");
  EXPECT_TRUE(same_bytes(back.extra[1].tensor, values));
}

TEST(Checkpoint, ResumedTrainingMatchesUninterrupted) {
  TempDir dir("ckpt_resume");
  TrainedModel straight, interrupted;
  const auto path = dir / "ckpt";
  save_checkpoint(path, interrupted.graph, interrupted.params, interrupted.optimizer.get(),
                  interrupted.trainer);
  TrainedModel resumed;  // state to be overwritten
  resumed.params = ParameterSet::initialize(resumed.graph, 123);
  resumed.optimizer = make_optimizer({.name = "adam"});
  load_checkpoint(path, resumed.graph, resumed.params, resumed.optimizer.get());
  ParameterSet grads = ParameterSet::zeros_like_parameters(straight.graph);
  for (ValueId id : straight.graph.parameters()) grads.at(id).fill(0.3f);
  for (int s = 0; s < 2; ++s) {
    straight.optimizer->step(straight.params, grads, straight.graph.parameters(), 0.01f);
    resumed.optimizer->step(resumed.params, grads, resumed.graph.parameters(), 0.01f);
  }
  for (ValueId id : straight.graph.parameters())
    EXPECT_TRUE(same_bytes(straight.params.at(id), resumed.params.at(id)));
}

TEST(Checkpoint, NoBestMetricRoundTripsAsNaN) {
  TempDir dir("ckpt_nan");
  TrainedModel model;
  model.trainer.best_metric = std::numeric_limits<double>::quiet_NaN();
  save_checkpoint(dir / "c", model.graph, model.params, model.optimizer.get(), model.trainer);
  EXPECT_TRUE(std::isnan(read_checkpoint(dir / "c").trainer.best_metric));
}

TEST(Checkpoint, FileFollowsTheDocumentedLayout) {
  TempDir dir("ckpt_layout");
  TrainedModel model;
  save_checkpoint(dir / "c", model.graph, model.params, model.optimizer.get(), model.trainer);
  const std::vector<char> bytes = read_bytes(dir / "c");
  ASSERT_GE(bytes.size(), 28u);
  EXPECT_EQ(std::string(bytes.data(), 8), "TELARCKP");
  std::uint32_t version = 0;
  std::uint64_t payload = 0;
  std::uint32_t stored_crc = 0;
  std::memcpy(&version, bytes.data() + 8, 4);
  std::memcpy(&payload, bytes.data() + 16, 8);
  std::memcpy(&stored_crc, bytes.data() + bytes.size() - 4, 4);
  EXPECT_EQ(version, kCheckpointFormatVersion);
  EXPECT_EQ(payload + 28, bytes.size());
  const uLong crc =
      crc32(0L, reinterpret_cast<const Bytef*>(bytes.data() + 24), static_cast<uInt>(payload));
  EXPECT_EQ(stored_crc, static_cast<std::uint32_t>(crc));
  // Nothing but the checkpoint is left in the directory (the temporary file was renamed).
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) (void)entry, ++files;
  EXPECT_EQ(files, 1);
}

TEST(Checkpoint, FlippedPayloadByteIsAChecksumError) {
  TempDir dir("ckpt_flip");
  TrainedModel model;
  save_checkpoint(dir / "c", model.graph, model.params, model.optimizer.get(), model.trainer);
  std::vector<char> bytes = read_bytes(dir / "c");
  for (std::size_t offset : {std::size_t{24}, bytes.size() / 2, bytes.size() - 5}) {
    std::vector<char> damaged = bytes;
    damaged[offset] = static_cast<char>(damaged[offset] ^ 0x10);
    write_bytes(dir / "damaged", damaged);
    expect_error([&] { read_checkpoint(dir / "damaged"); },
                 {(dir / "damaged").string(), "corrupted", "checksum mismatch"});
  }
  // A flipped checksum byte is the same error.
  bytes.back() = static_cast<char>(bytes.back() ^ 1);
  write_bytes(dir / "damaged", bytes);
  expect_error([&] { read_checkpoint(dir / "damaged"); }, {"corrupted", "checksum"});
}

TEST(Checkpoint, TruncatedFile) {
  TempDir dir("ckpt_trunc");
  TrainedModel model;
  save_checkpoint(dir / "c", model.graph, model.params, model.optimizer.get(), model.trainer);
  const std::vector<char> bytes = read_bytes(dir / "c");
  std::vector<char> cut(bytes.begin(), bytes.end() - 100);
  write_bytes(dir / "cut", cut);
  expect_error([&] { read_checkpoint(dir / "cut"); },
               {"truncated", fmt::format("expected {} bytes, found {}", bytes.size(), cut.size())});
  write_bytes(dir / "stub", std::vector<char>(bytes.begin(), bytes.begin() + 12));
  expect_error([&] { read_checkpoint(dir / "stub"); }, {"truncated", "found 12"});
  write_bytes(dir / "empty", {});
  expect_error([&] { read_checkpoint(dir / "empty"); }, {"truncated"});
  std::vector<char> longer = bytes;
  longer.push_back('x');
  write_bytes(dir / "longer", longer);
  expect_error([&] { read_checkpoint(dir / "longer"); }, {"corrupted", "1 bytes follow its end"});
}

TEST(Checkpoint, WrongMagicIsNotATelarCheckpoint) {
  TempDir dir("ckpt_magic");
  TrainedModel model;
  save_checkpoint(dir / "c", model.graph, model.params, model.optimizer.get(), model.trainer);
  std::vector<char> bytes = read_bytes(dir / "c");
  bytes[0] = 'X';
  write_bytes(dir / "c", bytes);
  expect_error([&] { read_checkpoint(dir / "c"); }, {"not a telar checkpoint", "TELARCKP"});
  write_bytes(dir / "text", {'{', '"', 'a', '"', '}'});
  expect_error([&] { read_checkpoint(dir / "text"); }, {"not a telar checkpoint"});
}

TEST(Checkpoint, NewerFormatVersionIsRefused) {
  TempDir dir("ckpt_version");
  TrainedModel model;
  save_checkpoint(dir / "c", model.graph, model.params, model.optimizer.get(), model.trainer);
  std::vector<char> bytes = read_bytes(dir / "c");
  const std::uint32_t future = 9;
  std::memcpy(bytes.data() + 8, &future, 4);
  write_bytes(dir / "c", bytes);
  expect_error([&] { read_checkpoint(dir / "c"); },
               {"format version 9", fmt::format("reads version {}", kCheckpointFormatVersion)});
}

TEST(Checkpoint, MissingFileAndDirectory) {
  TempDir dir("ckpt_missing");
  expect_error([&] { read_checkpoint(dir / "nope"); }, {"does not exist", "nope"});
  expect_error([&] { read_checkpoint(dir.path()); }, {"is a directory", kCheckpointFileName});
}

TEST(Checkpoint, CheckpointOfAnotherModelIsRefused) {
  TempDir dir("ckpt_other");
  TrainedModel model;
  save_checkpoint(dir / "c", model.graph, model.params, model.optimizer.get(), model.trainer);
  const graph::Graph wider = small_cnn(8, "wider_cnn");
  ParameterSet params = ParameterSet::initialize(wider, 1);
  const std::string message = expect_error(
      [&] { load_checkpoint(dir / "c", wider, params, nullptr); },
      {"was written for model small_cnn", fingerprint_str(model_fingerprint(model.graph)),
       "this run builds model wider_cnn", fingerprint_str(model_fingerprint(wider))});
  EXPECT_NE(message.find(std::to_string(model.graph.parameter_count()) + " parameters"),
            std::string::npos)
      << message;
  // Same name, different structure: still refused, by fingerprint.
  const graph::Graph same_name = small_cnn(8);
  ParameterSet same_name_params = ParameterSet::initialize(same_name, 1);
  expect_error([&] { load_checkpoint(dir / "c", same_name, same_name_params, nullptr); },
               {"was written for model small_cnn", "this run builds model small_cnn"});
}

TEST(Checkpoint, WithoutTheModelCheckNamesAndShapesStillMustMatch) {
  TempDir dir("ckpt_lenient");
  TrainedModel model;
  save_checkpoint(dir / "c", model.graph, model.params, model.optimizer.get(), model.trainer);
  const RestoreOptions lenient{.require_same_model = false, .restore_optimizer = false};

  // A different dropout rate has the same weights: loads.
  const graph::Graph other_dropout = small_cnn(6, "small_cnn", 0.5f);
  EXPECT_NE(model_fingerprint(other_dropout), model_fingerprint(model.graph));
  ParameterSet p1 = ParameterSet::initialize(other_dropout, 1);
  EXPECT_NO_THROW(load_checkpoint(dir / "c", other_dropout, p1, nullptr, lenient));
  EXPECT_TRUE(same_bytes(p1.at(other_dropout.value_id("fc2.weight")),
                         model.params.at(model.graph.value_id("fc2.weight"))));

  const graph::Graph wider = small_cnn(8);
  ParameterSet p2 = ParameterSet::initialize(wider, 1);
  const ParameterSet p2_before = ParameterSet::initialize(wider, 1);
  expect_error([&] { load_checkpoint(dir / "c", wider, p2, nullptr, lenient); },
               {"parameter 'fc1.weight' is f32 [6, 27]", "but f32 [8, 27]"});
  // Nothing was loaded: the first parameters (which do match) are untouched.
  const ValueId conv = wider.value_id("conv1.weight");
  EXPECT_TRUE(same_bytes(p2.at(conv), p2_before.at(conv)));

  graph::GraphBuilder extra_layer("small_cnn");
  {
    ValueId x = extra_layer.input("x", {1, 6, 6});
    x = extra_layer.relu(
        extra_layer.batchnorm2d(extra_layer.conv2d(x, 3, 3, 1, 1, 1, true, "conv1"), "bn1"));
    x = extra_layer.dropout(extra_layer.flatten(extra_layer.maxpool2d(x, 2, 2)), 0.25f);
    x = extra_layer.relu(extra_layer.linear(x, 6, "fc1"));
    x = extra_layer.linear(x, 4, "fc2");
    extra_layer.output(extra_layer.linear(x, 4, "fc3"));
  }
  const graph::Graph bigger = extra_layer.finish();
  ParameterSet p3 = ParameterSet::initialize(bigger, 1);
  expect_error([&] { load_checkpoint(dir / "c", bigger, p3, nullptr, lenient); },
               {"has no parameter 'fc3.weight'"});

  graph::GraphBuilder no_head("small_cnn");
  {
    ValueId x = no_head.input("x", {1, 6, 6});
    x = no_head.relu(no_head.batchnorm2d(no_head.conv2d(x, 3, 3, 1, 1, 1, true, "conv1"), "bn1"));
    x = no_head.dropout(no_head.flatten(no_head.maxpool2d(x, 2, 2)), 0.25f);
    no_head.output(no_head.linear(x, 6, "fc1"));
  }
  const graph::Graph smaller = no_head.finish();
  ParameterSet p4 = ParameterSet::initialize(smaller, 1);
  expect_error([&] { load_checkpoint(dir / "c", smaller, p4, nullptr, lenient); },
               {"has parameter 'fc2.weight'", "does not have"});
}

TEST(Checkpoint, OptimizerMustMatchToResume) {
  TempDir dir("ckpt_optim");
  TrainedModel model;  // adam
  save_checkpoint(dir / "c", model.graph, model.params, model.optimizer.get(), model.trainer);
  ParameterSet params = ParameterSet::initialize(model.graph, 1);
  auto sgd = make_optimizer({.name = "sgd", .momentum = 0.9f});
  expect_error([&] { load_checkpoint(dir / "c", model.graph, params, sgd.get()); },
               {"holds adam optimizer state", "this run uses sgd", "--optimizer adam"});
  // Evaluation needs no optimizer.
  EXPECT_NO_THROW(load_checkpoint(dir / "c", model.graph, params, nullptr));

  // A checkpoint saved without an optimizer cannot resume training.
  save_checkpoint(dir / "weights_only", model.graph, model.params, nullptr, model.trainer);
  auto adam = make_optimizer({.name = "adam"});
  expect_error([&] { load_checkpoint(dir / "weights_only", model.graph, params, adam.get()); },
               {"holds no optimizer state"});
}

TEST(Checkpoint, OverwritingKeepsOnlyTheNewCheckpoint) {
  TempDir dir("ckpt_overwrite");
  TrainedModel model;
  save_checkpoint(dir / "c", model.graph, model.params, model.optimizer.get(), model.trainer);
  model.trainer.epoch = 4;
  save_checkpoint(dir / "c", model.graph, model.params, model.optimizer.get(), model.trainer);
  EXPECT_EQ(read_checkpoint(dir / "c").trainer.epoch, 4);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) (void)entry, ++files;
  EXPECT_EQ(files, 1);
}

TEST(Checkpoint, UnwritableDestinationIsAnError) {
  TempDir dir("ckpt_unwritable");
  TrainedModel model;
  expect_error(
      [&] {
        save_checkpoint(dir / "missing_subdir" / "c", model.graph, model.params, nullptr,
                        model.trainer);
      },
      {"cannot write", "missing_subdir"});
}
