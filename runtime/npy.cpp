// .npy files: reading (from memory or a file, every size validated against the bytes
// actually there before anything is allocated) and writing (numpy's exact header; to a
// file through a temporary beside it, renamed into place). The header text is parsed by
// npy_header.cpp.
#include "einexpr/runtime/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <functional>
#include <numeric>
#include <system_error>

#include "npy_header.hpp"

namespace einexpr {

namespace {

std::string os_error(int err) { return std::generic_category().message(err); }

// Where a .npy file's bytes come from: `read` copies exactly n bytes at `offset` to dst.
struct Source {
  const std::string& name;
  std::uint64_t size;
  std::function<void(std::uint64_t offset, std::size_t n, void* dst)> read;
};

[[noreturn]] void fail(const std::string& name, const std::string& what) { throw Error(name + ": " + what); }

void need(const Source& src, std::uint64_t end, const char* what) {
  if (src.size < end)
    fail(src.name, "truncated .npy file: it ends inside the " + std::string(what) + " (" +
                       std::to_string(src.size) + " bytes, " + std::to_string(end) + " needed)");
}

// Magic, version and header length; returns the header's (offset, length).
std::pair<std::uint64_t, std::uint64_t> read_prefix(const Source& src) {
  unsigned char magic[8] = {};
  src.read(0, static_cast<std::size_t>(std::min<std::uint64_t>(src.size, 8)), magic);
  if (src.size < 6 || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    fail(src.name, "not a .npy file (it does not start with the magic string \\x93NUMPY)");
  need(src, 8, "format version");
  if (magic[6] < 1 || magic[6] > 3 || magic[7] != 0)
    fail(src.name, "unsupported .npy format version " + std::to_string(magic[6]) + "." + std::to_string(magic[7]) +
                       " (einexpr reads 1.0, 2.0 and 3.0)");
  const std::size_t field = magic[6] == 1 ? 2 : 4;
  need(src, 8 + field, "header length");
  unsigned char len[4] = {};
  src.read(8, field, len);
  std::uint64_t header_len = 0;
  for (std::size_t i = field; i-- > 0;) header_len = header_len << 8 | len[i];
  if (header_len > npy::max_header_bytes)
    fail(src.name, "the .npy header length " + std::to_string(header_len) + " is over the limit of " +
                       std::to_string(npy::max_header_bytes) + " bytes");
  if (8 + field + header_len > src.size)
    fail(src.name, "the .npy header length " + std::to_string(header_len) + " reaches past the end of the file (" +
                       std::to_string(src.size) + " bytes)");
  return {8 + field, header_len};
}

void swap_elements(std::byte* p, std::size_t bytes, std::size_t element) {
  for (std::size_t i = 0; i + element <= bytes; i += element) std::reverse(p + i, p + i + element);
}

Shape reversed(const Shape& s) { return Shape(s.rbegin(), s.rend()); }
std::vector<int> reversed_dims(int n) {
  std::vector<int> dims(static_cast<std::size_t>(n));
  std::iota(dims.rbegin(), dims.rend(), 0);
  return dims;
}

/// The header, checked against the file's size: what read_from reads, before any data.
struct Meta {
  npy::Header header;
  npy::Descr descr;
  std::uint64_t data_offset = 0, data_bytes = 0;
};

Meta read_meta(const Source& src, const NpyReadOptions& options) {
  const auto [header_offset, header_len] = read_prefix(src);
  std::string text(static_cast<std::size_t>(header_len), '\0');
  src.read(header_offset, text.size(), text.data());
  const npy::Header h = npy::parse_header(text, src.name);
  const npy::Descr d = npy::parse_descr(h.descr, options, src.name);
  std::uint64_t data_bytes = 0;
  try {
    data_bytes = static_cast<std::uint64_t>(
        checked_mul(checked_numel(h.shape), static_cast<std::int64_t>(element_size(d.dtype))));
  } catch (const ShapeError& e) {
    throw ShapeError(src.name + ": " + e.reason());
  }
  const std::uint64_t data_offset = header_offset + header_len;
  const std::uint64_t available = src.size - data_offset;
  if (data_bytes != available)
    fail(src.name, "the .npy data is " + std::to_string(available) + " bytes, but shape " + shape_str(h.shape) +
                       " of " + h.descr + " needs " + std::to_string(data_bytes) +
                       (available < data_bytes ? " (the file is truncated)" : " (the file has trailing bytes)"));
  if (options.max_bytes != 0 && data_bytes > options.max_bytes)
    fail(src.name, "the .npy data is " + std::to_string(data_bytes) + " bytes, over the limit of " +
                       std::to_string(options.max_bytes) + " bytes (NpyReadOptions::max_bytes)");
  return {h, d, data_offset, data_bytes};
}

Tensor read_from(const Source& src, const NpyReadOptions& options) {
  const auto [h, d, data_offset, data_bytes] = read_meta(src, options);
  Tensor t;
  try {
    t = Tensor::empty(h.fortran_order ? reversed(h.shape) : h.shape, d.dtype);
  } catch (const ShapeError& e) {
    throw ShapeError(src.name + ": " + e.reason());
  } catch (Error& e) {
    e.add_context("while reading " + src.name);
    throw;
  }
  auto* data = static_cast<std::byte*>(t.data_ptr());
  src.read(data_offset, static_cast<std::size_t>(data_bytes), data);
  if (d.swap_bytes) swap_elements(data, static_cast<std::size_t>(data_bytes), t.element_size());
  if (d.dtype == DType::boolean)
    for (std::size_t i = 0; i < data_bytes; ++i) data[i] = data[i] != std::byte{0} ? std::byte{1} : std::byte{0};
  // Fortran order: the file holds the transpose in C order; return the transposed view, as numpy does.
  return h.fortran_order && t.dim() > 1 ? t.permute(reversed_dims(t.dim())) : t;
}

// ---- writing ----

// What a .npy file holds for a tensor: numpy's header, and the data contiguous in file order.
struct Prepared {
  std::string header;
  Tensor data;
};

Prepared prepare(const Tensor& tensor, const NpyWriteOptions& options) {
  if (!tensor.defined()) throw Error("cannot write an undefined tensor to a .npy file");
  const std::string descr = npy::descr_for(tensor.dtype(), options);  // DTypeError for fp8
  Tensor t = tensor.to(Device::cpu());
  if (options.fortran_order && t.dim() > 1) t = t.permute(reversed_dims(t.dim()));
  return {npy::header_bytes(descr, options.fortran_order, tensor.shape()), t.contiguous()};
}

// Calls sink(bytes, n) with the data in little-endian order, in chunks where it must swap.
template <class Sink>
void emit_data(const Tensor& t, Sink&& sink) {
  const auto* p = static_cast<const std::byte*>(t.data_ptr());
  const std::size_t n = t.nbytes(), es = t.element_size();
  if (std::endian::native == std::endian::little || es == 1) {
    sink(p, n);
    return;
  }
  std::vector<std::byte> chunk;
  for (std::size_t done = 0; done < n;) {
    const std::size_t k = std::min(n - done, (std::size_t{1} << 20) / es * es);
    chunk.assign(p + done, p + done + k);
    swap_elements(chunk.data(), k, es);
    sink(chunk.data(), k);
    done += k;
  }
}

// A file created beside `path` and renamed onto it by commit(); removed if never committed.
class TempFile {
 public:
  explicit TempFile(const std::string& path) : path_(path) {
    static std::atomic<unsigned> counter{0};
    for (int attempt = 0; fd_ < 0; ++attempt) {
      temp_ = path + ".einexpr-tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
      fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && (errno != EEXIST || attempt > 100))
        fail(path, "cannot create a temporary file beside it (" + temp_ + "): " + os_error(errno));
    }
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(temp_.c_str());
  }

  void write(const void* data, std::size_t n) {
    const auto* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, std::min<std::size_t>(n, std::size_t{1} << 30));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) fail(path_, "cannot write: " + os_error(w < 0 ? errno : EIO));
      p += w;
      n -= static_cast<std::size_t>(w);
    }
  }

  void commit() {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail(path_, "cannot write: " + os_error(errno));
    if (::rename(temp_.c_str(), path_.c_str()) != 0) fail(path_, "cannot rename the temporary file onto it: " + os_error(errno));
    committed_ = true;
  }

 private:
  std::string path_;
  std::string temp_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace

Tensor parse_npy(std::span<const std::byte> bytes, const std::string& name, const NpyReadOptions& options) {
  const Source src{name, bytes.size(), [&](std::uint64_t offset, std::size_t n, void* dst) {
                     if (n > 0) std::memcpy(dst, bytes.data() + offset, n);
                   }};
  return read_from(src, options);
}

namespace {

/// Opens `path` and calls f(source) on it (pread at offsets, so nothing is read but what f asks for).
template <class F>
auto with_file(const std::string& path, F&& f) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, "cannot open: " + os_error(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(path, "cannot stat: " + os_error(errno));
  if (!S_ISREG(st.st_mode)) fail(path, "not a regular file");
  const Source src{path, static_cast<std::uint64_t>(st.st_size), [&](std::uint64_t offset, std::size_t n, void* dst) {
                     auto* p = static_cast<char*>(dst);
                     while (n > 0) {
                       const ssize_t r = ::pread(fd, p, std::min<std::size_t>(n, std::size_t{1} << 30),
                                                 static_cast<off_t>(offset));
                       if (r < 0 && errno == EINTR) continue;
                       if (r < 0) fail(path, "cannot read: " + os_error(errno));
                       if (r == 0) fail(path, "the file ended early (was it changed while being read?)");
                       p += r;
                       offset += static_cast<std::uint64_t>(r);
                       n -= static_cast<std::size_t>(r);
                     }
                   }};
  return f(src);
}

}  // namespace

Tensor read_npy(const std::string& path, const NpyReadOptions& options) {
  return with_file(path, [&](const Source& src) { return read_from(src, options); });
}

NpyInfo read_npy_info(const std::string& path, const NpyReadOptions& options) {
  return with_file(path, [&](const Source& src) {
    const Meta m = read_meta(src, options);
    return NpyInfo{m.descr.dtype, m.header.shape, m.header.fortran_order};
  });
}

std::vector<std::byte> npy_bytes(const Tensor& tensor, const NpyWriteOptions& options) {
  const Prepared p = prepare(tensor, options);
  std::vector<std::byte> out(p.header.size());
  std::memcpy(out.data(), p.header.data(), p.header.size());
  out.reserve(p.header.size() + p.data.nbytes());
  emit_data(p.data, [&](const std::byte* b, std::size_t n) { out.insert(out.end(), b, b + n); });
  return out;
}

void write_npy(const std::string& path, const Tensor& tensor, const NpyWriteOptions& options) {
  Prepared p;
  try {
    p = prepare(tensor, options);  // every refusal comes before the file system is touched
  } catch (const DTypeError& e) {
    throw DTypeError(path + ": " + e.reason());
  } catch (Error& e) {
    e.add_context("while writing " + path);
    throw;
  }
  TempFile file(path);
  file.write(p.header.data(), p.header.size());
  emit_data(p.data, [&](const std::byte* b, std::size_t n) { file.write(b, n); });
  file.commit();
}

}  // namespace einexpr
