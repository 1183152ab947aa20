#pragma once
// LruCache<K, V>: a bounded, thread-safe least-recently-used cache of immutable values.
// This is the plan cache without the plans; ops.cpp keys it by everything a plan depends on.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace einexpr {

struct CacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t evictions = 0;
  std::size_t size = 0;
  std::size_t capacity = 0;
};

template <class K, class V, class Hash = std::hash<K>, class Eq = std::equal_to<K>>
class LruCache {
 public:
  using Value = std::shared_ptr<const V>;

  explicit LruCache(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  /// The cached value, or nullptr (counts a hit or a miss).
  Value find(const K& key) {
    std::lock_guard lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) {
      ++stats_.misses;
      return nullptr;
    }
    ++stats_.hits;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }

  /// The cached value, or `make()`'s, inserted. `make` runs without the lock held, so
  /// two threads may both build a value for one key; the first inserted wins and both
  /// callers get it. If `make` throws, nothing is inserted.
  template <class Make>
  Value get_or_create(const K& key, Make&& make) {
    if (Value v = find(key)) return v;
    Value made = std::make_shared<const V>(make());
    return insert(key, std::move(made));
  }

  Value insert(const K& key, Value value) {
    std::lock_guard lock(mutex_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return it->second->second;
    }
    order_.emplace_front(key, std::move(value));
    index_.emplace(order_.front().first, order_.begin());
    while (index_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
      ++stats_.evictions;
    }
    return order_.front().second;
  }

  void clear() {
    std::lock_guard lock(mutex_);
    index_.clear();
    order_.clear();
  }

  CacheStats stats() const {
    std::lock_guard lock(mutex_);
    CacheStats s = stats_;
    s.size = index_.size();
    s.capacity = capacity_;
    return s;
  }

 private:
  using Entry = std::pair<K, Value>;
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::list<Entry> order_;  // most recently used first
  std::unordered_map<K, typename std::list<Entry>::iterator, Hash, Eq> index_;
  CacheStats stats_;
};

}  // namespace einexpr
