#pragma once
// InlineVector<T, N>: a vector whose first N elements live inside it, so that the short lists
// of one call (a program's buffers, its temporaries) cost no allocation. Past N it moves
// everything to a std::vector. Only what Program::run and the kernels use: push_back,
// resize, reserve, clear, size, [], at, begin/end; moving one leaves it empty.
#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace einexpr {

template <class T, std::size_t N>
class InlineVector {
 public:
  InlineVector() = default;
  InlineVector(std::initializer_list<T> values) {
    for (const T& v : values) push_back(v);
  }
  InlineVector(const InlineVector&) = default;
  InlineVector& operator=(const InlineVector&) = default;
  /// A moved-from vector is empty (the implicit move would keep its size over moved-from
  /// or, once on the heap, missing elements).
  InlineVector(InlineVector&& other) noexcept(std::is_nothrow_move_constructible_v<T>)
      : inline_(std::move(other.inline_)), heap_(std::move(other.heap_)), size_(other.size_) {
    other.clear();
  }
  InlineVector& operator=(InlineVector&& other) noexcept(std::is_nothrow_move_assignable_v<T>) {
    if (this != &other) {
      inline_ = std::move(other.inline_);
      heap_ = std::move(other.heap_);
      size_ = other.size_;
      other.clear();
    }
    return *this;
  }
  ~InlineVector() = default;

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  T* data() noexcept { return on_heap() ? heap_.data() : inline_.data(); }
  const T* data() const noexcept { return on_heap() ? heap_.data() : inline_.data(); }
  T* begin() noexcept { return data(); }
  T* end() noexcept { return data() + size_; }
  const T* begin() const noexcept { return data(); }
  const T* end() const noexcept { return data() + size_; }

  T& operator[](std::size_t i) noexcept { return data()[i]; }
  const T& operator[](std::size_t i) const noexcept { return data()[i]; }
  const T& at(std::size_t i) const {
    if (i >= size_) throw std::out_of_range("InlineVector::at: index " + std::to_string(i) + " of " + std::to_string(size_));
    return data()[i];
  }

  void reserve(std::size_t n) {
    if (n > N) spill(n);
  }
  void push_back(T value) {
    if (size_ == N) spill(N + 1);
    if (on_heap())
      heap_.push_back(std::move(value));
    else
      inline_[size_] = std::move(value);
    ++size_;
  }
  /// Empty, inline again; the inline elements are reset to T{} (so a Tensor lets go).
  void clear() noexcept(std::is_nothrow_move_assignable_v<T>) {
    for (T& v : inline_) v = T{};
    heap_ = std::vector<T>();
    size_ = 0;
  }
  /// Grows with default-constructed elements (shrinking is not needed here).
  void resize(std::size_t n) {
    while (size_ < n) push_back(T{});
  }

 private:
  bool on_heap() const noexcept { return heap_.capacity() != 0; }
  void spill(std::size_t capacity) {
    if (on_heap()) {
      heap_.reserve(capacity);
      return;
    }
    heap_.reserve(std::max(capacity, 2 * N));
    for (std::size_t i = 0; i < size_; ++i) heap_.push_back(std::move(inline_[i]));
  }

  std::array<T, N> inline_{};
  std::vector<T> heap_;
  std::size_t size_ = 0;
};

}  // namespace einexpr
