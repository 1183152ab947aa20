// A main() for the fuzz targets where libFuzzer is not linked (the default g++ build, CI):
//
//   fuzz_parse_replay [--mutate SECONDS] [--seed N] [--dict FILE] [--max-len N] PATH...
//
// Replays every file given (every file inside each directory given) through
// LLVMFuzzerTestOneInput, then, with --mutate, feeds it random mutations of those files
// (bit flips, interesting bytes, dictionary tokens, erasures, duplications, splices) until
// SECONDS have passed. It has no coverage feedback: it is a smoke test that keeps the entry
// points exercised in every build, not a replacement for scripts/fuzz.sh. A failing input
// is written to ./crash-<pid> and printed escaped before the process aborts.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::string g_current;        // the input being run, for the crash report
const char* g_name = nullptr;  // where it came from

void report_current() noexcept {
  char path[64];
  std::snprintf(path, sizeof path, "crash-%d", static_cast<int>(::getpid()));
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    const ssize_t written = ::write(fd, g_current.data(), g_current.size());
    (void)written;
    ::close(fd);
  }
  std::fprintf(stderr, "\n==== failing input (%s, %zu bytes, saved as %s):\n\"%s\"\n", g_name ? g_name : "mutated",
               g_current.size(), path, fuzz::escaped(g_current, 4000).c_str());
}

void on_signal(int sig) {
  report_current();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void on_terminate() {
  if (auto e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      std::fprintf(stderr, "\n==== uncaught exception: %s\n", x.what());
    } catch (...) {
      std::fprintf(stderr, "\n==== uncaught exception of unknown type\n");
    }
  }
  std::signal(SIGABRT, SIG_DFL);
  report_current();
  std::abort();
}

void run_one(const std::string& input, const char* name) {
  g_current = input;
  g_name = name;
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
}

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// libFuzzer's dictionary format: one "token" per line (optionally name="token"), with
/// \\, \" and \xAB escapes; '#' starts a comment.
std::vector<std::string> read_dict(const std::string& path) {
  std::vector<std::string> tokens;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const std::size_t open = line.find('"'), close = line.rfind('"');
    if (line.empty() || line[0] == '#' || open == std::string::npos || close <= open) continue;
    std::string t;
    for (std::size_t i = open + 1; i < close; ++i) {
      if (line[i] != '\\' || i + 1 >= close) {
        t += line[i];
      } else if (line[i + 1] == 'x' && i + 3 < close) {
        t += static_cast<char>(std::stoi(line.substr(i + 2, 2), nullptr, 16));
        i += 3;
      } else {
        t += line[++i];
      }
    }
    tokens.push_back(t);
  }
  return tokens;
}

struct Mutator {
  std::mt19937_64 rng;
  std::vector<std::string> dict;
  std::size_t max_len = 4200;

  std::size_t pick(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); }

  void mutate_once(std::string& s, const std::vector<std::string>& corpus) {
    static const char interesting[] = {'\0', '\x7f', '\xff', '\xc3', '0', '1', '9', '(', ')', ' ',
                                       ',',  '-',    '>',    '.',    '_', 'a', '*', '\n', '\'', '\x80'};
    const std::size_t at = pick(s.size() + 1);
    switch (rng() % 7) {
      case 0: if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << (rng() % 8)); break;
      case 1: if (!s.empty()) s[pick(s.size())] = interesting[pick(sizeof interesting)]; break;
      case 2: if (!dict.empty()) s.insert(at, dict[pick(dict.size())]); break;
      case 3: s.insert(at, 1, interesting[pick(sizeof interesting)]); break;
      case 4: if (at < s.size()) s.erase(at, 1 + pick(std::min<std::size_t>(8, s.size() - at))); break;
      case 5: if (at < s.size()) s.insert(pick(s.size()), s.substr(at, 1 + pick(16))); break;
      default: {
        const std::string& other = corpus[pick(corpus.size())];
        s = s.substr(0, at) + other.substr(std::min(other.size(), pick(other.size() + 1)));
      }
    }
    if (s.size() > max_len) s.resize(max_len);
  }
};

}  // namespace

int main(int argc, char** argv) {
  double seconds = 0;
  std::uint64_t seed = 1;
  Mutator m;
  std::vector<std::pair<std::string, std::string>> corpus;  // name, bytes
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--mutate" && i + 1 < argc) seconds = std::stod(argv[++i]);
    else if (arg == "--seed" && i + 1 < argc) seed = std::stoull(argv[++i]);
    else if (arg == "--dict" && i + 1 < argc) m.dict = read_dict(argv[++i]);
    else if (arg == "--max-len" && i + 1 < argc) m.max_len = std::stoul(argv[++i]);
    else if (std::filesystem::is_directory(arg)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::directory_iterator(arg))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) corpus.emplace_back(f.string(), read_all(f));
    } else if (std::filesystem::is_regular_file(arg)) {
      corpus.emplace_back(arg, read_all(arg));
    } else {
      std::fprintf(stderr, "%s: no such file or directory (and not an option)\n", arg.c_str());
      return 2;
    }
  }
  std::set_terminate(on_terminate);
  for (int sig : {SIGABRT, SIGSEGV, SIGFPE, SIGBUS, SIGILL}) std::signal(sig, on_signal);

  for (const auto& [name, bytes] : corpus) run_one(bytes, name.c_str());
  std::printf("replayed %zu inputs\n", corpus.size());
  if (seconds <= 0 || corpus.empty()) return 0;

  m.rng.seed(seed);
  std::vector<std::string> texts;
  for (const auto& c : corpus) texts.push_back(c.second);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::uint64_t runs = 0;
  while (std::chrono::steady_clock::now() < end) {
    for (int k = 0; k < 64; ++k, ++runs) {
      std::string s = texts[m.pick(texts.size())];
      for (std::size_t n = 1 + m.pick(4); n-- > 0;) m.mutate_once(s, texts);
      run_one(s, nullptr);
    }
  }
  std::printf("ran %llu mutated inputs in %.0f s (seed %llu)\n", static_cast<unsigned long long>(runs), seconds,
              static_cast<unsigned long long>(seed));
  return 0;
}
