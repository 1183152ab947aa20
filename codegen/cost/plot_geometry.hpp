#pragma once
// Private to codegen (cost/roofline_svg.cpp; tests/codegen measures SVGs with it): the boxes
// text and marks take on a plot, from DejaVu Sans's advance widths (font_metrics.inc, the font
// the SVG names), and whether two of them touch. A shape is convex: a box (4 corners, any
// rotation) or a segment (2 ends); overlap() is the separating-axis test.
#include <string_view>
#include <vector>

namespace einexpr::plot {

struct Point {
  double x = 0, y = 0;
};

struct Shape {
  std::vector<Point> corners;  // 2 (a segment) or more (a convex polygon, in order)
};

/// The axis-aligned box [x0, x1] x [y0, y1].
Shape box(double x0, double y0, double x1, double y1);
Shape segment(Point a, Point b);
/// True when a and b share a point, or come within `gap` pixels of each other (gap > 0 grows
/// both by gap / 2 along every axis tested).
bool overlap(const Shape& a, const Shape& b, double gap = 0);

/// The advance width of UTF-8 `text` at `size` pixels in DejaVu Sans (characters the table
/// lacks count as the widest it has, an em).
double text_width(std::string_view text, double size);
/// How far DejaVu Sans's line box reaches above and below the baseline at `size` pixels.
double text_ascent(double size);
double text_descent(double size);

enum class Anchor { start, middle, end };
/// The line box of `text` drawn at (x, y) with `anchor` (SVG's text-anchor), rotated by
/// `degrees` about `about` (SVG's rotate(degrees about.x about.y)).
Shape text_box(double x, double y, std::string_view text, double size, Anchor anchor, double degrees = 0,
               Point about = {});

}  // namespace einexpr::plot
