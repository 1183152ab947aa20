// The C++ half of `import einexpr` (einexpr._einexpr): einexpr.Tensor, the conversions of
// convert.hpp, the ops on einexpr tensors with the GIL released while they compute,
// cost --json / explain as the tool prints them, and model programs and their training
// (program.hpp). einexpr/__init__.py turns numpy arrays and torch tensors into einexpr
// tensors and the results back.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <sstream>
#include <string>
#include <vector>

#include "convert.hpp"
#include "einexpr/config.hpp"
#include "errors.hpp"
#include "program.hpp"
#include "report.hpp"

namespace einexpr::python {

namespace {

using Release = py::call_guard<py::gil_scoped_release>;

/// OP PATTERN [REDUCTION] NAME=LEN... as the tool parses it, so errors read the same.
cli::ExprSpec expr_spec(const std::string& op, const std::string& pattern, const std::string& reduction,
                        const AxisLengths& sizes) {
  std::vector<std::string> rest;
  if (!reduction.empty()) rest.push_back(reduction);
  for (const auto& [axis, length] : sizes) rest.push_back(axis + "=" + std::to_string(length));
  return cli::parse_expr_args(op, pattern, rest);
}

std::string cost_json(const std::string& op, const std::string& pattern, const std::string& reduction,
                      const AxisLengths& sizes, const std::string& dtype, const std::string& device,
                      bool backward, std::int64_t ignore_index) {
  cli::ExprSpec e = expr_spec(op, pattern, reduction, sizes);
  e.ignore_index = ignore_index;
  const DType dt = dtype_from_name(dtype);
  std::ostringstream os;
  cli::write_cost_json(os, cli::make_report(e, dt, find_device(device)), backward);
  return os.str();
}

std::string explain_text(const std::string& op, const std::string& pattern, const std::string& reduction,
                         const AxisLengths& sizes, const std::string& dtype) {
  const cli::ExprSpec e = expr_spec(op, pattern, reduction, sizes);
  std::ostringstream os;
  cli::write_explain(os, e, dtype_from_name(dtype));
  return os.str();
}

void bind_tensor(py::module_& m) {
  py::class_<Tensor>(m, "Tensor", py::buffer_protocol(),
                     "An einexpr tensor: numpy.asarray() and torch.from_dlpack() view its memory.")
      .def_buffer([](const Tensor& t) { return buffer_of(t); })
      .def_property_readonly("shape", [](const Tensor& t) { return py::tuple(py::cast(t.shape())); })
      .def_property_readonly("strides", [](const Tensor& t) { return py::tuple(py::cast(t.strides())); },
                             "In elements, as einexpr counts them (numpy counts bytes).")
      .def_property_readonly("dtype", [](const Tensor& t) { return std::string(name(t.dtype())); })
      .def_property_readonly("device", [](const Tensor& t) { return t.device().str(); })
      .def_property_readonly("read_only", &Tensor::is_read_only)
      .def_property_readonly("data_ptr", [](const Tensor& t) { return reinterpret_cast<std::uintptr_t>(t.data_ptr()); })
      .def("same_storage", &Tensor::same_storage)
      .def(
          "__dlpack__", [](const Tensor& t, const py::object&) { return to_capsule(t); }, py::arg("stream") = py::none(),
          "A DLPack capsule viewing this tensor (einexpr's device is synchronized first).")
      .def("__dlpack_device__",
           [](const Tensor& t) {
             return t.device().is_cpu() ? py::make_tuple(1, 0) : py::make_tuple(2, t.device().index);
           })
      .def("__repr__", [](const Tensor& t) { return t.str(); });
}

void bind_ops(py::module_& m) {
  m.def("from_buffer", &from_buffer, py::arg("obj"));
  m.def("from_dlpack", &from_capsule, py::arg("capsule"));
  m.def(
      "rearrange",
      [](const Tensor& x, const std::string& p, const AxisLengths& l) { return rearrange(x, p, l); }, Release());
  m.def(
      "concatenate",
      [](const std::vector<Tensor>& xs, const std::string& p, const AxisLengths& l) {
        return rearrange(std::span<const Tensor>(xs), p, l);
      },
      Release());
  m.def(
      "split", [](const Tensor& x, const std::string& p, const AxisLengths& l) { return split(x, p, l); }, Release());
  m.def(
      "get_at",
      [](const Tensor& t, const Tensor& i, const std::string& p, const AxisLengths& l) { return get_at(t, i, p, l); },
      Release());
  m.def(
      "dropout", [](const Tensor& x, double p, std::int64_t seed) { return dropout(x, p, seed); }, Release());
  m.def(
      "add_at",
      [](const Tensor& t, const Tensor& i, const Tensor& u, const std::string& p, const AxisLengths& l) {
        return add_at(t, i, u, p, l);
      },
      Release());
  m.def(
      "cross_entropy",
      [](const Tensor& x, const Tensor& t, const std::string& p, std::int64_t ignore, const AxisLengths& l) {
        return cross_entropy(x, t, p, ignore, l);
      },
      Release());
  m.def("scalar_like", [](double v, const Tensor& like) { return scalar_like(v, like); });
  m.def("op_names", [] {
    std::vector<std::string> names;
    for (const OpRow& row : op_rows()) names.emplace_back(row.name);
    return names;
  });
  m.def(
      "repeat", [](const Tensor& x, const std::string& p, const AxisLengths& l) { return repeat(x, p, l); },
      Release());
  m.def(
      "reduce",
      [](const Tensor& x, const std::string& p, const std::string& r, const AxisLengths& l, std::int64_t correction) {
        return reduce(x, p, std::string_view(r), l, correction);  // correction: var and std, as torch's
      },
      Release());
  m.def(
      "normalize",
      [](const Tensor& x, const std::string& p, const std::string& kind, double eps, const AxisLengths& l) {
        return normalize(x, p, parse_normalization(kind), eps, l);
      },
      Release());
  m.def(
      "normalize_affine",
      [](const std::vector<Tensor>& inputs, const std::string& p, const std::string& kind, double eps,
         const AxisLengths& l) {
        return apply(OpSpec::normalize(parse_normalization(kind), eps, l), std::span<const Tensor>(inputs), p);
      },
      Release());
  m.def(
      "map_pattern",
      [](const Tensor& x, const std::string& p, const std::string& f, const AxisLengths& l) {
        return map(x, p, std::string_view(f), l);
      },
      Release());
  m.def(
      "einsum",
      [](const std::vector<Tensor>& xs, const std::string& p, const AxisLengths& l) {
        return einsum(std::span<const Tensor>(xs), p, l);
      },
      Release());
  m.def(
      "map_unary", [](const Tensor& x, const std::string& f) { return map(x, std::string_view(f)); }, Release());
  m.def(
      "map_binary",
      [](const Tensor& x, const Tensor& y, const std::string& p, const std::string& f) {
        return map(x, y, p, std::string_view(f));
      },
      Release());
  m.def(
      "pack", [](const std::vector<Tensor>& xs, const std::string& p) { return pack(std::span<const Tensor>(xs), p); },
      Release());
  m.def(
      "unpack",
      [](const Tensor& x, const std::vector<Shape>& shapes, const std::string& p) {
        return unpack(x, std::span<const Shape>(shapes), p);
      },
      Release());
  m.def("parse_shape", [](const Tensor& x, const std::string& p) { return parse_shape(x, p); });
  m.def("cost_json", &cost_json);
  m.def("explain_text", &explain_text);
}

}  // namespace

}  // namespace einexpr::python

PYBIND11_MODULE(_einexpr, m) {
  m.doc() = "The C++ half of einexpr: see einexpr/__init__.py for the Python API.";
  m.attr("__version__") = einexpr::version;
  m.attr("has_cuda") = einexpr::has_cuda;
  einexpr::python::register_errors(m);
  einexpr::python::bind_tensor(m);
  einexpr::python::bind_ops(m);
  einexpr::python::bind_program(m);
}
