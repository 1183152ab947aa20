// read_device_file: the JSON device-file format (codegen/cost/devices.json is an example):
//   [ { "name": "h100", "description": "...", "peak_flops": {"bf16": 989.5e12, ...},
//       "bandwidth": 3.35e12, "memory": 80e9, "source": "..." }, ... ]   (memory optional)
// name, peak_flops and bandwidth are required; description and source are optional
// strings; any other key is an error (a typo would otherwise be ignored silently).
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {

namespace {

using json = nlohmann::json;

struct FileError {
  const std::string& path;
  [[noreturn]] void operator()(const std::string& problem) const {
    throw Error("device file '" + path + "': " + problem);
  }
};

double positive_number(const json& j, const std::string& what, const FileError& fail) {
  if (!j.is_number() || !(j.get<double>() > 0) || !std::isfinite(j.get<double>()))
    fail(what + " must be a positive number, not " + j.dump());
  return j.get<double>();
}

std::string optional_string(const json& entry, const char* key, const std::string& where, const FileError& fail) {
  if (!entry.contains(key)) return "";
  if (!entry[key].is_string()) fail(where + ": \"" + key + "\" must be a string");
  return entry[key].get<std::string>();
}

DeviceSpec parse_entry(const json& entry, std::size_t index, const FileError& fail) {
  std::string where = "entry " + std::to_string(index);
  if (!entry.is_object()) fail(where + " is not an object");
  for (const auto& [key, value] : entry.items())
    if (key != "name" && key != "description" && key != "peak_flops" && key != "bandwidth" && key != "memory" &&
        key != "source")
      fail(where + ": unknown key \"" + key + "\" (expected name, description, peak_flops, bandwidth, memory, source)");
  if (!entry.contains("name") || !entry["name"].is_string() || entry["name"].get<std::string>().empty())
    fail(where + ": \"name\" must be a non-empty string");
  DeviceSpec d;
  d.name = entry["name"].get<std::string>();
  where += " ('" + d.name + "')";
  d.description = optional_string(entry, "description", where, fail);
  d.source = optional_string(entry, "source", where, fail);
  if (!entry.contains("peak_flops") || !entry["peak_flops"].is_object() || entry["peak_flops"].empty())
    fail(where + ": \"peak_flops\" must be an object of dtype -> FLOP/s, such as {\"bf16\": 989.5e12}");
  for (const auto& [key, value] : entry["peak_flops"].items())
    d.peak_flops[key] = positive_number(value, where + ": peak_flops." + key, fail);
  if (!entry.contains("bandwidth")) fail(where + ": \"bandwidth\" (bytes/s) is missing");
  d.bandwidth = positive_number(entry["bandwidth"], where + ": bandwidth", fail);
  if (entry.contains("memory")) d.memory = positive_number(entry["memory"], where + ": memory", fail);
  return d;
}

}  // namespace

std::vector<DeviceSpec> read_device_file(const std::string& path) {
  const FileError fail{path};
  std::ifstream in(path);
  if (!in) fail("cannot be opened");
  json root;
  try {
    root = json::parse(in);
  } catch (const json::exception& e) {
    fail(std::string("not valid JSON: ") + e.what());
  }
  if (!root.is_array()) fail("expected a JSON list of devices, found " + std::string(root.type_name()));
  std::vector<DeviceSpec> devices;
  for (std::size_t i = 0; i < root.size(); ++i) devices.push_back(parse_entry(root[i], i, fail));
  return devices;
}

}  // namespace einexpr
