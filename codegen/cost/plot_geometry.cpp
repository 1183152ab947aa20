// Boxes of text and marks on a plot, and whether they touch (plot_geometry.hpp).
#include "cost/plot_geometry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace einexpr::plot {

namespace {

#include "cost/font_metrics.inc"

int advance(char32_t c) {
  for (const auto& [code, width] : advances)
    if (code == c) return width;
  return units_per_em;  // not in the table: an em, wider than any glyph a label uses
}

/// The code points of UTF-8 text (a malformed byte counts as one character).
std::vector<char32_t> decode(std::string_view s) {
  std::vector<char32_t> out;
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 1;
    char32_t c = n == 1 ? b : b & (0x7F >> n);
    for (int k = 1; k < n && i + static_cast<std::size_t>(k) < s.size(); ++k)
      c = (c << 6) | (static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]) & 0x3F);
    out.push_back(c);
    i += static_cast<std::size_t>(n);
  }
  return out;
}

/// The extent of `s` projected on the axis (nx, ny).
std::pair<double, double> project(const Shape& s, double nx, double ny) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const Point& p : s.corners) {
    const double v = p.x * nx + p.y * ny;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return {lo, hi};
}

/// The edge normals of s (one for a segment), normalized.
void normals(const Shape& s, std::vector<Point>& out) {
  const std::size_t n = s.corners.size();
  for (std::size_t i = 0; i < (n == 2 ? 1 : n); ++i) {
    const Point a = s.corners[i], b = s.corners[(i + 1) % n];
    const double dx = b.x - a.x, dy = b.y - a.y, len = std::hypot(dx, dy);
    if (len > 0) out.push_back({-dy / len, dx / len});
  }
}

}  // namespace

Shape box(double x0, double y0, double x1, double y1) {
  return {{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}};
}

Shape segment(Point a, Point b) { return {{a, b}}; }

bool overlap(const Shape& a, const Shape& b, double gap) {
  std::vector<Point> axes;
  normals(a, axes);
  normals(b, axes);
  // Two segments also need the axes along them: a segment's normal alone cannot separate
  // two parallel segments end to end.
  for (const Shape* s : {&a, &b})
    if (s->corners.size() == 2) {
      const double dx = s->corners[1].x - s->corners[0].x, dy = s->corners[1].y - s->corners[0].y;
      const double len = std::hypot(dx, dy);
      if (len > 0) axes.push_back({dx / len, dy / len});
    }
  for (const Point& n : axes) {
    const auto [alo, ahi] = project(a, n.x, n.y);
    const auto [blo, bhi] = project(b, n.x, n.y);
    if (ahi + gap < blo || bhi + gap < alo) return false;
  }
  return true;
}

double text_width(std::string_view text, double size) {
  double units = 0;
  for (char32_t c : decode(text)) units += advance(c);
  return units * size / units_per_em;
}

double text_ascent(double size) { return ascender * size / units_per_em; }
double text_descent(double size) { return -descender * size / units_per_em; }

Shape text_box(double x, double y, std::string_view text, double size, Anchor anchor, double degrees, Point about) {
  const double w = text_width(text, size);
  const double x0 = anchor == Anchor::start ? x : anchor == Anchor::middle ? x - w / 2 : x - w;
  Shape s = box(x0, y - text_ascent(size), x0 + w, y + text_descent(size));
  if (degrees != 0) {
    const double r = degrees * 3.14159265358979323846 / 180, c = std::cos(r), si = std::sin(r);
    for (Point& p : s.corners) {
      const double dx = p.x - about.x, dy = p.y - about.y;
      p = {about.x + dx * c - dy * si, about.y + dx * si + dy * c};
    }
  }
  return s;
}

}  // namespace einexpr::plot
