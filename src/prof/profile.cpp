#include "prof/profile.hpp"

namespace telar::prof {

std::int64_t Profile::total(const ScopeRecord& r, std::size_t event) const {
  std::int64_t sum = 0;
  for (std::size_t c = 0; c < cpus.size(); ++c) sum += count(r, c, event).value;
  return sum;
}

std::vector<std::size_t> Profile::available_events() const {
  std::vector<std::size_t> out;
  for (std::size_t e = 0; e < events.size(); ++e)
    if (events[e].available) out.push_back(e);
  return out;
}

int Profile::find_canonical(const std::string& canonical) const {
  for (std::size_t e = 0; e < events.size(); ++e)
    if (events[e].available && events[e].canonical == canonical) return static_cast<int>(e);
  return -1;
}

std::vector<const ScopeRecord*> Profile::of_kind(ScopeKind kind) const {
  std::vector<const ScopeRecord*> out;
  for (const auto& r : records)
    if (r.kind == kind) out.push_back(&r);
  return out;
}

std::vector<std::size_t> Profile::children(std::size_t i) const {
  std::vector<std::size_t> out;
  for (std::size_t j = 0; j < records.size(); ++j)
    if (records[j].parent == static_cast<int>(i)) out.push_back(j);
  return out;
}

}  // namespace telar::prof
