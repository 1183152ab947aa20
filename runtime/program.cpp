#include "einexpr/runtime/program.hpp"

#include <algorithm>
#include <memory>
#include <numeric>
#include <sstream>

#include "einexpr/runtime/error.hpp"

namespace einexpr {

std::size_t Program::workspace_bytes() const noexcept {
  return std::accumulate(temp_bytes.begin(), temp_bytes.end(), std::size_t{0});
}

void Program::check_inputs(TensorRefs inputs) const {
  if (static_cast<int>(inputs.size()) != num_inputs())
    throw ShapeError("the program takes " + std::to_string(num_inputs()) + " inputs, got " +
                     std::to_string(inputs.size()));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined()) throw Error("input " + std::to_string(i) + " is an undefined tensor");
    if (t.dtype() != input_dtype(i))
      throw DTypeError("input " + std::to_string(i) + " is " + std::string(name(t.dtype())) +
                       " but the program was planned for " + std::string(name(input_dtype(i))));
    if (t.device() != device)
      throw DeviceError("input " + std::to_string(i) + " is on " + t.device().str() +
                        " but the program runs on " + device.str());
    const Layout& want = input_layouts[i];
    if (t.shape() != want.shape || t.strides() != want.strides)
      throw ShapeError("input " + std::to_string(i) + " has shape " + shape_str(t.shape()) + " and strides " +
                       shape_str(t.strides()) + " but the program was planned for shape " +
                       shape_str(want.shape) + " and strides " + shape_str(want.strides));
  }
}

namespace {

/// True when two elements of `l` may share memory: sorted by stride, each dim of length > 1
/// must step past everything the dims inside it reach. (Sufficient for no overlap; a few
/// exotic interleavings that do not overlap are refused too.)
bool may_overlap(const Layout& l) {
  InlineVector<std::pair<std::int64_t, std::int64_t>, 8> dims;  // stride, length
  for (std::size_t d = 0; d < l.shape.size(); ++d) {
    if (l.shape[d] == 0) return false;
    if (l.shape[d] > 1) dims.push_back({l.strides[d], l.shape[d]});
  }
  std::sort(dims.begin(), dims.end());
  std::int64_t reach = 0;  // the largest offset the inner dims reach
  for (const auto& [stride, length] : dims) {
    if (stride <= reach) return true;
    reach = checked_add(reach, checked_mul(stride, length - 1));
  }
  return false;
}

struct Bound {
  Workspace workspace;
  InlineVector<std::shared_ptr<Storage>, 4> temps;
};

Bound bind_buffers(const Program& p, TensorRefs inputs, const Tensor* out_direct) {
  Bound b;
  b.workspace.device = p.device;
  b.workspace.buffers.reserve(inputs.size() + p.temp_bytes.size());
  for (const Tensor& t : inputs) b.workspace.buffers.push_back(static_cast<std::byte*>(t.data_ptr()));
  b.temps.resize(p.temp_bytes.size());
  for (std::size_t i = 0; i < p.temp_bytes.size(); ++i) {
    const int buffer = p.num_inputs() + static_cast<int>(i);
    if (out_direct != nullptr && buffer == p.output_buffer) {
      b.workspace.buffers.push_back(static_cast<std::byte*>(out_direct->data_ptr()));
      continue;
    }
    b.temps[i] = Storage::allocate(p.temp_bytes[i], p.device);
    b.workspace.buffers.push_back(b.temps[i]->data());
  }
  return b;
}

}  // namespace

Tensor Program::run(TensorRefs inputs) const {
  check_inputs(inputs);
  Bound b = bind_buffers(*this, inputs, nullptr);
  for (const Kernel& k : kernels) k.run(b.workspace);
  if (output_buffer < num_inputs()) {
    const Tensor& in = inputs[static_cast<std::size_t>(output_buffer)];
    Layout l = output_layout;
    l.offset += in.storage_offset();
    return Tensor(in.storage(), std::move(l), dtype);
  }
  return Tensor(b.temps[static_cast<std::size_t>(output_buffer - num_inputs())], output_layout, dtype);
}

void Program::run_into(TensorRefs inputs, Tensor& out) const {
  check_inputs(inputs);
  if (!out.defined()) throw Error("the output tensor is undefined");
  if (out.is_read_only())
    throw Error("the output tensor is read-only (it views memory given to einexpr as const, "
                "Tensor::from_blob(const void*, ...)); write into a writable tensor");
  if (out.shape() != output_layout.shape)
    throw ShapeError("the output tensor has shape " + shape_str(out.shape()) + " but the result has shape " +
                     shape_str(output_layout.shape));
  if (out.dtype() != dtype)
    throw DTypeError("the output tensor is " + std::string(name(out.dtype())) + " but the result is " +
                     std::string(name(dtype)));
  if (out.device() != device)
    throw DeviceError("the output tensor is on " + out.device().str() + " but the program runs on " + device.str());
  for (const Tensor& in : inputs)
    if (in.same_storage(out))
      throw Error("the output tensor shares storage with an input; write into a separate tensor");
  if (may_overlap(out.layout()))
    throw Error("the output tensor has overlapping elements (shape " + shape_str(out.shape()) + ", strides " +
                shape_str(out.strides()) + "): write into a tensor whose elements are distinct");
  // Direct: the last kernel writes the output buffer with out's own strides.
  const bool direct = output_buffer >= num_inputs() && output_layout.offset == 0 &&
                      out.strides() == output_layout.strides;
  if (direct) {
    Bound b = bind_buffers(*this, inputs, &out);
    for (const Kernel& k : kernels) k.run(b.workspace);
    return;
  }
  out.copy_from(run(inputs));
}

std::string Program::str() const {
  std::ostringstream os;
  os << "program on " << device.str() << ", " << num_inputs() << " input(s), " << temp_bytes.size()
     << " temporaries (" << workspace_bytes() << " bytes)\n";
  for (std::size_t i = 0; i < kernels.size(); ++i) os << "  " << i << ": " << kernels[i].name << '\n';
  os << "  output: buffer " << output_buffer << " shape " << shape_str(output_layout.shape) << " strides "
     << shape_str(output_layout.strides);
  return os.str();
}

}  // namespace einexpr
