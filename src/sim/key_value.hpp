#pragma once
// The small TOML subset STONNE's `.cfg` and tile files use: `[Section]` headers, `key=value`
// lines (integers, floats, booleans, "strings"), `#` comments. Keys may contain an apostrophe
// (`T_X'=1` in tile files), which strict TOML parsers reject; that is why this reader exists.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace telar::sim {

class KeyValueFile {
 public:
  // `origin` names the file in error messages.
  static KeyValueFile parse(std::string_view text, std::string_view origin);

  // Refuses a key not in `known` (qualified names), naming its line and the nearest known key;
  // `what` says what the file is ("a hardware .cfg").
  void require_known(const std::vector<std::string>& known, std::string_view what) const;
  bool empty() const { return values_.empty(); }

  // Qualified lookups: "MSNetwork.ms_size"; top-level keys have no section part.
  bool has(const std::string& key) const { return values_.count(key) > 0; }
  std::optional<long long> get_int(const std::string& key) const;
  std::optional<std::string> get_string(const std::string& key) const;
  // Every key in file order is not kept; these are the keys in sorted order.
  const std::map<std::string, std::string>& raw() const { return values_; }
  const std::string& origin() const { return origin_; }

 private:
  std::map<std::string, std::string> values_;  // raw value text, quotes removed for strings
  std::map<std::string, bool> quoted_;
  std::map<std::string, int> lines_;  // where each key is
  std::string origin_;
};

}  // namespace telar::sim
