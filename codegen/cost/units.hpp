#pragma once
// Numbers with units for people (private to codegen): SI prefixes for FLOPs and rates
// ("33.55 MFLOP", "989.5 TFLOP/s", "3.35 TB/s"), binary ones for sizes ("2.00 MiB").
#include <cmath>
#include <cstdio>
#include <string>

namespace einexpr::detail {

/// value with an SI prefix (k M G T P E) and `unit`: si(33554432, "FLOP") = "33.55 MFLOP".
inline std::string si(double value, const char* unit) {
  static const char* const prefixes[] = {"", "k", "M", "G", "T", "P", "E", "Z"};
  int p = 0;
  while (std::fabs(value) >= 1000 && p < 7) {
    value /= 1000;
    ++p;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, p == 0 ? "%.0f %s%s" : "%.4g %s%s", value, prefixes[p], unit);
  return buf;
}

/// bytes with a binary prefix: iec(2097152) = "2.00 MiB"; below 1 KiB, "512 B".
inline std::string iec(double bytes) {
  static const char* const prefixes[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB"};
  int p = 0;
  while (std::fabs(bytes) >= 1024 && p < 7) {
    bytes /= 1024;
    ++p;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, p == 0 ? "%.0f %s" : "%.2f %s", bytes, prefixes[p]);
  return buf;
}

/// A plain number with `digits` significant digits: "295.4".
inline std::string num(double value, int digits = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, value);
  return buf;
}

}  // namespace einexpr::detail
