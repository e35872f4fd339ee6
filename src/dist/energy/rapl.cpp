#include "dist/energy/rapl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>

#include "core/error.hpp"
#include "core/files.hpp"

namespace telar::energy {

namespace fs = std::filesystem;

namespace {

bool read_u64(const fs::path& file, std::uint64_t& value) {
  std::ifstream in(file);
  if (!in) return false;
  std::uint64_t v = 0;
  if (!(in >> v)) return false;
  value = v;
  return true;
}

std::string read_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// "intel-rapl:N" -> package N; "intel-rapl:N:M" -> package N (a part of it); else nothing.
std::optional<int> zone_package(const std::string& name) {
  const std::string prefix = "intel-rapl:";
  if (name.rfind(prefix, 0) != 0) return std::nullopt;
  const std::string rest = name.substr(prefix.size());
  const auto colon = rest.find(':');
  const std::string package = rest.substr(0, colon);
  auto digits = [](const std::string& t) {
    return !t.empty() && t.size() < 6 && t.find_first_not_of("0123456789") == std::string::npos;
  };
  if (!digits(package)) return std::nullopt;
  if (colon != std::string::npos && !digits(rest.substr(colon + 1))) return std::nullopt;
  return std::stoi(package);
}

struct Zone {
  fs::path dir;
  Domain domain;
  std::uint64_t range = 0;  // max_energy_range_uj: the counter wraps to 0 after it
  std::uint64_t last = 0;
  double joules = 0.0;
};

class RaplMeter final : public EnergyMeter {
 public:
  explicit RaplMeter(std::vector<Zone> zones) : zones_(std::move(zones)) {
    for (const Zone& z : zones_) domains_.push_back(z.domain);
  }
  std::string name() const override { return "rapl"; }
  Reading reading() const override { return Reading::Energy; }
  const std::vector<Domain>& domains() const override { return domains_; }
  void read(std::vector<double>& values) override {
    values.resize(zones_.size());
    for (std::size_t i = 0; i < zones_.size(); ++i) {
      Zone& z = zones_[i];
      std::uint64_t now = 0;
      if (!read_u64(z.dir / "energy_uj", now))
        fail("energy: cannot read {} any more", (z.dir / "energy_uj").string());
      // One wrap between two readings at most: readings come every few hundred ms and the
      // counters take minutes to wrap even at full power.
      const std::uint64_t delta = now >= z.last ? now - z.last : now + (z.range - z.last);
      z.joules += static_cast<double>(delta) * 1e-6;
      z.last = now;
      values[i] = z.joules;
    }
  }

 private:
  std::vector<Zone> zones_;
  std::vector<Domain> domains_;
};

}  // namespace

std::unique_ptr<EnergyMeter> open_rapl(const fs::path& root, std::string& why) {
  if (!is_dir(root)) {
    why = fmt::format("no powercap tree at {}", root.string());
    return nullptr;
  }
  std::error_code ec;  // a zone that vanishes while listed is left out
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(root, ec))
    if (zone_package(entry.path().filename().string())) dirs.push_back(entry.path());
  // Sub-zones also appear inside their package's folder (the real sysfs layout links them).
  for (const fs::path& d : std::vector<fs::path>(dirs))
    for (const auto& entry : fs::directory_iterator(d, ec))
      if (zone_package(entry.path().filename().string())) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end(), [](const fs::path& a, const fs::path& b) {
    return a.filename().string() < b.filename().string();
  });
  dirs.erase(std::unique(dirs.begin(), dirs.end(),
                         [](const fs::path& a, const fs::path& b) { return a.filename() == b.filename(); }),
             dirs.end());
  if (dirs.empty()) {
    why = fmt::format("no RAPL domains under {}", root.string());
    return nullptr;
  }
  std::vector<Zone> zones;
  int unreadable = 0;
  for (const fs::path& d : dirs) {
    const int package = *zone_package(d.filename().string());
    const std::string name = read_line(d / "name");
    Zone z;
    z.dir = d;
    z.domain.index = package;
    if (name.rfind("package", 0) == 0) {
      z.domain.kind = DeviceKind::CpuPackage;
      z.domain.name = name;  // "package-0"
    } else if (name == "dram") {
      z.domain.kind = DeviceKind::Dram;
      z.domain.name = fmt::format("dram-{}", package);
    } else if (name == "core") {
      z.domain.kind = DeviceKind::CpuCore;
      z.domain.name = fmt::format("core-{}", package);
    } else if (name == "uncore") {
      z.domain.kind = DeviceKind::Uncore;
      z.domain.name = fmt::format("uncore-{}", package);
    } else if (name == "psys") {
      z.domain.kind = DeviceKind::Platform;
      z.domain.name = "psys";
    } else {
      continue;  // a domain this version does not know
    }
    if (!read_u64(d / "energy_uj", z.last) || !read_u64(d / "max_energy_range_uj", z.range)) {
      ++unreadable;
      continue;
    }
    zones.push_back(std::move(z));
  }
  if (zones.empty()) {
    why = unreadable > 0
              ? fmt::format("the RAPL counters under {} are readable by root only (Linux 5.10 "
                            "and later); run as root, or make them readable: chmod a+r "
                            "{}/intel-rapl:*/energy_uj {}/intel-rapl:*/intel-rapl:*/energy_uj",
                            root.string(), root.string(), root.string())
              : fmt::format("no RAPL domain under {} that telar knows", root.string());
    return nullptr;
  }
  return std::make_unique<RaplMeter>(std::move(zones));
}

}  // namespace telar::energy
