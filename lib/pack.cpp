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

// pack and unpack plan through the engine (plan_pack.cpp): costed, cached, differentiable.
std::pair<Tensor, std::vector<Shape>> pack(std::span<const Tensor> tensors, std::string_view pattern) {
  Tensor packed = apply(OpSpec::pack(), tensors, pattern);
  return with_context("pack", pattern, tensors, [&] {
    const ast::PackPattern p = parse_pack(pattern);
    std::vector<Shape> shapes;
    for (std::size_t i = 0; i < tensors.size(); ++i) shapes.push_back(split_dims(tensors[i], p, i).star);
    return std::make_pair(std::move(packed), std::move(shapes));
  });
}

std::vector<Tensor> unpack(const Tensor& packed, std::span<const Shape> shapes, std::string_view pattern) {
  const std::span<const Tensor> in(&packed, 1);
  if (!packed.defined()) {
    Error e("unpack: the packed tensor is undefined");
    e.add_context(engine::context("unpack", pattern, in, nullptr));
    throw e;
  }
  const std::vector<Shape> all(shapes.begin(), shapes.end());
  if (all.empty()) (void)apply(OpSpec::unpack(all, 0), in, pattern);  // says what is missing
  std::vector<std::shared_ptr<const engine::Entry>> entries;
  const OpSpec first = OpSpec::unpack(all, 0);
  auto with_context = [&](auto&& f) {
    try {
      return f();
    } catch (Error& e) {
      e.add_context(engine::context(engine::op_name(first), pattern, in, &first.lengths));
      throw;
    }
  };
  for (std::size_t j = 0; j < all.size(); ++j) {
    const OpSpec spec = OpSpec::unpack(all, static_cast<int>(j));
    with_context([&] {
      engine::common_dtype_device("unpack", in);
      entries.push_back(engine::entry({spec, pattern, in}));
    });
  }
  return with_context([&] { return engine::run_outputs(entries, packed); });
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
