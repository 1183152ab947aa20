// A roofline plot as hand-written SVG: log-log axes with decade ticks, the bandwidth
// slope up to the ridge point, the compute roof for one dtype, and labelled points
// (hollow circles: bounds from the model; filled squares: measured). No dependencies.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "einexpr/codegen/cost.hpp"
#include "einexpr/runtime/error.hpp"
#include "cost/units.hpp"

namespace einexpr {

namespace {

using detail::num;
using detail::si;

constexpr double width = 820, height = 580;
constexpr double left = 100, right = 40, top = 70, bottom = 80;

std::string escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// The decades shown on each axis and the mapping from data to pixels.
struct Axes {
  int x_lo, x_hi, y_lo, y_hi;  // log10 bounds
  double x(double intensity) const {
    const double t = (std::log10(intensity) - x_lo) / (x_hi - x_lo);
    return left + std::clamp(t, 0.0, 1.0) * (width - left - right);
  }
  double y(double flops) const {
    const double t = (std::log10(flops) - y_lo) / (y_hi - y_lo);
    return height - bottom - std::clamp(t, 0.0, 1.0) * (height - top - bottom);
  }
};

Axes choose_axes(double peak, double bandwidth, const std::vector<RooflinePoint>& points) {
  const double ridge = peak / bandwidth;
  double xmin = ridge, xmax = ridge, ymin = peak, ymax = peak;
  for (const RooflinePoint& p : points) {
    if (p.intensity > 0) xmin = std::min(xmin, p.intensity), xmax = std::max(xmax, p.intensity);
    if (p.flops_per_s > 0) ymin = std::min(ymin, p.flops_per_s), ymax = std::max(ymax, p.flops_per_s);
  }
  Axes a{};
  a.x_lo = static_cast<int>(std::floor(std::log10(xmin))) - 1;
  a.x_hi = std::max(static_cast<int>(std::ceil(std::log10(xmax))) + 1, a.x_lo + 2);
  ymin = std::min(ymin, bandwidth * std::pow(10.0, a.x_lo));
  a.y_lo = static_cast<int>(std::floor(std::log10(ymin)));
  a.y_hi = std::max(static_cast<int>(std::ceil(std::log10(ymax * 2))), a.y_lo + 2);
  return a;
}

std::string power_label(int k) {
  return "10<tspan dy=\"-7\" font-size=\"10\">" + std::to_string(k) + "</tspan>";
}

void draw_axes(std::ostringstream& os, const Axes& a) {
  const double x0 = left, x1 = width - right, y0 = top, y1 = height - bottom;
  os << "<g stroke=\"#ddd\" stroke-width=\"1\">\n";
  for (int k = a.x_lo; k <= a.x_hi; ++k)
    os << "<line x1=\"" << fmt(a.x(std::pow(10.0, k))) << "\" y1=\"" << y0 << "\" x2=\"" << fmt(a.x(std::pow(10.0, k)))
       << "\" y2=\"" << y1 << "\"/>\n";
  for (int k = a.y_lo; k <= a.y_hi; ++k)
    os << "<line x1=\"" << x0 << "\" y1=\"" << fmt(a.y(std::pow(10.0, k))) << "\" x2=\"" << x1 << "\" y2=\""
       << fmt(a.y(std::pow(10.0, k))) << "\"/>\n";
  os << "</g>\n<rect x=\"" << x0 << "\" y=\"" << y0 << "\" width=\"" << x1 - x0 << "\" height=\"" << y1 - y0
     << "\" fill=\"none\" stroke=\"#000\"/>\n<g font-size=\"13\" fill=\"#000\">\n";
  for (int k = a.x_lo; k <= a.x_hi; ++k)
    os << "<text x=\"" << fmt(a.x(std::pow(10.0, k))) << "\" y=\"" << y1 + 22 << "\" text-anchor=\"middle\">"
       << power_label(k) << "</text>\n";
  for (int k = a.y_lo; k <= a.y_hi; ++k)
    os << "<text x=\"" << x0 - 8 << "\" y=\"" << fmt(a.y(std::pow(10.0, k)) + 5) << "\" text-anchor=\"end\">"
       << power_label(k) << "</text>\n";
  os << "<text x=\"" << (x0 + x1) / 2 << "\" y=\"" << height - 30
     << "\" text-anchor=\"middle\">arithmetic intensity (FLOP/byte)</text>\n"
     << "<text x=\"25\" y=\"" << (y0 + y1) / 2 << "\" text-anchor=\"middle\" transform=\"rotate(-90 25 "
     << (y0 + y1) / 2 << ")\">performance (FLOP/s)</text>\n</g>\n";
}

void draw_roofs(std::ostringstream& os, const Axes& a, double peak, double bandwidth, DType dtype) {
  const double ridge = peak / bandwidth;
  const double i0 = std::pow(10.0, a.x_lo), i1 = std::pow(10.0, a.x_hi);
  os << "<polyline fill=\"none\" stroke=\"#1f4e9c\" stroke-width=\"2.5\" points=\"" << fmt(a.x(i0)) << ','
     << fmt(a.y(bandwidth * i0)) << ' ' << fmt(a.x(ridge)) << ',' << fmt(a.y(peak)) << ' ' << fmt(a.x(i1)) << ','
     << fmt(a.y(peak)) << "\"/>\n";
  // The bandwidth label runs along the slope, just above it, halfway to the ridge.
  const double mid = std::sqrt(i0 * ridge), mx = a.x(mid), my = a.y(bandwidth * mid);
  const double angle = std::atan2(a.y(peak) - a.y(bandwidth * i0), a.x(ridge) - a.x(i0)) * 180 / 3.14159265358979;
  os << "<text x=\"" << fmt(mx) << "\" y=\"" << fmt(my - 6) << "\" transform=\"rotate(" << fmt(angle) << ' '
     << fmt(mx) << ' ' << fmt(my) << ")\" font-size=\"13\" fill=\"#1f4e9c\" text-anchor=\"middle\">memory: "
     << si(bandwidth, "B/s") << "</text>\n";
  os << "<text x=\"" << fmt(width - right - 8) << "\" y=\"" << fmt(a.y(peak) - 8)
     << "\" font-size=\"13\" fill=\"#1f4e9c\" text-anchor=\"end\">compute: " << si(peak, "FLOP/s") << " ("
     << name(dtype) << ")</text>\n";
  os << "<line x1=\"" << fmt(a.x(ridge)) << "\" y1=\"" << fmt(a.y(peak)) << "\" x2=\"" << fmt(a.x(ridge))
     << "\" y2=\"" << height - bottom << "\" stroke=\"#1f4e9c\" stroke-dasharray=\"4 4\"/>\n";
  os << "<circle cx=\"" << fmt(a.x(ridge)) << "\" cy=\"" << fmt(a.y(peak))
     << "\" r=\"5\" fill=\"#1f4e9c\"/>\n<text x=\"" << fmt(a.x(ridge) + 6) << "\" y=\"" << height - bottom - 8
     << "\" font-size=\"12\" fill=\"#1f4e9c\">ridge " << num(ridge) << " FLOP/B</text>\n";
}

void draw_point(std::ostringstream& os, const Axes& a, const RooflinePoint& p) {
  const bool on_scale = p.intensity > 0 && p.flops_per_s > 0;
  const double x = a.x(p.intensity > 0 ? p.intensity : std::pow(10.0, a.x_lo));
  const double y = a.y(p.flops_per_s > 0 ? p.flops_per_s : std::pow(10.0, a.y_lo));
  if (p.measured)
    os << "<rect class=\"measured\" x=\"" << fmt(x - 5) << "\" y=\"" << fmt(y - 5)
       << "\" width=\"10\" height=\"10\" fill=\"#c0392b\"/>\n";
  else
    os << "<circle class=\"bound\" cx=\"" << fmt(x) << "\" cy=\"" << fmt(y)
       << "\" r=\"5\" fill=\"#fff\" stroke=\"#2c7a2c\" stroke-width=\"2\"/>\n";
  os << "<text x=\"" << fmt(x + 9) << "\" y=\"" << fmt(y + 4) << "\" font-size=\"12\" fill=\""
     << (p.measured ? "#c0392b" : "#2c7a2c") << "\">" << escape(p.label) << (on_scale ? "" : " (off scale)")
     << "</text>\n";
}

void draw_legend(std::ostringstream& os) {
  const double x = left + 12, y = top + 16;
  os << "<g font-size=\"12\">\n<circle cx=\"" << x << "\" cy=\"" << y - 4
     << "\" r=\"5\" fill=\"#fff\" stroke=\"#2c7a2c\" stroke-width=\"2\"/>\n<text x=\"" << x + 10 << "\" y=\"" << y
     << "\">bound from the cost model</text>\n<rect x=\"" << x - 5 << "\" y=\"" << y + 11
     << "\" width=\"10\" height=\"10\" fill=\"#c0392b\"/>\n<text x=\"" << x + 10 << "\" y=\"" << y + 20
     << "\">measured</text>\n</g>\n";
}

}  // namespace

std::string roofline_svg(const DeviceSpec& device, DType dtype, const std::vector<RooflinePoint>& points) {
  const double peak = device.peak_for(dtype);
  if (!(device.bandwidth > 0)) throw Error("device '" + device.name + "' has no memory bandwidth");
  const Axes axes = choose_axes(peak, device.bandwidth, points);
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
     << "\" viewBox=\"0 0 " << width << ' ' << height << "\" font-family=\"sans-serif\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
     << "<text x=\"" << left << "\" y=\"28\" font-size=\"17\">Roofline: "
     << escape(device.description.empty() ? device.name : device.description) << " (" << name(dtype)
     << ")</text>\n<text x=\"" << left << "\" y=\"50\" font-size=\"12\" fill=\"#555\">peak " << si(peak, "FLOP/s")
     << ", bandwidth " << si(device.bandwidth, "B/s") << ", accelerator intensity "
     << num(peak / device.bandwidth) << " FLOP/B</text>\n";
  draw_axes(os, axes);
  draw_roofs(os, axes, peak, device.bandwidth, dtype);
  for (const RooflinePoint& p : points) draw_point(os, axes, p);
  draw_legend(os);
  os << "</svg>\n";
  return os.str();
}

void write_roofline_svg(const std::string& path, const DeviceSpec& device, DType dtype,
                        const std::vector<RooflinePoint>& points) {
  const std::string svg = roofline_svg(device, dtype, points);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << svg;
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      throw Error("cannot write the roofline plot '" + path + "' (writing " + tmp + " failed)");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error("cannot write the roofline plot '" + path + "' (renaming " + tmp + " failed)");
  }
}

}  // namespace einexpr
