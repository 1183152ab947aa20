#pragma once
// Runs the built `einexpr` binary (its path is EINEXPR_CLI, from the build) in a fresh
// temporary directory through fork/exec, capturing stdout, stderr and the exit status.
//
//   Sandbox box;
//   box.write_npy("x.npy", x);
//   const CliResult r = box.run({"rearrange", "a b -> b a", "x.npy", "-o", "y.npy"});
//   CHECK(r.status == 0);
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "einexpr/einexpr.hpp"
#include "scratch_dir.hpp"

namespace test {

struct CliResult {
  int status = -1;  // the exit status; 128 + N when killed by signal N
  std::string out;  // stdout
  std::string err;  // stderr
};

inline std::ostream& operator<<(std::ostream& os, const CliResult& r) {
  return os << "status " << r.status << "\n--- stdout\n" << r.out << "--- stderr\n" << r.err;
}

/// Reads both pipes to their end without letting either fill up.
inline void drain(int out_fd, int err_fd, std::string& out, std::string& err) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&out, &err};
  int open = 2;
  char buf[65536];
  while (open > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("poll failed");
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
}

/// Runs EINEXPR_CLI with `args` in `cwd`. `env` entries are set in the child (an empty
/// value unsets); EINEXPR_DEVICES is unset unless given, so the device table is the
/// built-in one. `launcher` (a path and its arguments, "mpirun -np 2") runs it, if given.
inline CliResult run_cli(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                         const std::map<std::string, std::string>& env = {},
                         const std::vector<std::string>& launcher = {}) {
  int out_pipe[2], err_pipe[2];
  if (::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
  std::vector<std::string> argv_s = launcher;
  argv_s.push_back(EINEXPR_CLI);
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  // Under AddressSanitizer an allocation larger than memory aborts unless the allocator may
  // return null; the tool turns a failed allocation into an AllocationError (exit 1).
  const char* asan = ::getenv("ASAN_OPTIONS");
  const std::string asan_options =
      std::string(asan ? asan : "") + (asan && *asan ? ":" : "") + "allocator_may_return_null=1";
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::close(out_pipe[0]), ::close(out_pipe[1]), ::close(err_pipe[0]), ::close(err_pipe[1]);
    ::unsetenv("EINEXPR_DEVICES");
    ::setenv("ASAN_OPTIONS", asan_options.c_str(), 1);
    for (const auto& [k, v] : env) v.empty() ? ::unsetenv(k.c_str()) : ::setenv(k.c_str(), v.c_str(), 1);
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  CliResult r;
  drain(out_pipe[0], err_pipe[0], r.out, r.err);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return r;
}

/// A fresh directory, removed with everything in it at scope exit; commands run in it.
class Sandbox {
 public:
  Sandbox() = default;
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  const std::filesystem::path& dir() const { return scratch_.path(); }
  std::string path(const std::string& name) const { return scratch_ / name; }

  CliResult run(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) const {
    return run_cli(args, dir(), env);
  }
  /// The tool run by `launcher` ("mpirun -np 2 ...", its first word a path).
  CliResult run_under(const std::vector<std::string>& launcher, const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& env = {}) const {
    return run_cli(args, dir(), env, launcher);
  }

  void write_npy(const std::string& name, const einexpr::Tensor& t, const einexpr::NpyWriteOptions& o = {}) const {
    einexpr::write_npy(path(name), t, o);
  }
  einexpr::Tensor read_npy(const std::string& name, const einexpr::NpyReadOptions& o = {}) const {
    return einexpr::read_npy(path(name), o);
  }
  void write_bytes(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }
  std::string read_bytes(const std::string& name) const {
    std::ifstream in(path(name), std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  /// Every entry of the directory, recursively (relative paths).
  std::set<std::string> files() const {
    std::set<std::string> names;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir()))
      names.insert(std::filesystem::relative(e.path(), dir()).string());
    return names;
  }

 private:
  testing_support::ScratchDir scratch_;
};

/// The bytes np.save would write for `t` (what a file written by the CLI must hold).
inline std::string npy_text(const einexpr::Tensor& t, const einexpr::NpyWriteOptions& o = {}) {
  const std::vector<std::byte> b = einexpr::npy_bytes(t, o);
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

}  // namespace test
