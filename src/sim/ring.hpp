#pragma once
// A growable FIFO on a power-of-two circular array: the queues inside the simulated fabric
// (multiplier, adder, bus and port FIFOs) without per-element allocation.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace telar::sim {

template <typename T>
class Ring {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  void clear() { head_ = size_ = 0; }

  [[gnu::always_inline]] void push(const T& value) {
    if (size_ == buf_.size()) [[unlikely]]
      grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = value;
    ++size_;
  }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  const T& at(std::size_t i) const { return buf_[(head_ + i) & (buf_.size() - 1)]; }
  T& at(std::size_t i) { return buf_[(head_ + i) & (buf_.size() - 1)]; }
  [[gnu::always_inline]] T pop() {
    T value = std::move(buf_[head_]);
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
    return value;
  }
  // Moves the front to the back (a circular register file, like the weight FIFO of a
  // multiplier that reuses its weights fold after fold).
  void rotate() {
    T value = pop();
    push(value);
  }

 private:
  [[gnu::noinline]] void grow() {
    std::vector<T> bigger(buf_.empty() ? 4 : buf_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i)
      bigger[i] = std::move(buf_[(head_ + i) & (buf_.size() - 1)]);
    buf_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<T> buf_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace telar::sim
