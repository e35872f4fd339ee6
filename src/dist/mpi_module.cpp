// libtelar_mpi.so: one worker per MPI process over MPI_COMM_WORLD, built when CMake finds MPI
// (TELAR_HAVE_MPI) and loaded by mpi_communicator.cpp on first use.
#include <fmt/format.h>
#include <mpi.h>

#include <cstdio>
#include <limits>

#include "core/module_entry.hpp"
#include "dist/communicator_modules.hpp"

namespace telar::dist {
namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  fail("MPI {} failed: {}", what, std::string(text, static_cast<std::size_t>(len)));
}

// MPI counts are ints: long vectors go in pieces.
constexpr std::size_t kMaxCount = static_cast<std::size_t>(std::numeric_limits<int>::max());

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "init");
      if (provided < MPI_THREAD_SERIALIZED)
        fail(
            "this MPI library does not allow calls from a helper thread (thread level {}); "
            "use an MPI built with thread support",
            provided);
      owns_mpi_ = true;
    }
    // Errors come back as codes (turned into telar::Error) instead of ending the job silently.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiCommunicator() override {
    if (owns_mpi_) {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
    }
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string kind() const override { return "mpi"; }

  void all_reduce_sum(std::span<float> values) override {
    reduce(values.data(), values.size(), MPI_FLOAT);
  }
  void all_reduce_sum(std::span<double> values) override {
    reduce(values.data(), values.size(), MPI_DOUBLE);
  }

  void broadcast(std::span<std::byte> bytes, int root) override {
    for (std::size_t done = 0; done < bytes.size();) {
      const std::size_t n = std::min(kMaxCount, bytes.size() - done);
      check(MPI_Bcast(bytes.data() + done, static_cast<int>(n), MPI_BYTE, root, MPI_COMM_WORLD),
            "broadcast");
      done += n;
    }
  }

  void abort(const std::string& reason) override {
    std::fprintf(stderr, "telar: rank %d of %d ends the MPI job: %s\n", rank_, size_,
                 reason.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

 private:
  template <typename T>
  void reduce(T* data, std::size_t count, MPI_Datatype type) {
    for (std::size_t done = 0; done < count;) {
      const std::size_t n = std::min(kMaxCount, count - done);
      check(MPI_Allreduce(MPI_IN_PLACE, data + done, static_cast<int>(n), type, MPI_SUM,
                          MPI_COMM_WORLD),
            "all-reduce");
      done += n;
    }
  }

  int rank_ = 0, size_ = 1;
  bool owns_mpi_ = false;
};

std::unique_ptr<Communicator> open_world() {
  return std::make_unique<MpiCommunicator>();
}

}  // namespace
}  // namespace telar::dist

TELAR_MODULE_ENTRY(telar::dist::MpiModuleTable{&telar::dist::open_world})
