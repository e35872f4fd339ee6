#include "prof/permissions.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/parse.hpp"

namespace telar::prof {

namespace {
constexpr EnumNames<CountingMode, CountingMode::PerCpu> kModeNames{{"per-thread", "per-cpu"}};
constexpr EnumNames<Domain, Domain::All> kDomainNames{{"auto", "user", "kernel", "all"}};
}  // namespace

std::string_view mode_name(CountingMode mode) {
  return kModeNames(mode);
}

std::string_view domain_name(Domain domain) {
  return kDomainNames(domain);
}

Domain parse_domain(std::string_view text, std::string_view what) {
  const std::string s{trim(text)};
  if (s == "u") return Domain::User;
  if (s == "k") return Domain::Kernel;
  if (s == "user,kernel" || s == "uk") return Domain::All;
  if (auto domain = kDomainNames.find(s)) return *domain;
  fail("{}: unknown domain '{}'; choose {}", what, s, kDomainNames.choices());
}

int read_paranoid(const PermissionProbe& probe) {
  std::ifstream in(probe.paranoid_file);
  require(static_cast<bool>(in),
          "cannot read {} ({}): this kernel offers no perf events, so no counter can be opened",
          probe.paranoid_file.string(), std::strerror(errno));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return static_cast<int>(parse_int(text, probe.paranoid_file.string()));
}

bool has_perf_privilege(const PermissionProbe& probe) {
  if (probe.privileged) return *probe.privileged;
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    const std::uint64_t caps = std::stoull(line.substr(7), nullptr, 16);
    constexpr int kCapSysAdmin = 21, kCapPerfmon = 38;
    return ((caps >> kCapSysAdmin) & 1u) || ((caps >> kCapPerfmon) & 1u);
  }
  return false;
}

int paranoid_needed(CountingMode mode, Domain domain) {
  if (mode == CountingMode::PerCpu) return 0;
  return domain == Domain::User ? 2 : 1;
}

Domain effective_domain(CountingMode mode, Domain requested, const PermissionProbe& probe) {
  if (requested != Domain::Auto) return requested;
  if (has_perf_privilege(probe)) return Domain::All;
  return read_paranoid(probe) <= paranoid_needed(mode, Domain::All) ? Domain::All : Domain::User;
}

std::string permission_advice(CountingMode mode, Domain domain, int paranoid) {
  const int needed = paranoid_needed(mode, domain);
  std::string what =
      mode == CountingMode::PerCpu
          ? "per-CPU (system-wide) counting"
          : (domain == Domain::User
                 ? "per-thread counting of user code"
                 : fmt::format("per-thread counting of {} code",
                               domain == Domain::Kernel ? "kernel" : "user and kernel"));
  std::string alternative;
  if (mode == CountingMode::PerThread && domain != Domain::User && paranoid <= 2)
    alternative = "; or count user code only with --domain user";
  else if (mode == CountingMode::PerCpu && paranoid <= 2)
    alternative = "; or count this command's threads instead (leave out --cpus)";
  return fmt::format(
      "kernel.perf_event_paranoid is {}, but {} needs {} or lower: run `sudo sysctl -w "
      "kernel.perf_event_paranoid={}` (or give telar CAP_PERFMON){}",
      paranoid, what, needed, needed, alternative);
}

void check_permission(CountingMode mode, Domain domain, const PermissionProbe& probe) {
  const int paranoid = read_paranoid(probe);
  if (has_perf_privilege(probe)) return;
  if (paranoid > paranoid_needed(mode, domain))
    throw Error(permission_advice(mode, domain, paranoid));
}

}  // namespace telar::prof
