// doc_runner [PAGE.md] [--print]: runs the API reference's C++ examples (all, or one
// page's) and compares what each prints with its "```output" block; exits 1 on the first
// page with a difference, printing both. --print prints each example's actual output
// instead, as docs/update_examples.py uses it to refresh the pages. A contraction order's
// search time (", 0.0133 ms)") differs from run to run: it is masked on both sides.
#include <regex>
#include <sstream>
#include <string_view>

#include "doc_examples.hpp"

namespace {

/// What `run` prints to std::cout (an exception is printed as "exception: ...").
std::string capture(void (*run)()) {
  std::ostringstream captured;
  std::streambuf* saved = std::cout.rdbuf(captured.rdbuf());
  try {
    run();
  } catch (const std::exception& e) {
    std::cout << "exception: " << e.what() << '\n';
  }
  std::cout.rdbuf(saved);
  return captured.str();
}

/// `text` with every search time ", 0.0133 ms)" written ", T ms)" (as the golden plan
/// tests compare notes: tests/codegen/support/search_time.hpp).
std::string without_search_time(const std::string& text) {
  static const std::regex time(R"(, [0-9][0-9.e+-]* ms\))");
  return std::regex_replace(text, time, ", T ms)");
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view page;
  bool print = false;
  for (int a = 1; a < argc; ++a) {
    const std::string_view arg = argv[a];
    if (arg == "--print") print = true;
    else page = arg;
  }
  int checked = 0, failed = 0;
  for (const DocExample& e : doc_examples) {
    if (!page.empty() && page != e.page) continue;
    const std::string got = capture(e.run);
    if (print) {
      std::cout << "@@ " << e.page << ":" << e.line << "\n" << got;
      continue;
    }
    ++checked;
    if (without_search_time(got) != without_search_time(e.output)) {
      ++failed;
      std::cout << e.page << ":" << e.line << ": the example printed\n"
                << got << "--- but its output block says\n"
                << e.output << "---\n";
    }
  }
  if (!print) std::cout << checked << " examples" << (page.empty() ? "" : " of ") << page << ", " << failed
                        << " differ\n";
  return failed == 0 && (print || checked > 0) ? 0 : 1;
}
