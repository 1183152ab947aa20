// einexpr's C++ errors as Python exceptions (see errors.hpp).
#include "errors.hpp"

#include <string>

#include "args.hpp"
#include "dialect.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr::python {

namespace py = pybind11;

namespace {

struct Classes {
  PyObject* error = nullptr;
  PyObject* pattern = nullptr;
  PyObject* shape = nullptr;
  PyObject* dtype = nullptr;
  PyObject* device = nullptr;
  PyObject* allocation = nullptr;
  PyObject* internal = nullptr;
  PyObject* argument = nullptr;
  PyObject* index = nullptr;
};
Classes classes;  // owned by the module for the interpreter's life

PyObject* make_class(py::module_& m, const char* name, PyObject* bases, const char* doc) {
  const std::string qualified = std::string("einexpr.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (type == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(type));  // add_object steals nothing: the module keeps a reference
  return type;
}

/// Raises `type` with e's message in Python's terms (cli/dialect.hpp: "pass h=LENGTH", not
/// the C++ API's {"h", length}); .reason is the message without the context lines.
void raise(PyObject* type, const Error& e) {
  py::object exc = py::reinterpret_borrow<py::object>(type)(cli::to_dialect(e.what(), cli::Dialect::python));
  exc.attr("reason") = cli::to_dialect(e.reason(), cli::Dialect::python);
  if (const auto* p = dynamic_cast<const PatternError*>(&e)) {
    exc.attr("position") = p->position();
    exc.attr("pattern") = p->pattern();
  }
  PyErr_SetObject(type, exc.ptr());
}

}  // namespace

void register_errors(py::module_& m) {
  classes.error = make_class(m, "Error", PyExc_RuntimeError,
                             "An einexpr error: the message says what is wrong and where.");
  classes.pattern = make_class(m, "PatternError", classes.error,
                               "A malformed pattern; .position is where (a caret marks it in the message).");
  classes.shape = make_class(m, "ShapeError", classes.error, "Shapes, strides or axis lengths that do not fit.");
  classes.dtype = make_class(m, "DTypeError", classes.error, "A dtype einexpr cannot take here.");
  classes.device = make_class(m, "DeviceError", classes.error, "A device that is missing or failed.");
  classes.allocation = make_class(m, "AllocationError", classes.error, "Memory that could not be allocated.");
  classes.internal = make_class(m, "InternalError", classes.error, "A bug in einexpr: please report it.");
  py::tuple index_bases = py::make_tuple(py::handle(classes.error), py::handle(PyExc_IndexError));
  classes.index = make_class(m, "IndexError", index_bases.ptr(),
                             "An integer index outside its axis; the message names its position and value.");
  py::tuple argument_bases = py::make_tuple(py::handle(classes.error), py::handle(PyExc_TypeError));
  classes.argument = make_class(m, "ArgumentError", argument_bases.ptr(),
                                "An argument of the wrong kind: not an array, not a string, not an integer.");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const PatternError& e) {
      raise(classes.pattern, e);
    } catch (const ShapeError& e) {
      raise(classes.shape, e);
    } catch (const DTypeError& e) {
      raise(classes.dtype, e);
    } catch (const DeviceError& e) {
      raise(classes.device, e);
    } catch (const IndexError& e) {
      raise(classes.index, e);
    } catch (const AllocationError& e) {
      raise(classes.allocation, e);
    } catch (const InternalError& e) {
      raise(classes.internal, e);
    } catch (const Error& e) {
      raise(classes.error, e);
    } catch (const cli::UsageError& e) {
      raise(classes.argument, Error(cli::usage_to_python(e.what())));
    }
  });
}

}  // namespace einexpr::python
