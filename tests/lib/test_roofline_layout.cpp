// Roofline plots that can be read: the SVG is parsed back, every text element's box is
// measured from the font metrics the SVG names (DejaVu Sans, plot_geometry.hpp's table), and
// no box may touch another, a point's mark, a roof line, the ridge line, a measured point's
// line to its bound or the frame; a leader line (which may cross lines) crosses no label but
// its own and no mark but its own point's. Checked on the
// lecture demo's two plots (examples/lecture: H100 bf16 bounds; this CPU's measured matmuls,
// at a range of measured rates) and on crowded random plots. Each measured point is drawn
// with its bound.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "cost/plot_geometry.hpp"
#include "einexpr/codegen/cost.hpp"
#include "einexpr/einexpr.hpp"
#include "sanitized.hpp"

using namespace einexpr;
using PlotShape = plot::Shape;

namespace {

struct Parsed {
  std::vector<std::pair<std::string, PlotShape>> texts;  // (content, box)
  std::vector<PlotShape> marks, lines, leaders;
  int bounds_of_measured = 0;
};

/// The value of attribute `name` (name="value", at the start or after white space), or "". A
/// plain search: a regex compiled per lookup was a quarter of these tests' time under ASan.
std::string attribute(const std::string& attrs, const std::string& name) {
  const std::string key = name + "=\"";
  for (std::size_t at = attrs.find(key); at != std::string::npos; at = attrs.find(key, at + 1)) {
    if (at > 0 && !std::isspace(static_cast<unsigned char>(attrs[at - 1]))) continue;
    const std::size_t begin = at + key.size(), end = attrs.find('"', begin);
    if (end == std::string::npos) return {};
    return attrs.substr(begin, end - begin);
  }
  return {};
}
double number(const std::string& attrs, const std::string& name) {
  const std::string v = attribute(attrs, name);
  REQUIRE_FALSE(v.empty());
  return std::stod(v);
}

std::string unescape(std::string s) {
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""},
                                 {"&amp;", "&"}})
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
      s.replace(at, from.size(), to);
  return s;
}

/// A text element's box: its runs (the text, then a <tspan dy font-size> run) side by side.
PlotShape text_shape(const std::string& attrs, const std::string& content) {
  const double x = number(attrs, "x"), y = number(attrs, "y"), size = number(attrs, "font-size");
  const std::string anchor = attribute(attrs, "text-anchor");
  REQUIRE((anchor == "start" || anchor == "middle" || anchor == "end"));
  struct Run {
    std::string text;
    double size, dy;
  };
  std::vector<Run> runs;
  const std::regex tspan("<tspan dy=\"([-0-9.]+)\" font-size=\"([0-9.]+)\">([^<]*)</tspan>");
  std::smatch m;
  if (std::regex_search(content, m, tspan)) {
    runs.push_back({unescape(m.prefix().str()), size, 0});
    runs.push_back({unescape(m[3].str()), std::stod(m[2].str()), std::stod(m[1].str())});
  } else {
    REQUIRE(content.find('<') == std::string::npos);
    runs.push_back({unescape(content), size, 0});
  }
  double w = 0, top = 1e9, bot = -1e9;
  for (const Run& r : runs) {
    w += plot::text_width(r.text, r.size);
    top = std::min(top, y + r.dy - plot::text_ascent(r.size));
    bot = std::max(bot, y + r.dy + plot::text_descent(r.size));
  }
  const double x0 = anchor == "start" ? x : anchor == "middle" ? x - w / 2 : x - w;
  PlotShape s = plot::box(x0, top, x0 + w, bot);
  const std::string transform = attribute(attrs, "transform");
  if (!transform.empty()) {
    double a = 0, cx = 0, cy = 0;
    REQUIRE(std::sscanf(transform.c_str(), "rotate(%lf %lf %lf)", &a, &cx, &cy) == 3);
    const double r = a * 3.14159265358979323846 / 180;
    for (plot::Point& p : s.corners) {
      const double dx = p.x - cx, dy = p.y - cy;
      p = {cx + dx * std::cos(r) - dy * std::sin(r), cy + dx * std::sin(r) + dy * std::cos(r)};
    }
  }
  return s;
}

Parsed parse(const std::string& svg) {
  Parsed p;
  const std::regex text("<text([^>]*)>(.*?)</text>"), circle("<circle([^>]*)/>"), rect("<rect([^>]*)/>"),
      line("<line([^>]*)/>"), polyline("<polyline([^>]*)/>");
  for (std::sregex_iterator it(svg.begin(), svg.end(), text), end; it != end; ++it)
    p.texts.emplace_back(unescape((*it)[2].str()), text_shape((*it)[1].str(), (*it)[2].str()));
  for (std::sregex_iterator it(svg.begin(), svg.end(), circle), end; it != end; ++it) {
    const std::string a = (*it)[1].str();
    const double cx = number(a, "cx"), cy = number(a, "cy"), r = number(a, "r");
    p.marks.push_back(plot::box(cx - r, cy - r, cx + r, cy + r));
  }
  for (std::sregex_iterator it(svg.begin(), svg.end(), rect), end; it != end; ++it) {
    const std::string a = (*it)[1].str();
    if (attribute(a, "x").empty()) continue;  // the background
    const double x = number(a, "x"), y = number(a, "y"), w = number(a, "width"), h = number(a, "height");
    if (attribute(a, "class") == "frame") {
      for (const PlotShape& s : {plot::segment({x, y}, {x + w, y}), plot::segment({x + w, y}, {x + w, y + h}),
                             plot::segment({x + w, y + h}, {x, y + h}), plot::segment({x, y + h}, {x, y})})
        p.lines.push_back(s);
    } else {
      p.marks.push_back(plot::box(x, y, x + w, y + h));
    }
  }
  for (std::sregex_iterator it(svg.begin(), svg.end(), line), end; it != end; ++it) {
    const std::string a = (*it)[1].str();
    const std::string cls = attribute(a, "class");
    if (cls.empty()) continue;  // grid lines
    const PlotShape s = plot::segment({number(a, "x1"), number(a, "y1")}, {number(a, "x2"), number(a, "y2")});
    (cls == "leader" ? p.leaders : p.lines).push_back(s);
    if (cls == "to-bound") ++p.bounds_of_measured;
  }
  for (std::sregex_iterator it(svg.begin(), svg.end(), polyline), end; it != end; ++it) {
    std::istringstream in(attribute((*it)[1].str(), "points"));
    std::vector<plot::Point> pts;
    for (double x, y; in >> x && in.ignore(1) && in >> y;) pts.push_back({x, y});
    for (std::size_t i = 1; i < pts.size(); ++i) p.lines.push_back(plot::segment(pts[i - 1], pts[i]));
  }
  return p;
}

/// With EINEXPR_ROOFLINE_DUMP=DIR, the plots are also written to DIR/NAME.svg (to look at).
void dump(const std::string& name, const std::string& svg) {
  if (const char* dir = std::getenv("EINEXPR_ROOFLINE_DUMP")) std::ofstream(std::string(dir) + "/" + name + ".svg") << svg;
}

/// Every collision on the plot, as "A overlaps B" lines (empty when it can be read).
std::vector<std::string> collisions(const std::string& svg) {
  const Parsed p = parse(svg);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < p.texts.size(); ++i) {
    for (const plot::Point& c : p.texts[i].second.corners)
      if (c.x < 0 || c.x > 820 || c.y < 0 || c.y > 580) {
        out.push_back("'" + p.texts[i].first + "' runs off the 820 x 580 picture");
        break;
      }
    for (std::size_t j = i + 1; j < p.texts.size(); ++j)
      if (plot::overlap(p.texts[i].second, p.texts[j].second))
        out.push_back("'" + p.texts[i].first + "' overlaps '" + p.texts[j].first + "'");
    for (const PlotShape& m : p.marks)
      if (plot::overlap(p.texts[i].second, m)) out.push_back("'" + p.texts[i].first + "' overlaps a mark");
    for (const PlotShape& l : p.lines)
      if (plot::overlap(p.texts[i].second, l)) out.push_back("'" + p.texts[i].first + "' crosses a line");
  }
  for (const PlotShape& l : p.leaders) {
    // Its own label is the one nearest its far end (it ends a pixel or two from the box).
    const plot::Point tip = l.corners[1];
    std::size_t own = 0;
    double nearest = 1e300;
    for (std::size_t i = 0; i < p.texts.size(); ++i) {
      const PlotShape& b = p.texts[i].second;
      double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
      for (const plot::Point& c : b.corners) x0 = std::min(x0, c.x), x1 = std::max(x1, c.x), y0 = std::min(y0, c.y), y1 = std::max(y1, c.y);
      const double d = std::hypot(tip.x - std::clamp(tip.x, x0, x1), tip.y - std::clamp(tip.y, y0, y1));
      if (d < nearest) nearest = d, own = i;
    }
    for (std::size_t i = 0; i < p.texts.size(); ++i)
      if (i != own && plot::overlap(p.texts[i].second, l)) out.push_back("a leader line crosses '" + p.texts[i].first + "'");
    // It may cross the marks drawn on top of its own point's (the mark nearest its start).
    const plot::Point from = l.corners[0];
    auto centre = [](const PlotShape& m) { return plot::Point{(m.corners[0].x + m.corners[2].x) / 2, (m.corners[0].y + m.corners[2].y) / 2}; };
    plot::Point mine{1e300, 1e300};
    for (const PlotShape& m : p.marks)
      if (std::hypot(centre(m).x - from.x, centre(m).y - from.y) < std::hypot(mine.x - from.x, mine.y - from.y)) mine = centre(m);
    for (const PlotShape& m : p.marks)
      if (plot::overlap(m, l) && (std::abs(centre(m).x - mine.x) > 12 || std::abs(centre(m).y - mine.y) > 12))
        out.push_back("a leader line crosses a mark");
  }
  return out;
}

/// The lecture demo's H100 plot (examples/lecture/compute.cpp's arithmetic_intensity()).
std::vector<RooflinePoint> lecture_h100() {
  const DeviceSpec& h100 = find_device("h100");
  const std::int64_t n = 1024 * 1024, m = 1024;
  const std::pair<const char*, Cost> rows[] = {
      {"ReLU (n=1024^2)", cost_map(UnaryOp::relu, {n}, DType::bf16)},
      {"GELU (n=1024^2)", cost_map(UnaryOp::gelu, {n}, DType::bf16)},
      {"dot product (n=1024^2)", cost_einsum("i, i ->", {{"i", n}}, DType::bf16)},
      {"matrix-vector (n=1024)", cost_einsum("i, i j -> j", {{"i", m}, {"j", m}}, DType::bf16)},
      {"matrix-matrix (n=1024)", cost_einsum("i j, j k -> i k", {{"i", m}, {"j", m}, {"k", m}}, DType::bf16)},
  };
  std::vector<RooflinePoint> points;
  for (const auto& [label, cost] : rows) {
    const Roofline rl = roofline(cost, h100);
    points.push_back({label, cost.intensity(), rl.compute_bound ? rl.peak_flops : rl.intensity * rl.bandwidth, false});
  }
  return points;
}

}  // namespace

TEST_CASE("the lecture's H100 roofline: no label touches another, a mark or a line", "[roofline][layout]") {
  const std::string svg = roofline_svg(find_device("h100"), DType::bf16, lecture_h100());
  CAPTURE(svg);
  dump("lecture_h100", svg);
  CHECK(collisions(svg) == std::vector<std::string>{});
  CHECK(parse(svg).texts.size() >= 5 + 3 + 2);  // the points', the roofs', the legend's
}

TEST_CASE("the lecture's measured matmuls on the CPU roofline, at any measured rate, with their bounds",
          "[roofline][layout]") {
  const DeviceSpec& cpu = find_device("cpu");
  const Cost small = cost_einsum("b d, d k -> b k", {{"b", 1024}, {"d", 256}, {"k", 64}});
  const Cost big = cost_einsum("b d, d k -> b k", {{"b", 1024}, {"d", 1024}, {"k", 1024}});
  for (double mfu_small : {0.018, 0.2, 0.5, 0.87, 1.0})
    for (double mfu_big : {0.05, 0.5, 0.9, 1.0}) {
      CAPTURE(mfu_small, mfu_big);
      const double peak = cpu.peak_for(DType::f32);
      const std::vector<RooflinePoint> points = {
          {"b d, d k -> b k  1024x256x64", small.intensity(), mfu_small * std::min(peak, small.intensity() * cpu.bandwidth), true},
          {"b d, d k -> b k  1024x1024x1024", big.intensity(), mfu_big * std::min(peak, big.intensity() * cpu.bandwidth), true},
      };
      const std::string svg = roofline_svg(cpu, DType::f32, points);
      CAPTURE(svg);
      dump("lecture_cpu_" + std::to_string(mfu_small) + "_" + std::to_string(mfu_big), svg);
      CHECK(collisions(svg) == std::vector<std::string>{});
      CHECK(parse(svg).bounds_of_measured == 2);  // each measured point beside its bound
      CHECK_THAT(svg, Catch::Contains("of its bound"));
    }
}

TEST_CASE("crowded random rooflines: every label finds a free place", "[roofline][layout]") {
  const DeviceSpec& h100 = find_device("h100");
  const char* words[] = {"b d, d k -> b k", "matmul", "i, i ->", "softmax [k]", "b s h -> b h", "gelu",
                         "b h q k", "layer_norm", "x", "attention scores 8x16x256x256"};
  for (unsigned seed = 1; seed <= (::test::sanitized ? 10u : 40u); ++seed) {  // 10 under a sanitizer
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> lg(-2.0, 4.0), below(0.02, 1.0);
    const int n = 4 + static_cast<int>(seed % 9);  // 4 to 12 points
    std::vector<RooflinePoint> points;
    for (int i = 0; i < n; ++i) {
      const double intensity = std::pow(10.0, lg(rng));
      const double bound = std::min(h100.peak_for(DType::bf16), intensity * h100.bandwidth);
      const bool measured = rng() % 3 == 0;
      points.push_back({std::string(words[rng() % std::size(words)]) + " #" + std::to_string(i), intensity,
                        measured ? bound * below(rng) : bound, measured});
    }
    CAPTURE(seed, n);
    const std::string svg = roofline_svg(h100, DType::bf16, points);
    dump("random_" + std::to_string(seed), svg);
    CHECK(collisions(svg) == std::vector<std::string>{});
  }
}

TEST_CASE("the overlap test itself: boxes, rotated boxes, segments", "[roofline][layout]") {
  CHECK(plot::overlap(plot::box(0, 0, 10, 10), plot::box(5, 5, 15, 15)));
  CHECK_FALSE(plot::overlap(plot::box(0, 0, 10, 10), plot::box(11, 0, 20, 10)));
  CHECK(plot::overlap(plot::box(0, 0, 10, 10), plot::box(11, 0, 20, 10), 2));  // within the gap
  CHECK(plot::overlap(plot::box(0, 0, 10, 10), plot::segment({-5, 5}, {15, 5})));
  CHECK_FALSE(plot::overlap(plot::box(0, 0, 10, 10), plot::segment({11, -5}, {30, 20})));
  CHECK_FALSE(plot::overlap(plot::segment({0, 0}, {10, 0}), plot::segment({11, 0}, {20, 0})));
  // A box rotated 45 degrees about its centre misses a box at its old corner.
  const PlotShape r = plot::text_box(0, 0, "WWWW", 12, plot::Anchor::middle, 45, {0, -3});
  CHECK(plot::text_width("WWWW", 12) == Approx(4 * 2025 * 12 / 2048.0));
  CHECK_FALSE(plot::overlap(r, plot::box(-30, -16, -24, -12)));
}
