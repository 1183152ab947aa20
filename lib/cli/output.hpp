#pragma once
// What the tool prints: JSON whose integers stay exact however large (a Count is written
// as its decimal digits, never through a double or a 64-bit integer), aligned tables for
// people, and numbers with units (33.55 MFLOP, 1.25 MiB, 500.8 ns).
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "einexpr/einexpr.hpp"

namespace einexpr::cli {

/// A streaming JSON writer, pretty-printed with two-space indents. Strings are escaped
/// and doubles printed shortest-round-trip by nlohmann::json; non-finite doubles become
/// null; a Count is its exact decimal literal (valid JSON beyond 2^64).
class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& os) : os_(os) {}
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(double number);
  JsonWriter& value(std::int64_t number);
  JsonWriter& value(int number) { return value(static_cast<std::int64_t>(number)); }
  JsonWriter& value(bool flag);
  JsonWriter& value(const Count& count);
  JsonWriter& null();
  /// key(name).value(v)
  template <class T>
  JsonWriter& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

 private:
  struct Level {
    bool object;
    int count;
  };
  void before_value();
  void newline();
  void open(char bracket, bool object);
  void close(char bracket);
  std::ostream& os_;
  std::vector<Level> stack_;
  bool after_key_ = false;
};

/// An aligned text table: columns separated by two spaces, each left- or right-aligned
/// ('l' / 'r' in `align`), widths by displayed characters (UTF-8 aware), trailing
/// spaces trimmed. An empty header prints no header row.
class Table {
 public:
  Table(std::vector<std::string> header, std::string align);
  void add(std::vector<std::string> row);
  std::string str(int indent = 2) const;

 private:
  std::vector<std::string> header_;
  std::string align_;
  std::vector<std::vector<std::string>> rows_;
};

/// A row {label, number, unit, note} whose quantity ("33.55 MFLOP") is split at its
/// space, so that in a table aligned "lrll" the numbers line up and the units follow.
void add_quantity(Table& table, const std::string& label, const std::string& quantity, const std::string& note);

/// SI prefixes: si(33554432, "FLOP") = "33.55 MFLOP"; below 1000, the integer.
std::string si(double value, std::string_view unit);
/// Binary prefixes: iec(1310720) = "1.25 MiB"; below 1 KiB, "512 B".
std::string iec(double bytes);
/// A duration: "500.8 ns", "1.234 ms", "2.5 s".
std::string seconds(double s);
/// A plain number with `digits` significant digits: "295.4".
std::string num(double value, int digits = 4);
/// `decimals` digits after the point: fixed(1, 3) = "1.000".
std::string fixed(double value, int decimals);
/// "b=1024 d=256 k=64".
std::string lengths_text(const AxisLengths& lengths);

}  // namespace einexpr::cli
