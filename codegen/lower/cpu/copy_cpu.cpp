// CopyStep and EmbedStep on the CPU: the runtime's copy_strided (any strides, stride-0
// broadcast sources, dims collapsed, parallel over rows of large copies).
#include <cstring>
#include <sstream>

#include "cpu_kernels.hpp"
#include "einexpr/runtime/strided.hpp"

namespace einexpr::cpu {

std::string layout_str(const Layout& layout) {
  std::ostringstream os;
  os << shape_str(layout.shape) << " strides " << shape_str(layout.strides);
  if (layout.offset != 0) os << " +" << layout.offset;
  return os.str();
}

Kernel copy_kernel(const Operand& src, const Operand& dst, DType dtype) {
  const std::size_t es = element_size(dtype);
  std::string label = "copy " + std::string(einexpr::name(dtype)) + " " + layout_str(src.layout) + " -> " +
                     layout_str(dst.layout);
  return Kernel{std::move(label), [src, dst, es](const Workspace& ws) {
                  copy_strided(buffer_ptr<std::byte>(ws, dst.buffer), dst.layout,
                               buffer_ptr<const std::byte>(ws, src.buffer), src.layout, es);
                }};
}

Kernel embed_kernel(const Operand& src, const Operand& dst, std::int64_t dst_elements, const Layout& into, DType dtype) {
  const std::size_t es = element_size(dtype);
  const std::size_t bytes = static_cast<std::size_t>(dst_elements) * es;
  std::string label = "embed " + std::string(einexpr::name(dtype)) + " " + layout_str(src.layout) + " -> zeros " +
                      layout_str(dst.layout) + " at " + layout_str(into);
  return Kernel{std::move(label), [src, dst, into, es, bytes](const Workspace& ws) {
                  std::byte* base = buffer_ptr<std::byte>(ws, dst.buffer);
                  std::memset(base, 0, bytes);  // all-zero bytes are 0 in every dtype
                  copy_strided(base, into, buffer_ptr<const std::byte>(ws, src.buffer), src.layout, es);
                }};
}

}  // namespace einexpr::cpu
