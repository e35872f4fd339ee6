#pragma once
// Helpers shared by the train tests: fresh temporary directories and checks on error text.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>

#include "core/error.hpp"

namespace telar::train::testing {

// A new empty directory under the system temp dir, removed when the object goes away.
class TempDir {
 public:
  explicit TempDir(const std::string& tag)
      : path_(std::filesystem::temp_directory_path() /
              ("telar_train_" + tag + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Runs `action`, expects a telar::Error on one line whose message contains every fragment,
// and returns the message (empty if none was thrown).
inline std::string expect_error(const std::function<void()>& action,
                                std::initializer_list<std::string> fragments) {
  try {
    action();
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "multi-line message: " << message;
    for (const std::string& fragment : fragments)
      EXPECT_NE(message.find(fragment), std::string::npos)
          << "message lacks '" << fragment << "': " << message;
    return message;
  }
  ADD_FAILURE() << "expected a telar::Error";
  return {};
}

}  // namespace telar::train::testing
