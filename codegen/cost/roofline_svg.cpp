// A roofline plot as hand-written SVG: log-log axes with decade ticks, the bandwidth slope
// up to the ridge point, the compute roof for one dtype, and labelled points (hollow
// circles: bounds from the model; filled squares: measured, each joined by a dotted line to
// its bound, a hollow circle on the roof above it). Every label is placed where it touches no
// other label, mark or roof line (plot_geometry.hpp measures the boxes in DejaVu Sans, the
// font the SVG names): the places around its mark first, then the nearest free place on a
// grid over the plot, with a leader line.
// No dependencies.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>
#include <unistd.h>

#include "cost/plot_geometry.hpp"
#include "cost/units.hpp"
#include "einexpr/codegen/cost.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr {

namespace {

using detail::num;
using detail::si;
using plot::Anchor;
using plot::Shape;

constexpr double width = 820, height = 580;
constexpr double left = 100, right = 40, top = 70, bottom = 80;
constexpr double label_size = 12, roof_size = 13;
constexpr double mark = 5;  // half a mark's size
constexpr double gap = 2;   // the least room kept between a label and anything else

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

const char* anchor_name(Anchor a) { return a == Anchor::start ? "start" : a == Anchor::middle ? "middle" : "end"; }

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

/// A text element: where it is drawn, and (for a point's label placed away from it) the
/// leader line from its mark.
struct Label {
  std::string text, color;
  double x = 0, y = 0, size = label_size;
  Anchor anchor = Anchor::start;
  double degrees = 0;
  plot::Point about;
  std::optional<std::pair<plot::Point, plot::Point>> leader;
  std::vector<std::pair<plot::Point, plot::Point>> leader_options;  // placing: the first clear one is the leader
  /// Its lines ('\n' separates them), each line_height below the last.
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (std::size_t at = 0;;) {
      const std::size_t nl = text.find('\n', at);
      out.push_back(text.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
      if (nl == std::string::npos) return out;
      at = nl + 1;
    }
  }
  double line_height() const { return std::ceil(plot::text_ascent(size) + plot::text_descent(size)) + 1; }
  /// The box around every line (a rotated label has one line).
  Shape shape() const {
    const std::vector<std::string> ls = lines();
    if (ls.size() == 1) return plot::text_box(x, y, text, size, anchor, degrees, about);
    double x0 = 1e300, x1 = -1e300;
    for (const std::string& l : ls) {
      const Shape b = plot::text_box(x, y, l, size, anchor);
      x0 = std::min(x0, b.corners[0].x);
      x1 = std::max(x1, b.corners[2].x);
    }
    return plot::box(x0, y - plot::text_ascent(size), x1,
                     y + static_cast<double>(ls.size() - 1) * line_height() + plot::text_descent(size));
  }
};

Label make_label(std::string text, std::string color, double x = 0, double y = 0, double size = label_size,
                 Anchor anchor = Anchor::start, double degrees = 0, plot::Point about = {}) {
  Label l;
  l.text = std::move(text);
  l.color = std::move(color);
  l.x = x, l.y = y, l.size = size, l.anchor = anchor, l.degrees = degrees, l.about = about;
  return l;
}

/// What is on the plot so far: solid things (marks, labels, the legend) and lines (roofs,
/// the ridge, a measured point's line to its bound, leader lines). A label goes only where it
/// fits inside the frame and touches neither; a leader line may cross lines, not solid things.
class Layout {
 public:
  void take(Shape s) { solid_.push_back(std::move(s)); }
  /// A point's mark (solid), remembered by its centre.
  void take_mark(plot::Point c) {
    marks_.push_back(c);
    mark_slot_.push_back(solid_.size());
    take(plot::box(c.x - mark, c.y - mark, c.x + mark, c.y + mark));
  }
  void take_line(Shape s) { lines_.push_back(std::move(s)); }
  /// How many labels found no free place (and overlap something).
  int fallbacks() const { return fallbacks_; }
  bool fits(const Shape& s) const {
    for (const plot::Point& p : s.corners)
      if (p.x < left + gap || p.x > width - right - gap || p.y < top + gap || p.y > height - bottom - gap) return false;
    return clear_of(s, solid_) && clear_of(s, lines_);
  }
  /// The first candidate that fits (taken), or the first one when none does. A leader from
  /// `from` may cross the marks that touch the mark there (points drawn on top of each other).
  Label place(const std::vector<Label>& candidates, std::optional<plot::Point> from = {}) {
    std::vector<Shape> leader_blocks;
    for (std::size_t i = 0, m = 0; i < solid_.size(); ++i) {
      const bool is_mark = m < marks_.size() && i == mark_slot_[m];
      if (is_mark) ++m;
      if (is_mark && from && std::abs(marks_[m - 1].x - from->x) <= 2 * mark + gap &&
          std::abs(marks_[m - 1].y - from->y) <= 2 * mark + gap)
        continue;
      leader_blocks.push_back(solid_[i]);
    }
    for (const Label& c : candidates) {
      const Shape box = c.shape();
      if (!fits(box)) continue;
      Label placed = c;
      placed.leader_options.clear();
      if (!c.leader_options.empty()) {
        for (const auto& option : c.leader_options)
          if (clear_of(plot::segment(option.first, option.second), leader_blocks) && !crosses_own(option, box)) {
            placed.leader = option;
            break;
          }
        if (!placed.leader) continue;
      }
      take(box);
      if (placed.leader) take_line(plot::segment(placed.leader->first, placed.leader->second));
      return placed;
    }
    ++fallbacks_;
    take(candidates.front().shape());
    return candidates.front();
  }

 private:
  /// Whether a leader passes through its own label's box (it ends beside it).
  static bool crosses_own(const std::pair<plot::Point, plot::Point>& leader, const Shape& box) {
    const double dx = leader.second.x - leader.first.x, dy = leader.second.y - leader.first.y;
    const double len = std::hypot(dx, dy);
    if (len <= 3) return false;
    const plot::Point short_end{leader.second.x - 3 * dx / len, leader.second.y - 3 * dy / len};
    return plot::overlap(plot::segment(leader.first, short_end), box);
  }
  static bool clear_of(const Shape& s, const std::vector<Shape>& things) {
    return std::none_of(things.begin(), things.end(), [&](const Shape& t) { return plot::overlap(s, t, gap); });
  }
  int fallbacks_ = 0;
  std::vector<Shape> solid_, lines_;
  std::vector<plot::Point> marks_;
  std::vector<std::size_t> mark_slot_;  // where each mark is in solid_
};

/// The places a point's label may go: beside its mark on either side, above and below, at
/// the corners.
std::vector<Label> around(const Label& base, double x, double y) {
  std::vector<Label> out;
  const double a = plot::text_ascent(base.size), d = plot::text_descent(base.size);
  auto at = [&](double lx, double ly, Anchor anchor) {
    Label l = base;
    l.x = lx, l.y = ly, l.anchor = anchor;
    out.push_back(l);
  };
  const double r = mark + 4, mid = (a - d) / 2;  // baseline that centres the box on the mark
  at(x + r, y + mid, Anchor::start);
  at(x - r, y + mid, Anchor::end);
  at(x, y - r - d, Anchor::middle);
  at(x, y + r + a, Anchor::middle);
  at(x + r, y - r - d, Anchor::start);
  at(x + r, y + r + a, Anchor::start);
  at(x - r, y - r - d, Anchor::end);
  at(x - r, y + r + a, Anchor::end);
  return out;
}

/// Farther out, with a leader line from the mark to the box's nearest point: every place on
/// an 8-pixel grid over the plot, nearest first.
std::vector<Label> farther(const Label& base, double x, double y) {
  struct Place {
    double distance;
    Label label;
  };
  std::vector<Place> places;
  double w = 0;
  for (const std::string& line : base.lines()) w = std::max(w, plot::text_width(line, base.size));
  const double a = plot::text_ascent(base.size);
  for (double gx = left; gx + w <= width - right; gx += 8)
    for (double gy = top + a; gy <= height - bottom; gy += 8) {
      Label l = base;
      l.x = gx, l.y = gy, l.anchor = Anchor::start;
      const plot::Shape box = l.shape();
      const double bx0 = box.corners[0].x, by0 = box.corners[0].y, bx1 = box.corners[2].x, by1 = box.corners[2].y;
      const double nx = std::clamp(x, bx0, bx1), ny = std::clamp(y, by0, by1);
      const double dist = std::hypot(nx - x, ny - y);
      if (dist < 3 * mark) continue;  // as near as that: around() had it
      // The leader ends at the box's nearest point, else at a corner or an edge's middle.
      for (const plot::Point to : {plot::Point{nx, ny}, plot::Point{bx0, by0}, plot::Point{bx1, by0},
                                   plot::Point{bx0, by1}, plot::Point{bx1, by1}, plot::Point{(bx0 + bx1) / 2, by0},
                                   plot::Point{(bx0 + bx1) / 2, by1}, plot::Point{bx0, (by0 + by1) / 2},
                                   plot::Point{bx1, (by0 + by1) / 2}}) {
        const double d = std::hypot(to.x - x, to.y - y);
        if (d < 3 * mark) continue;
        const double ux = (to.x - x) / d, uy = (to.y - y) / d, start = 1.5 * mark + 2;
        l.leader_options.push_back({plot::Point{x + start * ux, y + start * uy}, plot::Point{to.x - 2 * ux, to.y - 2 * uy}});
      }
      places.push_back({dist, l});
    }
  std::stable_sort(places.begin(), places.end(), [](const Place& p, const Place& q) { return p.distance < q.distance; });
  std::vector<Label> out;
  for (Place& p : places) out.push_back(std::move(p.label));
  return out;
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
  os << "</g>\n<rect class=\"frame\" x=\"" << x0 << "\" y=\"" << y0 << "\" width=\"" << x1 - x0 << "\" height=\""
     << y1 - y0 << "\" fill=\"none\" stroke=\"#000\"/>\n";
  for (int k = a.x_lo; k <= a.x_hi; ++k)
    os << "<text x=\"" << fmt(a.x(std::pow(10.0, k))) << "\" y=\"" << y1 + 28
       << "\" font-size=\"13\" text-anchor=\"middle\">" << power_label(k) << "</text>\n";
  for (int k = a.y_lo; k <= a.y_hi; ++k)
    os << "<text x=\"" << x0 - 8 << "\" y=\"" << fmt(a.y(std::pow(10.0, k)) + 5)
       << "\" font-size=\"13\" text-anchor=\"end\">" << power_label(k) << "</text>\n";
  os << "<text x=\"" << (x0 + x1) / 2 << "\" y=\"" << height - 30
     << "\" font-size=\"13\" text-anchor=\"middle\">arithmetic intensity (FLOP/byte)</text>\n"
     << "<text x=\"25\" y=\"" << (y0 + y1) / 2 << "\" font-size=\"13\" text-anchor=\"middle\" transform=\"rotate(-90 25 "
     << (y0 + y1) / 2 << ")\">performance (FLOP/s)</text>\n";
}

void draw_label(std::ostringstream& os, const Label& l, const char* cls) {
  if (l.leader)
    os << "<line class=\"leader\" x1=\"" << fmt(l.leader->first.x) << "\" y1=\"" << fmt(l.leader->first.y) << "\" x2=\""
       << fmt(l.leader->second.x) << "\" y2=\"" << fmt(l.leader->second.y) << "\" stroke=\"" << l.color
       << "\" stroke-width=\"0.8\"/>\n";
  const std::vector<std::string> lines = l.lines();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    os << "<text class=\"" << cls << "\" x=\"" << fmt(l.x) << "\" y=\""
       << fmt(l.y + static_cast<double>(i) * l.line_height()) << "\" font-size=\"" << l.size << "\" text-anchor=\""
       << anchor_name(l.anchor) << "\" fill=\"" << l.color << "\"";
    if (l.degrees != 0)
      os << " transform=\"rotate(" << fmt(l.degrees) << ' ' << fmt(l.about.x) << ' ' << fmt(l.about.y) << ")\"";
    os << ">" << escape(lines[i]) << "</text>\n";
  }
}

/// Where each point's mark goes, and (measured points) its bound's.
struct Mark {
  double x, y;
  bool measured, on_scale;
  std::optional<double> bound_y;  // measured: the roofline bound at its intensity
  std::string text;
};

std::vector<Mark> marks_of(const Axes& a, const std::vector<RooflinePoint>& points, double peak, double bandwidth) {
  std::vector<Mark> out;
  for (const RooflinePoint& p : points) {
    Mark m;
    m.on_scale = p.intensity > 0 && p.flops_per_s > 0;
    m.x = a.x(p.intensity > 0 ? p.intensity : std::pow(10.0, a.x_lo));
    m.y = a.y(p.flops_per_s > 0 ? p.flops_per_s : std::pow(10.0, a.y_lo));
    m.measured = p.measured;
    m.text = p.label + (m.on_scale ? "" : " (off scale)");
    if (p.measured && m.on_scale) {
      const double bound = std::min(peak, p.intensity * bandwidth);
      m.bound_y = a.y(bound);
      char share[48];
      std::snprintf(share, sizeof share, "\n%.2f of its bound", p.flops_per_s / bound);
      m.text += share;
    }
    out.push_back(m);
  }
  return out;
}

void draw_marks(std::ostringstream& os, const std::vector<Mark>& marks) {
  for (const Mark& m : marks) {
    if (m.bound_y) {
      os << "<line class=\"to-bound\" x1=\"" << fmt(m.x) << "\" y1=\"" << fmt(*m.bound_y) << "\" x2=\"" << fmt(m.x)
         << "\" y2=\"" << fmt(m.y) << "\" stroke=\"#c0392b\" stroke-dasharray=\"2 3\"/>\n";
      os << "<circle class=\"bound\" cx=\"" << fmt(m.x) << "\" cy=\"" << fmt(*m.bound_y) << "\" r=\"" << mark
         << "\" fill=\"#fff\" stroke=\"#c0392b\" stroke-width=\"2\"/>\n";
    }
    if (m.measured)
      os << "<rect class=\"measured\" x=\"" << fmt(m.x - mark) << "\" y=\"" << fmt(m.y - mark) << "\" width=\""
         << 2 * mark << "\" height=\"" << 2 * mark << "\" fill=\"#c0392b\"/>\n";
    else
      os << "<circle class=\"bound\" cx=\"" << fmt(m.x) << "\" cy=\"" << fmt(m.y) << "\" r=\"" << mark
         << "\" fill=\"#fff\" stroke=\"#2c7a2c\" stroke-width=\"2\"/>\n";
  }
}

/// The roof lines and the legend go on the layout first; then the roofs' labels, sliding
/// along their lines to a free place; then the points' labels.
void draw_plot(std::ostringstream& os, const Axes& a, double peak, double bandwidth, DType dtype,
               const std::vector<RooflinePoint>& points) {
  Layout layout;
  const double ridge = peak / bandwidth;
  const double i0 = std::pow(10.0, a.x_lo), i1 = std::pow(10.0, a.x_hi);
  const plot::Point slope0{a.x(i0), a.y(bandwidth * i0)}, knee{a.x(ridge), a.y(peak)}, end{a.x(i1), a.y(peak)};
  const plot::Point foot{knee.x, height - bottom};
  layout.take_line(plot::segment(slope0, knee));
  layout.take_line(plot::segment(knee, end));
  layout.take_line(plot::segment(knee, foot));
  layout.take_mark(knee);  // the ridge's dot
  const std::vector<Mark> marks = marks_of(a, points, peak, bandwidth);
  for (const Mark& m : marks) {
    layout.take_mark({m.x, m.y});
    if (m.bound_y) {
      layout.take_mark({m.x, *m.bound_y});
      layout.take_line(plot::segment({m.x, *m.bound_y}, {m.x, m.y}));
    }
  }
  // The legend: top left, else top right.
  const bool any_measured = std::any_of(marks.begin(), marks.end(), [](const Mark& m) { return m.measured; });
  const std::vector<std::string> entries = {"bound from the cost model", "measured",
                                            "the bound of a measured point"};
  const int rows = any_measured ? 3 : 2;
  double legend_w = 0;
  for (int i = 0; i < rows; ++i) legend_w = std::max(legend_w, 20 + plot::text_width(entries[static_cast<std::size_t>(i)], 12));
  double lx = left + 8, ly = top + 8;
  if (!layout.fits(plot::box(lx, ly, lx + legend_w, ly + 18.0 * rows))) lx = width - right - 8 - legend_w;
  layout.take(plot::box(lx, ly, lx + legend_w, ly + 18.0 * rows));
  const auto blue = std::string("#1f4e9c");
  // The compute roof's label: above the roof at its right end, else below, sliding left.
  std::vector<Label> compute;
  const std::string compute_text = "compute: " + si(peak, "FLOP/s") + " (" + std::string(name(dtype)) + ")";
  for (double shift = 0; shift < end.x - knee.x; shift += 20)
    for (double dy : {-6.0 - plot::text_descent(roof_size), 6.0 + plot::text_ascent(roof_size),
                      -20.0 - plot::text_descent(roof_size), 20.0 + plot::text_ascent(roof_size)})
      compute.push_back(make_label(compute_text, blue, end.x - 8 - shift, end.y + dy, roof_size, Anchor::end));
  // The bandwidth's label runs along the slope, just above it (else below), where it is free.
  std::vector<Label> memory;
  const double angle = std::atan2(knee.y - slope0.y, knee.x - slope0.x) * 180 / 3.14159265358979;
  for (double t : {0.5, 0.45, 0.55, 0.4, 0.6, 0.35, 0.65, 0.3, 0.7, 0.25, 0.75, 0.2, 0.8, 0.15, 0.85, 0.1, 0.9})
    for (double off : {-6.0, 6.0 + plot::text_ascent(roof_size), -20.0, 20.0 + plot::text_ascent(roof_size)}) {
      const double mx = slope0.x + t * (knee.x - slope0.x), my = slope0.y + t * (knee.y - slope0.y);
      memory.push_back(
          make_label("memory: " + si(bandwidth, "B/s"), blue, mx, my + off, roof_size, Anchor::middle, angle, {mx, my}));
    }
  // The ridge's label: beside the dashed line near the axis, right or left, else higher up.
  std::vector<Label> ridge_labels;
  const std::string ridge_text = "ridge " + num(ridge) + " FLOP/B";
  for (double up = 8; up < foot.y - knee.y; up += 18)
    for (Anchor side : {Anchor::start, Anchor::end})
      ridge_labels.push_back(make_label(ridge_text, blue, knee.x + (side == Anchor::start ? 6 : -6), foot.y - up, 12, side));
  // Where no place along its line is free, a roof's label goes to the nearest free place,
  // with a leader line to the roof.
  for (Label& l : farther(compute.front(), end.x - 40, end.y)) compute.push_back(std::move(l));
  const plot::Point half{(slope0.x + knee.x) / 2, (slope0.y + knee.y) / 2};
  for (Label& l : farther(make_label(memory.front().text, blue, 0, 0, roof_size), half.x, half.y))
    memory.push_back(std::move(l));
  for (Label& l : farther(ridge_labels.front(), foot.x, foot.y - 20)) ridge_labels.push_back(std::move(l));
  const Label compute_label = layout.place(compute), memory_label = layout.place(memory),
              ridge_label = layout.place(ridge_labels);
  // The points' labels, one at a time, each where its first free place is; where one finds
  // none (the places a label takes early can leave a crowded point none), the points that
  // found none go first and the labels are placed again, a few times, keeping the best.
  std::vector<std::vector<Label>> places;
  for (const Mark& m : marks) {
    const Label base = make_label(m.text, m.measured ? "#c0392b" : "#2c7a2c");
    places.push_back(around(base, m.x, m.y));
    for (Label& l : farther(base, m.x, m.y)) places.back().push_back(std::move(l));
  }
  std::vector<std::size_t> order(marks.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::vector<Label> point_labels;
  int best = -1;
  for (int attempt = 0; attempt < 6 && best != 0; ++attempt) {
    Layout trial = layout;
    std::vector<Label> placed(marks.size());
    std::vector<std::size_t> failed, fine;
    for (std::size_t i : order) {
      const int before = trial.fallbacks();
      placed[i] = trial.place(places[i], plot::Point{marks[i].x, marks[i].y});
      (trial.fallbacks() > before ? failed : fine).push_back(i);
    }
    if (best < 0 || static_cast<int>(failed.size()) < best) {
      best = static_cast<int>(failed.size());
      point_labels = placed;
    }
    order = failed;
    order.insert(order.end(), fine.begin(), fine.end());
  }
  // Drawn: roofs, marks, labels, legend.
  os << "<polyline class=\"roof\" fill=\"none\" stroke=\"" << blue << "\" stroke-width=\"2.5\" points=\""
     << fmt(slope0.x) << ',' << fmt(slope0.y) << ' ' << fmt(knee.x) << ',' << fmt(knee.y) << ' ' << fmt(end.x) << ','
     << fmt(end.y) << "\"/>\n";
  os << "<line class=\"ridge\" x1=\"" << fmt(knee.x) << "\" y1=\"" << fmt(knee.y) << "\" x2=\"" << fmt(foot.x)
     << "\" y2=\"" << foot.y << "\" stroke=\"" << blue << "\" stroke-dasharray=\"4 4\"/>\n";
  os << "<circle cx=\"" << fmt(knee.x) << "\" cy=\"" << fmt(knee.y) << "\" r=\"" << mark << "\" fill=\"" << blue
     << "\"/>\n";
  draw_marks(os, marks);
  draw_label(os, compute_label, "roof");
  draw_label(os, memory_label, "roof");
  draw_label(os, ridge_label, "roof");
  for (const Label& l : point_labels) draw_label(os, l, "point");
  const char* colors[] = {"#2c7a2c", "#c0392b", "#c0392b"};
  for (int i = 0; i < rows; ++i) {
    const double cy = ly + 9 + 18.0 * i;
    if (i == 1)
      os << "<rect x=\"" << fmt(lx + 1) << "\" y=\"" << fmt(cy - mark) << "\" width=\"" << 2 * mark << "\" height=\""
         << 2 * mark << "\" fill=\"#c0392b\"/>\n";
    else
      os << "<circle cx=\"" << fmt(lx + 6) << "\" cy=\"" << fmt(cy) << "\" r=\"" << mark
         << "\" fill=\"#fff\" stroke=\"" << colors[i] << "\" stroke-width=\"2\"/>\n";
    os << "<text class=\"legend\" x=\"" << fmt(lx + 18) << "\" y=\"" << fmt(cy + 4)
       << "\" font-size=\"12\" text-anchor=\"start\" fill=\"#000\">" << entries[static_cast<std::size_t>(i)]
       << "</text>\n";
  }
}

/// `text`, cut with "…" to fit `room` pixels at `size`.
std::string fit(std::string text, double size, double room) {
  if (plot::text_width(text, size) <= room) return text;
  while (!text.empty() && plot::text_width(text + "…", size) > room) {
    text.pop_back();
    while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80) text.pop_back();  // whole UTF-8
    if (!text.empty() && static_cast<unsigned char>(text.back()) >= 0xC0) text.pop_back();
  }
  return text + "…";
}

}  // namespace

std::string roofline_svg(const DeviceSpec& device, DType dtype, const std::vector<RooflinePoint>& points) {
  const double peak = device.peak_for(dtype);
  if (!(device.bandwidth > 0)) throw Error("device '" + device.name + "' has no memory bandwidth");
  const Axes axes = choose_axes(peak, device.bandwidth, points);
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
     << "\" viewBox=\"0 0 " << width << ' ' << height << "\" font-family=\"DejaVu Sans, sans-serif\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
     << "<text x=\"" << left << "\" y=\"28\" font-size=\"17\" text-anchor=\"start\">"
     << escape(fit("Roofline: " + (device.description.empty() ? device.name : device.description) + " (" +
                       std::string(name(dtype)) + ")",
                   17, width - left - 10))
     << "</text>\n<text x=\"" << left << "\" y=\"50\" font-size=\"12\" text-anchor=\"start\" fill=\"#555\">peak "
     << si(peak, "FLOP/s") << ", bandwidth " << si(device.bandwidth, "B/s") << ", accelerator intensity "
     << num(peak / device.bandwidth) << " FLOP/B</text>\n";
  draw_axes(os, axes);
  draw_plot(os, axes, peak, device.bandwidth, dtype, points);
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
