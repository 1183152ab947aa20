// Cost::str(): the cost of a plan as an aligned table, one row per step, then the totals
// and the ideal figures, with SI units (FLOPs in k/M/G/T..., bytes in KiB/MiB/GiB...).
#include <iomanip>
#include <sstream>

#include "einexpr/codegen/cost.hpp"
#include "cost/units.hpp"

namespace einexpr {

namespace {

using detail::iec;
using detail::num;
using detail::si;

std::string intensity_text(Count flops, Count bytes) {
  if (bytes == Count(0)) return "-";
  return num(flops.to_double() / bytes.to_double());
}

void row(std::ostringstream& os, const std::string& index, const std::string& kind, const std::string& flops,
         const std::string& read, const std::string& written, const std::string& intensity,
         const std::string& label) {
  std::ostringstream line;
  line << "  " << std::left << std::setw(7) << index << std::setw(9) << kind << std::right << std::setw(14) << flops
       << std::setw(12) << read << std::setw(12) << written << std::setw(10) << intensity << "  " << label;
  std::string text = line.str();
  text.erase(text.find_last_not_of(' ') + 1);
  os << text << '\n';
}

}  // namespace

std::string Cost::str() const {
  std::ostringstream os;
  os << op;
  if (!pattern.empty()) os << " '" << pattern << "'";
  os << " (" << name(dtype) << ")\n";
  row(os, "step", "kind", "FLOPs", "read", "written", "FLOP/B", "");
  Count read_total, written_total;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const StepCost& s = steps[i];
    read_total += s.bytes_read;
    written_total += s.bytes_written;
    row(os, std::to_string(i + 1), s.kind, si(s.flops.to_double(), "FLOP"), iec(s.bytes_read.to_double()),
        iec(s.bytes_written.to_double()), intensity_text(s.flops, s.bytes_read + s.bytes_written), s.label);
  }
  row(os, "total", "planned", si(flops.to_double(), "FLOP"), iec(read_total.to_double()),
      iec(written_total.to_double()), intensity_text(flops, bytes_planned), "");
  row(os, "ideal", "", si(flops.to_double(), "FLOP"), iec(bytes_read.to_double()), iec(bytes_written.to_double()),
      intensity_text(flops, ideal_bytes()), "each input read once, the output written once");
  os << "  FLOPs        " << flops.str() << " = " << flops_formula.str() << '\n';
  os << "  exact FLOPs  " << flops_exact.str() << " (multiplies + adds; intensity " << num(intensity_exact()) << ")\n";
  if (naive_flops != flops) os << "  naive FLOPs  " << einexpr::str(naive_flops) << " (one loop nest over every axis)\n";
  os << "  ideal bytes  " << ideal_bytes().str() << " = " << bytes_formula.str() << '\n';
  os << "  planned      " << bytes_planned.str() << " bytes moved (" << iec(bytes_planned.to_double())
     << "); peak temporary memory " << iec(peak_extra_bytes.to_double()) << '\n';
  return os.str();
}

}  // namespace einexpr
