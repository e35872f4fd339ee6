// Energy meters and the sampler: RAPL read from a fixture powercap tree (the sysfs layout),
// counter wrap-around, power integration as the thesis computed it, totals without DRAM,
// and no meter at all.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "dist/energy/rapl.hpp"
#include "dist/energy/sampler.hpp"

using namespace telar::energy;
namespace fs = std::filesystem;

namespace {

class FixtureTree {
 public:
  FixtureTree() : root_(fs::temp_directory_path() / ("telar_rapl_" + std::to_string(::getpid()))) {
    fs::remove_all(root_);
  }
  ~FixtureTree() { fs::remove_all(root_); }
  const fs::path& root() const { return root_; }
  // A zone folder (relative to the root) with its name, counter and range.
  void zone(const std::string& rel, const std::string& name, std::uint64_t energy_uj,
            std::uint64_t range_uj) {
    fs::create_directories(root_ / rel);
    write(rel + "/name", name);
    write(rel + "/energy_uj", std::to_string(energy_uj));
    write(rel + "/max_energy_range_uj", std::to_string(range_uj));
  }
  void set(const std::string& rel, std::uint64_t energy_uj) {
    write(rel + "/energy_uj", std::to_string(energy_uj));
  }
  // Atomically (as sysfs reads are): the sampler thread may read while the test writes.
  void write(const std::string& rel, const std::string& text) {
    const fs::path tmp = root_ / (rel + ".tmp");
    std::ofstream(tmp) << text << "\n";
    fs::rename(tmp, root_ / rel);
  }

 private:
  fs::path root_;
};

// A meter whose readings the test sets.
class FakeMeter : public EnergyMeter {
 public:
  FakeMeter(Reading r, std::vector<Domain> d) : reading_(r), domains_(std::move(d)) {}
  std::string name() const override { return "fake"; }
  Reading reading() const override { return reading_; }
  const std::vector<Domain>& domains() const override { return domains_; }
  void read(std::vector<double>& v) override { v = values; }
  std::vector<double> values;

 private:
  Reading reading_;
  std::vector<Domain> domains_;
};

}  // namespace

TEST(Rapl, ReadsPackagesAndDramFromAPowercapTree) {
  FixtureTree t;
  t.zone("intel-rapl:0", "package-0", 1000000, 262143328850);
  t.zone("intel-rapl:0/intel-rapl:0:0", "dram", 500000, 65712999613);
  t.zone("intel-rapl:1", "package-1", 7000000, 262143328850);
  std::string why;
  auto m = open_rapl(t.root(), why);
  ASSERT_NE(m, nullptr) << why;
  ASSERT_EQ(m->domains().size(), 3u);
  EXPECT_EQ(m->domains()[0].name, "package-0");
  EXPECT_EQ(m->domains()[1].name, "dram-0");
  EXPECT_EQ(m->domains()[1].kind, DeviceKind::Dram);
  EXPECT_EQ(m->domains()[2].name, "package-1");
  std::vector<double> v;
  m->read(v);
  EXPECT_EQ(v, (std::vector<double>{0.0, 0.0, 0.0}));  // joules since the meter was opened
  t.set("intel-rapl:0", 3000000);                     // +2 J
  t.set("intel-rapl:0/intel-rapl:0:0", 750000);        // +0.25 J
  m->read(v);
  EXPECT_DOUBLE_EQ(v[0], 2.0);
  EXPECT_DOUBLE_EQ(v[1], 0.25);
  EXPECT_DOUBLE_EQ(v[2], 0.0);
}

TEST(Rapl, CounterWrapAroundIsCounted) {
  FixtureTree t;
  t.zone("intel-rapl:0", "package-0", 9000000, 10000000);  // 1 J before the wrap
  std::string why;
  auto m = open_rapl(t.root(), why);
  ASSERT_NE(m, nullptr) << why;
  std::vector<double> v;
  t.set("intel-rapl:0", 500000);  // wrapped: 1 J to the top, 0.5 J after
  m->read(v);
  EXPECT_DOUBLE_EQ(v[0], 1.5);
  t.set("intel-rapl:0", 2500000);
  m->read(v);
  EXPECT_DOUBLE_EQ(v[0], 3.5);
}

TEST(Rapl, NoTreeOrUnreadableCountersAreExplained) {
  std::string why;
  EXPECT_EQ(open_rapl("/nonexistent/powercap", why), nullptr);
  EXPECT_NE(why.find("no powercap tree"), std::string::npos) << why;
  FixtureTree t;
  fs::create_directories(t.root() / "intel-rapl:0");
  t.write("intel-rapl:0/name", "package-0");  // no energy_uj: as when only root may read it
  EXPECT_EQ(open_rapl(t.root(), why), nullptr);
  EXPECT_NE(why.find("root only"), std::string::npos) << why;
}

TEST(Sampler, IntegratesPowerAndEnergyAndTotalsWithoutDram) {
  auto power = std::make_unique<FakeMeter>(
      EnergyMeter::Reading::Power,
      std::vector<Domain>{{"gpu-0", DeviceKind::Gpu, 0, "test gpu"}, {"gpu-1", DeviceKind::Gpu, 1, ""}});
  auto counters = std::make_unique<FakeMeter>(
      EnergyMeter::Reading::Energy,
      std::vector<Domain>{{"package-0", DeviceKind::CpuPackage, 0, ""}, {"dram-0", DeviceKind::Dram, 0, ""}});
  FakeMeter* p = power.get();
  FakeMeter* c = counters.get();
  std::vector<std::unique_ptr<EnergyMeter>> meters;
  meters.push_back(std::move(power));
  meters.push_back(std::move(counters));
  EnergySampler s(std::move(meters), 0.5);
  s.set_used_gpus({0});
  p->values = {99, 99};  // the first reading's power is not integrated (no interval before it)
  c->values = {100, 10};
  s.record(0.0);
  p->values = {10, 2};
  c->values = {103, 11};
  s.record(0.5);
  p->values = {20, 2};
  c->values = {107, 12};
  s.record(1.0);
  const EnergySummary e = s.summary();
  ASSERT_TRUE(e.measured);
  EXPECT_DOUBLE_EQ(e.seconds, 1.0);
  ASSERT_EQ(e.devices.size(), 4u);
  EXPECT_DOUBLE_EQ(e.devices[0].joules, 10 * 0.5 + 20 * 0.5);  // e = sum of P x dt
  EXPECT_DOUBLE_EQ(e.devices[1].joules, 2.0);
  EXPECT_DOUBLE_EQ(e.devices[2].joules, 7.0);  // counters: last - first
  EXPECT_DOUBLE_EQ(e.devices[3].joules, 2.0);
  EXPECT_DOUBLE_EQ(e.devices[2].mean_watts, 7.0);
  EXPECT_TRUE(e.devices[0].used);
  EXPECT_FALSE(e.devices[1].used);
  EXPECT_DOUBLE_EQ(e.used_joules, 15.0 + 7.0);         // GPU 0 + package
  EXPECT_DOUBLE_EQ(e.all_joules, 15.0 + 2.0 + 7.0);    // + the idle GPU; never DRAM
  EXPECT_DOUBLE_EQ(e.dram_joules, 2.0);
  EXPECT_DOUBLE_EQ(e.edp(), 22.0 * 1.0);
  // The summary survives run.json.
  const EnergySummary back = EnergySummary::from_json(e.to_json());
  EXPECT_DOUBLE_EQ(back.used_joules, e.used_joules);
  EXPECT_EQ(back.devices[1].domain.kind, DeviceKind::Gpu);
  EXPECT_FALSE(back.devices[1].used);
}

TEST(Sampler, SamplesOnItsOwnThreadFromAFixtureTree) {
  FixtureTree t;
  t.zone("intel-rapl:0", "package-0", 1000000, 262143328850);
  MeterOptions o;
  o.powercap_root = t.root().string();
  o.nvml = false;
  std::vector<std::string> notes;
  auto meters = open_meters(o, notes);
  ASSERT_EQ(meters.size(), 1u);
  EnergySampler s(std::move(meters), 0.02);
  s.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  t.set("intel-rapl:0", 4000000);  // 3 J during the run
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  const EnergySummary e = s.stop();
  ASSERT_TRUE(e.measured);
  EXPECT_DOUBLE_EQ(e.devices[0].joules, 3.0);  // counters are exact whatever the timing
  EXPECT_GE(e.samples, 3u);
  const fs::path csv = t.root() / "samples.csv";
  s.write_csv(csv);
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "time_s,package-0_w");
}

TEST(Sampler, NoMeterIsNotAnError) {
  MeterOptions o;
  o.powercap_root = "/nonexistent/powercap";
  o.nvml = false;
  std::vector<std::string> notes;
  auto meters = open_meters(o, notes);
  EXPECT_TRUE(meters.empty());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("no meter on this machine"), std::string::npos) << notes[0];
  EnergySampler s(std::move(meters), 0.5, notes[0]);
  s.start();
  const EnergySummary e = s.stop();
  EXPECT_FALSE(e.measured);
  EXPECT_NE(e.format().find("not measured"), std::string::npos);
  EXPECT_EQ(e.to_json()["measured"], false);
}
