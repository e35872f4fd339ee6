#pragma once
// Every event telar knows, and whether it can be counted on this machine (telar prof list).
#include <string>
#include <vector>

#include "prof/counting_options.hpp"

namespace telar::prof {

struct CatalogEntry {
  std::string name;
  std::string kind;  // "hardware", "software", "cache", "native (PMU)", "papi"
  bool countable = false;
  std::string reason;  // why not, when !countable
  std::string description;
};

struct CatalogOptions {
  bool all_pmus = false;  // also list the native events of PMU models this machine lacks
  Domain domain = Domain::User;
};

std::vector<CatalogEntry> event_catalog(const CatalogOptions& options = {});

}  // namespace telar::prof
