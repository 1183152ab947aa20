// einexpr_order_bench: the contraction-order search on given problems, timed in process.
// Reads one problem a line on stdin, "label|0 5 7,3 4,1|0 1|3 4 5 6" (each operand's axis
// ids, the output's ids, every id's length), and prints one JSON object a line with the
// path's FLOPs (exact digits), largest intermediate, the search that ran, whether it is
// proven optimal, and the median and minimum planning time over --repeat runs, as wall
// time and as this thread's CPU time (the machine may be shared).
// bench/order_compare.py writes the problems, runs numpy beside it and prints the table.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "order/order.hpp"

namespace {

using einexpr::order::Options;
using einexpr::order::Path;
using einexpr::order::Problem;

std::vector<int> ints(const std::string& s) {
  std::vector<int> v;
  std::istringstream in(s);
  for (int x = 0; in >> x;) v.push_back(x);
  return v;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) parts.push_back(part);
  if (!s.empty() && s.back() == sep) parts.emplace_back();
  return parts;
}

Problem parse(const std::vector<std::string>& f) {
  Problem p;
  for (const std::string& op : split(f.at(1), ',')) p.operands.push_back(ints(op));
  p.output = ints(f.at(2));
  for (int l : ints(f.at(3))) p.lengths.push_back(l);
  return p;
}

/// This thread's CPU time: what the search itself took, whatever else the machine runs.
double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '"' ? std::string("\\\"") : std::string(1, c);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 5;
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else if (a == "--greedy") options.method = einexpr::ContractionOrder::greedy;
    else if (a == "--heuristic") options.exact_limit = 0;
    else if (a == "--exact-limit" && i + 1 < argc) options.exact_limit = std::atoi(argv[++i]);
    else if (a == "--exact-work" && i + 1 < argc) options.exact_work = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--budget" && i + 1 < argc) options.time_budget_s = std::atof(argv[++i]);
    else {
      std::cerr << "usage: einexpr_order_bench [--repeat N] [--greedy | --heuristic | --exact-limit N] [--exact-work N] [--budget S] < problems\n";
      return 2;
    }
  }
  for (std::string line; std::getline(std::cin, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> f = split(line, '|');
    const Problem p = parse(f);
    std::vector<double> ms, cpu;
    Path path;
    for (int r = 0; r < repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = cpu_ms();
      path = einexpr::order::find_path(p, options);
      cpu.push_back(cpu_ms() - c0);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    std::sort(cpu.begin(), cpu.end());
    std::cout << "{\"label\": \"" << escape(f.at(0)) << "\", \"n\": " << p.operands.size() << ", \"flops\": \""
              << path.flops.str() << "\", \"largest\": \"" << path.largest_intermediate.str() << "\", \"method\": \""
              << escape(path.method) << "\", \"exact\": " << (path.exact ? "true" : "false")
              << ", \"median_ms\": " << ms[ms.size() / 2] << ", \"min_ms\": " << ms.front()
              << ", \"cpu_median_ms\": " << cpu[cpu.size() / 2] << ", \"cpu_min_ms\": " << cpu.front() << "}" << std::endl;
  }
  return 0;
}
