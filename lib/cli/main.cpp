// The einexpr command-line tool: parse the command line, run the chosen command, and map
// every failure to an exit status and one clear message on stderr:
//   0  success (also --help and --version)
//   1  einexpr rejected the expression, a file or a value (a pattern's message carries its
//      caret lines); no output file is written
//   2  the command line is malformed (unknown flag, missing argument, bad NAME=LEN)
// Nothing escapes main: out of memory and unexpected exceptions are exit 1 too.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "app.hpp"
#include "args.hpp"
#include "dialect.hpp"

namespace {

constexpr int exit_rejected = 1;
constexpr int exit_usage = 2;

/// The subcommands the parser was inside, for "see 'einexpr cost --help'" ("einexpr
/// program cost" for a nested one).
std::string command_name(const CLI::App& app) {
  std::string name = "einexpr";
  const CLI::App* at = &app;
  while (at != nullptr) {
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : at->get_subcommands())
      if (sub->parsed()) next = sub;
    if (next != nullptr) name += " " + next->get_name();
    at = next;
  }
  return name;
}

int usage_error(const std::string& where, const std::string& message) {
  std::cerr << where << ": error: " << einexpr::cli::unprotect(message) << " (see '" << where << " --help')\n";
  return exit_usage;
}

/// einexpr's message in the tool's terms (dialect.hpp: "give h=LEN", "save the .npy input as
/// float32 first", not the C++ API's remedies).
int rejected(const std::string& where, const std::string& cpp_message) {
  const std::string message = einexpr::cli::to_dialect(cpp_message, einexpr::cli::Dialect::cli);
  std::cerr << where << ": error: " << message;
  if (message.empty() || message.back() != '\n') std::cerr << '\n';
  return exit_rejected;
}

/// Runs the parsed command; maps einexpr's and the tool's exceptions to exit statuses.
int dispatch(einexpr::cli::Cli& cli) {
  const std::string where = command_name(cli.app);
  try {
    for (const einexpr::cli::Command& c : cli.commands)
      if (c.app->parsed()) return c.run();
    return usage_error(where, "a command is required");
  } catch (const einexpr::cli::UsageError& e) {
    return usage_error(where, e.what());
  } catch (const std::bad_alloc&) {
    return rejected(where, "out of memory");
  } catch (const std::exception& e) {
    return rejected(where, e.what());
  }
}

/// The commands of `app` ("program" among the tool's, whose own are nested).
std::vector<std::string> commands_of(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

/// "unknown command 'x'" rather than CLI11's "a subcommand is required" or "not expected".
int unknown_command(const std::string& where, const std::vector<std::string>& commands, const std::string& word) {
  std::string names;
  for (const std::string& c : commands) names += (names.empty() ? "" : ", ") + c;
  return usage_error(where, "unknown command '" + word + "' (commands: " + names + ")");
}

/// argv[1] (and, under a command with commands of its own, argv[2]) must name a command.
int check_command_words(const CLI::App& app, int argc, char** argv) {
  const std::vector<std::string> top = commands_of(app);
  if (argc < 2 || argv[1][0] == '-') return 0;
  if (std::find(top.begin(), top.end(), argv[1]) == top.end()) return unknown_command("einexpr", top, argv[1]);
  const std::vector<std::string> nested = commands_of(*app.get_subcommand(argv[1]));
  if (nested.empty() || argc < 3 || argv[2][0] == '-') return 0;
  if (std::find(nested.begin(), nested.end(), argv[2]) == nested.end())
    return unknown_command("einexpr " + std::string(argv[1]), nested, argv[2]);
  return 0;
}

int run(int argc, char** argv) {
  std::unique_ptr<einexpr::cli::Cli> cli = einexpr::cli::make_cli();
  if (const int status = check_command_words(cli->app, argc, argv); status != 0) return status;
  std::vector<std::string> args = einexpr::cli::protect_patterns(argc, argv);
  std::vector<char*> protected_argv;
  for (std::string& a : args) protected_argv.push_back(a.data());
  try {
    cli->app.parse(argc, protected_argv.data());
  } catch (const CLI::Success& e) {  // --help, --version
    return cli->app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    if (message == "A subcommand is required") message = "a command is required";
    return usage_error(command_name(cli->app), message);
  }
  return dispatch(*cli);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int status = run(argc, argv);
    std::cout.flush();
    if (!std::cout) {
      std::cerr << "einexpr: error: could not write to standard output\n";
      return exit_rejected;
    }
    return status;
  } catch (const std::bad_alloc&) {
    std::fputs("einexpr: error: out of memory\n", stderr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "einexpr: error: %s\n", e.what());
  } catch (...) {
    std::fputs("einexpr: error: unexpected exception\n", stderr);
  }
  return exit_rejected;
}
