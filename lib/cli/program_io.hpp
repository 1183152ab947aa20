#pragma once
// What program run and program train share: the NAME=IN.npy / NAME=LEN arguments and the
// output folder written all or nothing.
#include <map>
#include <string>
#include <vector>

#include "einexpr/einexpr.hpp"

namespace einexpr::cli {

struct RunInputs {
  AxisLengths lengths;
  std::vector<GivenTensor> given;
  std::map<std::string, Tensor, std::less<>> tensors;        // the first file of a folder
  std::map<std::string, std::vector<std::string>> folders;   // NAME=DIR: its .npy files in name order
};

/// NAME=IN.npy where NAME is an input or param of the program (with `folders`, NAME=DIR of
/// .npy files too), else NAME=LEN of an axis; Error for a name the program lacks, a
/// statement's name, a tensor given twice.
RunInputs read_inputs(const ast::Program& program, const std::vector<std::string>& args, Device device, bool folders);

struct Written {
  std::string name, path;
  Tensor tensor;
};

class JsonWriter;  // output.hpp

/// "outputs": [{name, path, dtype, shape}, ...] of what a run wrote.
void outputs_json(JsonWriter& j, const std::vector<Written>& written);

/// Every tensor turned into bytes first, then written to a temporary in `dir` (created if
/// missing) and all renamed into place: a failure leaves no file, and no folder it created.
void write_output_dir(const std::string& dir, const std::vector<Written>& written);

}  // namespace einexpr::cli
