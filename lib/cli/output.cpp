// JSON with exact integers, aligned tables and numbers with units (see output.hpp).
#include "output.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace einexpr::cli {

// ---- JsonWriter ----

void JsonWriter::newline() { os_ << '\n' << std::string(2 * stack_.size(), ' '); }

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) return;
  if (stack_.back().object) throw InternalError("JSON: a value in an object needs a key", __FILE__, __LINE__);
  if (stack_.back().count++ > 0) os_ << ',';
  newline();
}

void JsonWriter::open(char bracket, bool object) {
  before_value();
  os_ << bracket;
  stack_.push_back({object, 0});
}

void JsonWriter::close(char bracket) {
  const bool empty = stack_.back().count == 0;
  stack_.pop_back();
  if (!empty) newline();
  os_ << bracket;
  if (stack_.empty()) os_ << '\n';
}

JsonWriter& JsonWriter::begin_object() {
  open('{', true);
  return *this;
}
JsonWriter& JsonWriter::end_object() {
  close('}');
  return *this;
}
JsonWriter& JsonWriter::begin_array() {
  open('[', false);
  return *this;
}
JsonWriter& JsonWriter::end_array() {
  close(']');
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  if (stack_.empty() || !stack_.back().object) throw InternalError("JSON: a key outside an object", __FILE__, __LINE__);
  if (stack_.back().count++ > 0) os_ << ',';
  newline();
  os_ << nlohmann::json(std::string(name)).dump() << ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  os_ << nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  before_value();
  os_ << nlohmann::json(number).dump();  // shortest round trip; inf and nan -> null
  return *this;
}

JsonWriter& JsonWriter::value(std::int64_t number) {
  before_value();
  os_ << number;
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  os_ << (flag ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::value(const Count& count) {
  before_value();
  os_ << count.str();
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  os_ << "null";
  return *this;
}

// ---- Table ----

namespace {

std::size_t display_width(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

Table::Table(std::vector<std::string> header, std::string align)
    : header_(std::move(header)), align_(std::move(align)) {}

void Table::add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

std::string Table::str(int indent) const {
  std::vector<std::vector<std::string>> all;
  if (!header_.empty()) all.push_back(header_);
  all.insert(all.end(), rows_.begin(), rows_.end());
  std::vector<std::size_t> width;
  for (const auto& row : all)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.resize(c + 1, 0);
      width[c] = std::max(width[c], display_width(row[c]));
    }
  std::string out;
  for (const auto& row : all) {
    std::string line(static_cast<std::size_t>(indent), ' ');
    for (std::size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - display_width(row[c]), ' ');
      const bool right = c < align_.size() && align_[c] == 'r';
      line += right ? pad + row[c] : row[c] + pad;
      if (c + 1 < row.size()) line += "  ";
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + '\n';
  }
  return out;
}

void add_quantity(Table& table, const std::string& label, const std::string& quantity, const std::string& note) {
  const std::size_t space = quantity.find(' ');
  table.add({label, quantity.substr(0, space), space == std::string::npos ? "" : quantity.substr(space + 1), note});
}

// ---- units ----

std::string si(double value, std::string_view unit) {
  static const char* const prefixes[] = {"", "k", "M", "G", "T", "P", "E", "Z", "Y"};
  int p = 0;
  while (std::fabs(value) >= 1000 && p < 8) {
    value /= 1000;
    ++p;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g %s", value, prefixes[p]);
  return buf + std::string(unit);
}

std::string iec(double bytes) {
  static const char* const prefixes[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
  int p = 0;
  while (std::fabs(bytes) >= 1024 && p < 8) {
    bytes /= 1024;
    ++p;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, p == 0 ? "%.0f %s" : "%.2f %s", bytes, prefixes[p]);
  return buf;
}

std::string seconds(double s) {
  static const char* const units[] = {"s", "ms", "µs", "ns", "ps"};
  int u = 0;
  while (s != 0 && std::fabs(s) < 1 && u < 4) {
    s *= 1000;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g %s", s, units[u]);
  return buf;
}

std::string num(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, value);
  return buf;
}

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string lengths_text(const AxisLengths& lengths) {
  std::string out;
  for (const auto& [name, len] : lengths) out += (out.empty() ? "" : " ") + name + "=" + std::to_string(len);
  return out;
}

}  // namespace einexpr::cli
