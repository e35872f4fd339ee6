#pragma once
// The names of an enum's values in one table, read both ways: to print a value and to parse
// what a user typed. The table lists every value from the first to `Last` in declaration order
// (value i at index i); a missing or empty name fails to compile:
//
//   enum class Domain { Auto, User, Kernel, All };
//   inline constexpr EnumNames<Domain, Domain::All> kDomainNames{{"auto", "user", "kernel",
//   "all"}}; kDomainNames(Domain::User)          -> "user" kDomainNames.find("kernel")         ->
//   Domain::Kernel kDomainNames.choices()              -> "auto, user, kernel or all"
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace telar {

template <typename E, E Last>
class EnumNames {
 public:
  static constexpr std::size_t kCount = static_cast<std::size_t>(Last) + 1;

  // consteval: a table with an empty name stops the compilation at the throw.
  consteval EnumNames(std::array<std::string_view, kCount> names) : names_(names) {
    for (std::string_view name : names_)
      if (name.empty()) throw "every value of the enum needs a name";
  }

  constexpr std::string_view operator()(E value) const {
    const auto i = static_cast<std::size_t>(value);
    return i < kCount ? names_[i] : std::string_view("?");
  }

  constexpr std::optional<E> find(std::string_view text) const {
    for (std::size_t i = 0; i < kCount; ++i)
      if (names_[i] == text) return static_cast<E>(i);
    return std::nullopt;
  }

  // "a, b or c", for the error that lists what is accepted.
  std::string choices() const {
    std::string out;
    for (std::size_t i = 0; i < kCount; ++i) {
      if (i > 0) out += i + 1 == kCount ? " or " : ", ";
      out += names_[i];
    }
    return out;
  }

  constexpr const std::array<std::string_view, kCount>& names() const { return names_; }

 private:
  std::array<std::string_view, kCount> names_;
};

}  // namespace telar
