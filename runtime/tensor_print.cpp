// Tensor::str(): torch's printing (torch/_tensor_str.py with its default options), then
// einexpr's ", shape=[...], dtype=...)" suffix. As torch: floats that are all integers print
// as "2.", others with 4 decimals, or as "1.0012e-08" when the nonzero magnitudes span more
// than 1000x, exceed 1e8 or fall below 1e-4; every element is padded to one width; rows
// wrap at 80 columns; tensors of more than 1000 elements show 3 items at each edge.
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "einexpr/runtime/tensor.hpp"

namespace einexpr {

namespace {

constexpr int edge_items = 3;
constexpr std::int64_t summarize_threshold = 1000;
constexpr std::size_t line_width = 80;

// More shown elements than this (a broadcast view of 2^64 elements in 64 dims of 2, say)
// print as "tensor(..., shape=...)": printing them would never end.
constexpr std::int64_t max_shown = std::int64_t{1} << 20;

// The indices shown along each dim: all of them, or the first and last edge_items (made
// directly: a broadcast view may be 2^62 long).
std::vector<std::vector<std::int64_t>> shown_indices(const Shape& shape, bool summarize) {
  std::vector<std::vector<std::int64_t>> shown(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const bool cut = summarize && shape[d] > 2 * edge_items;
    for (std::int64_t i = 0; i < (cut ? edge_items : shape[d]); ++i) shown[d].push_back(i);
    if (cut)
      for (std::int64_t i = shape[d] - edge_items; i < shape[d]; ++i) shown[d].push_back(i);
  }
  return shown;
}

// The product of `lengths`, or `limit` + 1 once it passes `limit` (never overflows).
std::int64_t product_up_to(const std::vector<std::int64_t>& lengths, std::int64_t limit) {
  std::int64_t p = 1;
  for (std::int64_t n : lengths) {
    if (n == 0) return 0;
    if (p > limit / n) return limit + 1;
    p *= n;
  }
  return p;
}

std::string printf_str(const char* format, int width, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, width, v);
  return buf;
}

// torch's _Formatter: one mode and one width for every element printed.
class Formatter {
 public:
  explicit Formatter(DType dtype) : floating_(is_floating(dtype)) {}

  void add_integer(std::int64_t v) { width_ = std::max(width_, std::to_string(v).size()); }
  void add_boolean(bool v) { width_ = std::max<std::size_t>(width_, v ? 4 : 5); }
  void add_float(double v) {
    if (!std::isfinite(v) || v == 0) return;
    finite_.push_back(v);
  }

  // Chooses the mode and width once every float was added.
  void finish() {
    if (!floating_ || finite_.empty()) return;
    double lo = INFINITY, hi = 0;
    for (double v : finite_) {
      lo = std::min(lo, std::fabs(v));
      hi = std::max(hi, std::fabs(v));
      if (v != std::ceil(v)) int_mode_ = false;
    }
    sci_mode_ = hi / lo > 1000.0 || hi > 1.0e8 || (!int_mode_ && lo < 1.0e-4);
    for (double v : finite_) width_ = std::max(width_, format_plain(v).size());
  }

  std::size_t width() const { return width_; }

  std::string integer(std::int64_t v) const { return pad(std::to_string(v)); }
  std::string boolean(bool v) const { return pad(v ? "True" : "False"); }
  std::string floating(double v) const {
    if (std::isnan(v)) return pad("nan");
    if (std::isinf(v)) return pad(v > 0 ? "inf" : "-inf");
    return pad(format_plain(v));
  }

 private:
  std::string format_plain(double v) const {
    if (sci_mode_) return printf_str("%.*e", 4, v);
    if (int_mode_) return printf_str("%.*f", 0, v) + ".";
    return printf_str("%.*f", 4, v);
  }
  std::string pad(std::string s) const {
    return s.size() < width_ ? std::string(width_ - s.size(), ' ') + s : s;
  }

  bool floating_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  std::size_t width_ = 1;
  std::vector<double> finite_;
};

struct Printer {
  const Tensor& t;
  std::vector<std::vector<std::int64_t>> shown;
  bool summarize;
  Formatter formatter;

  const std::byte* element(const std::vector<std::int64_t>& index) const {
    std::int64_t off = t.storage_offset();
    for (std::size_t k = 0; k < index.size(); ++k) off += index[k] * t.strides()[k];
    return t.storage()->data() + off * static_cast<std::int64_t>(t.element_size());
  }

  // Adds one element to the formatter's choice of mode and width.
  void measure_value(const std::vector<std::int64_t>& index) {
    const std::byte* p = element(index);
    if (is_integer(t.dtype())) {
      std::int64_t v = 0;
      convert(p, t.dtype(), &v, DType::i64, 1);  // exact, unlike a double beyond 2^53
      formatter.add_integer(v);
    } else if (t.dtype() == DType::boolean) {
      formatter.add_boolean(load_as_double(p, t.dtype()) != 0);
    } else {
      formatter.add_float(load_as_double(p, t.dtype()));
    }
  }

  std::string value(const std::vector<std::int64_t>& index) const {
    const std::byte* p = element(index);
    if (is_integer(t.dtype())) {
      std::int64_t v = 0;
      convert(p, t.dtype(), &v, DType::i64, 1);
      return formatter.integer(v);
    }
    if (t.dtype() == DType::boolean) return formatter.boolean(load_as_double(p, t.dtype()) != 0);
    return formatter.floating(load_as_double(p, t.dtype()));
  }

  // Visits every shown element once to choose the format.
  void measure(std::vector<std::int64_t>& index, std::size_t d) {
    if (d == index.size()) {
      measure_value(index);
      return;
    }
    for (std::int64_t i : shown[d]) {
      index[d] = i;
      measure(index, d + 1);
    }
  }

  bool cut(std::size_t d, std::size_t k) const {  // "..." goes before shown[d][k]
    return summarize && t.shape()[d] > 2 * edge_items && k == static_cast<std::size_t>(edge_items);
  }

  std::string vector_str(std::vector<std::int64_t>& index, std::size_t d, std::size_t indent) {
    std::vector<std::string> data;
    for (std::size_t k = 0; k < shown[d].size(); ++k) {
      if (cut(d, k)) data.push_back(" ...");
      index[d] = shown[d][k];
      data.push_back(value(index));
    }
    const std::size_t per_line = std::max<std::size_t>(
        1, indent >= line_width ? 1 : (line_width - indent) / (formatter.width() + 2));
    std::string out = "[";
    for (std::size_t k = 0; k < data.size(); ++k) {
      if (k > 0) out += k % per_line == 0 ? ",\n" + std::string(indent + 1, ' ') : ", ";
      out += data[k];
    }
    return out + "]";
  }

  std::string tensor_str(std::vector<std::int64_t>& index, std::size_t d, std::size_t indent) {
    if (d + 1 == index.size()) return vector_str(index, d, indent);
    const std::string separator = "," + std::string(index.size() - d - 1, '\n') + std::string(indent + 1, ' ');
    std::string out = "[";
    for (std::size_t k = 0; k < shown[d].size(); ++k) {
      if (k > 0) out += separator;
      if (cut(d, k)) out += "..." + separator;
      index[d] = shown[d][k];
      out += tensor_str(index, d + 1, indent + 1);
    }
    return out + "]";
  }
};

}  // namespace

std::string Tensor::str() const {
  if (!storage_) return "tensor(undefined)";
  if (!device().is_cpu()) return to(Device::cpu()).str() + " on " + device().str();
  const std::string suffix = ", shape=" + shape_str(shape()) + ", dtype=" + std::string(name(dtype_)) + ")";
  const std::int64_t n = product_up_to(shape(), summarize_threshold);  // numel() may overflow
  if (n == 0) return "tensor([]" + suffix;
  const bool summarize = n > summarize_threshold;
  Printer printer{*this, shown_indices(shape(), summarize), summarize, Formatter(dtype_)};
  std::vector<std::int64_t> sizes;
  for (const auto& s : printer.shown) sizes.push_back(static_cast<std::int64_t>(s.size()));
  if (product_up_to(sizes, max_shown) > max_shown) return "tensor(..." + suffix;
  std::vector<std::int64_t> index(static_cast<std::size_t>(dim()), 0);
  printer.measure(index, 0);
  printer.formatter.finish();
  const std::string body = dim() == 0 ? printer.value(index) : printer.tensor_str(index, 0, 7);
  return "tensor(" + body + suffix;
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.str(); }

}  // namespace einexpr
