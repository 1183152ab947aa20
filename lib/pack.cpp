// einops' pack, unpack and parse_shape.
#include <algorithm>
#include <numeric>

#include "einexpr/ops.hpp"
#include "einexpr/parser/parse.hpp"
#include "engine.hpp"

namespace einexpr {

namespace {

/// The dims of `t` before and after the "*" of `p`, and the "*" part's shape.
struct Split {
  Shape before, star, after;
};

Split split_dims(const Tensor& t, const ast::PackPattern& p, std::size_t index) {
  const std::size_t n_before = p.star, n_after = p.names.size() - p.star;
  const auto rank = static_cast<std::size_t>(t.dim());
  if (rank < n_before + n_after)
    throw ShapeError("tensor " + std::to_string(index + 1) + " has " + std::to_string(rank) + " dims (shape " +
                     shape_str(t.shape()) + ") but '" + p.text + "' needs at least " +
                     std::to_string(n_before + n_after));
  Split s;
  s.before.assign(t.shape().begin(), t.shape().begin() + static_cast<std::ptrdiff_t>(n_before));
  s.star.assign(t.shape().begin() + static_cast<std::ptrdiff_t>(n_before),
                t.shape().end() - static_cast<std::ptrdiff_t>(n_after));
  s.after.assign(t.shape().end() - static_cast<std::ptrdiff_t>(n_after), t.shape().end());
  return s;
}

Shape joined(const Shape& a, const Shape& b, const Shape& c) {
  Shape s = a;
  s.insert(s.end(), b.begin(), b.end());
  s.insert(s.end(), c.begin(), c.end());
  return s;
}

template <class F>
auto with_context(std::string_view op, std::string_view pattern, std::span<const Tensor> inputs, F&& f)
    -> decltype(f()) {
  try {
    return f();
  } catch (Error& e) {
    e.add_context(engine::context(op, pattern, inputs, nullptr));
    throw;
  }
}

}  // namespace

std::pair<Tensor, std::vector<Shape>> pack(std::span<const Tensor> tensors, std::string_view pattern) {
  return with_context("pack", pattern, tensors, [&] {
    const ast::PackPattern p = parse_pack(pattern);
    const auto [dtype, device] = engine::common_dtype_device("pack", tensors);
    std::vector<Split> splits;
    std::int64_t total = 0;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      splits.push_back(split_dims(tensors[i], p, i));
      const Split& s = splits.back();
      if (s.before != splits[0].before || s.after != splits[0].after)
        throw ShapeError("pack: tensor " + std::to_string(i + 1) + " has shape " + shape_str(tensors[i].shape()) +
                         " but the dims around '*' must match tensor 1's (" + shape_str(tensors[0].shape()) + ")");
      total = checked_add(total, checked_numel(s.star));
    }
    Tensor out = Tensor::empty(joined(splits[0].before, {total}, splits[0].after), dtype, device);
    std::vector<Shape> shapes;
    std::int64_t at = 0;
    const int dim = static_cast<int>(p.star);
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const std::int64_t n = checked_numel(splits[i].star);
      Tensor dst = out.slice(dim, at, at + n);
      dst.copy_from(tensors[i].reshape(joined(splits[i].before, {n}, splits[i].after)));
      shapes.push_back(splits[i].star);
      at += n;
    }
    return std::make_pair(out, shapes);
  });
}

std::vector<Tensor> unpack(const Tensor& packed, std::span<const Shape> shapes, std::string_view pattern) {
  const std::span<const Tensor> in(&packed, 1);
  return with_context("unpack", pattern, in, [&] {
    const ast::PackPattern p = parse_pack(pattern);
    if (!packed.defined()) throw Error("unpack: the packed tensor is undefined");
    if (static_cast<std::size_t>(packed.dim()) != p.names.size() + 1)
      throw ShapeError("unpack: '" + p.text + "' describes " + std::to_string(p.names.size() + 1) +
                       " dims but the packed tensor has shape " + shape_str(packed.shape()));
    const int dim = static_cast<int>(p.star);
    const std::int64_t length = packed.size(dim);
    std::int64_t known = 0;
    int infer = -1;
    std::vector<std::int64_t> sizes;
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      std::int64_t n = 1;
      for (std::int64_t len : shapes[i]) {
        if (len < -1)
          throw ShapeError("unpack: invalid length " + std::to_string(len) + " in shape " + shape_str(shapes[i]));
        if (len == -1) {
          if (infer >= 0) throw ShapeError("unpack: only one shape may contain -1");
          infer = static_cast<int>(i);
        } else {
          n = checked_mul(n, len);
        }
      }
      sizes.push_back(n);
      if (infer != static_cast<int>(i)) known = checked_add(known, n);
    }
    std::vector<Shape> resolved(shapes.begin(), shapes.end());
    if (infer >= 0) {
      const std::int64_t rest = length - known;
      const std::int64_t per = sizes[static_cast<std::size_t>(infer)];
      if (rest < 0 || per == 0 || rest % per != 0)
        throw ShapeError("unpack: cannot infer the -1 in shape " + shape_str(shapes[static_cast<std::size_t>(infer)]) +
                         " from the " + std::to_string(rest) + " elements left of " + std::to_string(length));
      for (std::int64_t& len : resolved[static_cast<std::size_t>(infer)])
        if (len == -1) len = rest / per;
      sizes[static_cast<std::size_t>(infer)] = rest;
      known += rest;
    }
    if (known != length)
      throw ShapeError("unpack: the shapes hold " + std::to_string(known) + " elements along '*' but the packed " +
                       "tensor has " + std::to_string(length));
    std::vector<Tensor> out;
    std::int64_t at = 0;
    const Shape before(packed.shape().begin(), packed.shape().begin() + dim);
    const Shape after(packed.shape().begin() + dim + 1, packed.shape().end());
    for (std::size_t i = 0; i < resolved.size(); ++i) {
      out.push_back(packed.slice(dim, at, at + sizes[i]).view(joined(before, resolved[i], after)));
      at += sizes[i];
    }
    return out;
  });
}

AxisLengths parse_shape(const Tensor& x, std::string_view pattern) {
  const std::span<const Tensor> in(&x, 1);
  return with_context("parse_shape", pattern, in, [&] {
    const std::string text(pattern);
    if (!x.defined()) throw Error("parse_shape: the tensor is undefined");
    if (const std::size_t arrow = text.find("->"); arrow != std::string::npos)
      throw PatternError("parse_shape takes one side of a pattern, without '->'", text, arrow);
    // The pattern is one side of an arrow; parse it as the left side of "<pattern> ->", and
    // blame the user's own text (the caret never points past it).
    ast::Pattern p;
    try {
      p = parse(text + " ->");
    } catch (const PatternError& e) {
      throw PatternError(e.reason(), text, std::min(e.position(), text.size()));
    }
    if (p.operands.size() != 1)
      throw PatternError("parse_shape takes one operand: ',' separates the inputs of einsum", text,
                         std::min(p.operands[1].span.begin, text.size()));
    const ast::Operand& terms = p.operands.at(0);
    std::size_t fixed = 0;
    bool ellipsis = false;
    for (const ast::Term& t : terms.terms) {
      if (std::holds_alternative<ast::Ellipsis>(t)) ellipsis = true;
      else ++fixed;
    }
    const auto rank = static_cast<std::size_t>(x.dim());
    if ((!ellipsis && rank != fixed) || (ellipsis && rank < fixed))
      throw ShapeError("parse_shape: '" + std::string(pattern) + "' names " + std::to_string(fixed) +
                       " dims but the tensor has shape " + shape_str(x.shape()));
    AxisLengths out;
    std::size_t d = 0;
    for (const ast::Term& t : terms.terms) {
      if (std::holds_alternative<ast::Ellipsis>(t)) {
        d += rank - fixed;
      } else if (const auto* n = std::get_if<ast::Named>(&t)) {
        if (n->name != "_") out.emplace_back(n->name, x.size(static_cast<int>(d)));
        ++d;
      } else {
        throw PatternError("parse_shape takes names, '_' and '...' only", std::string(pattern),
                           ast::span_of(t).begin);
      }
    }
    return out;
  });
}

}  // namespace einexpr
