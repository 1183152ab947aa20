#pragma once
// The command line's definition: CLI11 subcommands, their options and --help texts (with
// examples from the lecture notes), bound to the argument structs of commands.hpp.
// CLI11 stays in this file, app.cpp and main.cpp.
#include <CLI/CLI.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"

namespace einexpr::cli {

/// A subcommand and what runs it once the command line has been parsed.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

/// The parsed command line; the CLI11 options write into the argument structs.
struct Cli {
  CLI::App app;
  std::deque<OpArgs> ops;  // one per row of the op registry (parser/ops.hpp), in its order
  CostArgs cost;
  ExprArgs explain;
  CheckArgs check;
  BenchArgs bench;
  RooflineArgs roofline;
  DevicesArgs devices;
  ProgramCheckArgs program_check;
  ProgramCostArgs program_cost;
  ProgramRunArgs program_run;
  ProgramTrainArgs program_train;
  std::vector<Command> commands;

  Cli();
  Cli(const Cli&) = delete;
  Cli& operator=(const Cli&) = delete;
};

/// The whole tool's definition (the options point into the returned object).
std::unique_ptr<Cli> make_cli();

/// CLI11 takes any argument that begins with '-' for an option, but a pattern may begin
/// with "->" (the identity of a 0-d tensor, "->"; a repeat of one, "-> r"). No option
/// begins so, so such an argument is marked as a positional before parsing and the mark is
/// removed from what the positionals receive. ("--" also ends the options, as usual.)
std::vector<std::string> protect_patterns(int argc, char** argv);
/// `text` without the marks protect_patterns added (for messages that quote arguments).
std::string unprotect(std::string text);

}  // namespace einexpr::cli
