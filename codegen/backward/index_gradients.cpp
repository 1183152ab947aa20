// The gradients of the indexed ops and of concatenation and split (backward.hpp), each a
// Derivation (derive.hpp). Integer inputs (indices, targets) have none: the list holds the
// float inputs' gradients only.
//   get_at        dTable = add_at(zeros, indices, dY): a FillStep, then a ScatterAddStep
//   add_at        dTable = dY; dUpdates = get_at(dY, indices): a GatherStep
//   cross_entropy dLogits = dY·(softmax(logits) - onehot(targets)): one backward CrossEntropyStep
//   concatenation dX_i = dY's slice for part i (a view where the strides allow)
//   split         dX = zeros with dY written into output j's slice (an EmbedStep)
#include <cstdio>
#include <algorithm>

#include "backward/derive.hpp"
#include "einexpr/runtime/error.hpp"

namespace einexpr::detail::backward {

namespace {

bool contains(const Axes& set, AxisId id) { return std::find(set.begin(), set.end(), id) != set.end(); }

/// The atoms of `of` that `in` lacks.
Axes missing(const Axes& of, const Axes& in) {
  Axes out;
  for (AxisId id : of)
    if (!contains(in, id)) out.push_back(id);
  return out;
}

/// `v`'s atoms laid out over `order` (stride 0 where v lacks an axis), as an unemitted view.
AtomView over(const Derivation& d, const AtomView& v, const Axes& order) {
  AtomView out{-1, v.buffer, v.offset, {}};
  for (AxisId id : order) out.dims.push_back(v.has(id) ? v.at(id) : AtomDim{id, d.axes().length(id), 0});
  return out;
}

/// A new contiguous temporary with `order`'s atoms.
AtomView contiguous(Derivation& d, const Axes& order) {
  AtomView out{-1, -1, 0, {}};
  for (AxisId id : order) out.dims.push_back({id, d.axes().length(id), 0});
  const Strides strides = contiguous_strides(out.shape());
  for (std::size_t i = 0; i < out.dims.size(); ++i) out.dims[i].stride = strides[i];
  out.value = d.builder().new_temp_value(out.shape(), strides, out.dims_axes());
  out.buffer = d.builder().value(out.value).buffer;
  return out;
}

/// The single atom of `of` that `in` lacks (the indexed axis, the classes, a part).
AxisId only_missing(const Axes& of, const Axes& in, const char* what) {
  const Axes m = missing(of, in);
  EINEXPR_ASSERT(m.size() == 1, std::string("backward: ") + what + " is not one axis");
  return m[0];
}

/// The product of the axes' lengths.
std::int64_t product(const AxisTable& axes, const Axes& ids) {
  std::int64_t n = 1;
  for (AxisId id : ids) n = checked_mul(n, axes.length(id));
  return n;
}

}  // namespace

std::vector<Gradient> get_at_gradients(const Plan& forward) {
  Derivation d(forward, 0, Op::add_at);
  const int dy = d.add_dy(), index = d.add_input(1);
  const Axes y = d.y_axes();
  const AxisId indexed = only_missing(d.x_axes(), y, "get_at's indexed axis");
  // Zeros of the table's shape, then dY added at the indices.
  const AtomView zeros = contiguous(d, d.x_axes());
  d.builder().add_step(FillStep{zeros.value, 0.0});
  const AtomView dya = d.atoms(dy);
  const Axes order = dya.ids();
  const AtomView acc = d.builder().emit(over(d, zeros, order));
  const AtomView idx = d.builder().emit(over(d, d.atoms(index), order));
  const int whole = d.builder().value_in(zeros.buffer, d.builder().value(zeros.value).layout,
                                         d.builder().value(zeros.value).dims);
  const AtomDim row = zeros.at(indexed);
  const int updates = d.builder().emit(dya).value;
  // a device's part of the table (a mesh run): its rows' gradient, the others' added elsewhere
  AxisPart part;
  for (const Step& s : forward.steps)
    if (const auto* g = std::get_if<GatherStep>(&s)) part = g->part;
  d.builder().add_step(ScatterAddStep{acc.value, idx.value, updates, whole, row.length, row.stride, part});
  AtomView result = zeros;
  result.value = whole;
  const int dx = d.lay_out(result);
  return {std::move(d).finish(dx, "add_at(zeros, " + d.source_name({GradientSource::Kind::input, 1, ""}) + ", dY)")};
}

std::vector<Gradient> add_at_gradients(const Plan& forward) {
  std::vector<Gradient> out;
  {  // the table: dY itself
    Derivation d(forward, 0, Op::rearrange);
    const int dy = d.add_dy();
    out.push_back(std::move(d).finish(d.lay_out(d.atoms(dy)), "dY"));
  }
  {  // the updates: dY gathered at the indices
    Derivation d(forward, 2, Op::get_at);
    const int dy = d.add_dy(), index = d.add_input(1);
    const AtomView dya = d.atoms(dy);
    const AxisId indexed = only_missing(dya.ids(), d.x_axes(), "add_at's indexed axis");
    const Axes order = d.x_axes();
    const AtomView src = d.builder().emit(over(d, dya, order));
    const AtomView idx = d.builder().emit(over(d, d.atoms(index), order));
    const AtomView dst = contiguous(d, order);
    const AtomDim row = dya.at(indexed);
    AxisPart part;
    for (const Step& s : forward.steps)
      if (const auto* a = std::get_if<ScatterAddStep>(&s)) part = a->part;
    d.builder().add_step(GatherStep{src.value, idx.value, dst.value, row.length, row.stride, part});
    out.push_back(std::move(d).finish(d.lay_out(dst), "get_at(dY, " +
                                                          d.source_name({GradientSource::Kind::input, 1, ""}) + ")"));
  }
  return out;
}

std::vector<Gradient> cross_entropy_gradients(const Plan& forward) {
  const CrossEntropyStep* step = nullptr;
  for (const Step& s : forward.steps)
    if (const auto* c = std::get_if<CrossEntropyStep>(&s)) step = c;
  EINEXPR_ASSERT(step != nullptr && !step->backward, "backward: a cross_entropy plan without its step");
  Derivation d(forward, 0, Op::cross_entropy);
  // Y (the loss) last: the CPU kernel takes each row's log-sum-exp back from it (loss +
  // x[target]) and writes dlogits in one pass; the CUDA kernel recomputes it.
  const int dy = d.add_dy(), logits = d.add_input(0), targets = d.add_input(1), loss = d.add_y();
  const Axes order = d.x_axes();
  const AxisId classes = only_missing(order, d.y_axes(), "cross_entropy's classes");
  Axes rows;
  for (AxisId id : order)
    if (id != classes) rows.push_back(id);
  const int x = d.builder().emit(over(d, d.atoms(logits), order)).value;
  const int t = d.builder().emit(over(d, d.atoms(targets), rows)).value;
  const int g = d.builder().emit(over(d, d.atoms(dy), rows)).value;
  const int l = d.builder().emit(over(d, d.atoms(loss), rows)).value;
  const AtomView dst = contiguous(d, order);
  const auto axis = static_cast<int>(std::find(order.begin(), order.end(), classes) - order.begin());
  d.builder().add_step(CrossEntropyStep{{g, x, t, l}, dst.value, true, axis, step->ignore_index, step->part});
  return {std::move(d).finish(d.lay_out(dst), "dY · (softmax(A) - onehot(B)) along [" +
                                                  d.dims_text({{classes}}) + "]")};
}

std::vector<Gradient> concat_gradients(const Plan& forward) {
  // A concatenation or a pack: input i's own atoms (those the output lacks) make its part of
  // the output's joined dim, after the parts of the inputs before it.
  std::vector<Gradient> out;
  const Axes y = atoms_of(forward, forward.output).ids();
  Axes all_inputs;
  std::vector<Axes> own;
  for (int j = 0; j < forward.num_inputs; ++j) {
    const Axes x = atoms_of(forward, j).ids();
    all_inputs.insert(all_inputs.end(), x.begin(), x.end());
    own.push_back(missing(x, y));
  }
  // A joined dim of length 1 is an anonymous axis of length 1, which no atom names (atoms_of):
  // then every part holds 0 or 1 elements, and dY itself, its atoms followed by the part's (of
  // length 0 or 1, stride 0), is each input's slice.
  const Axes joined = missing(y, all_inputs);
  EINEXPR_ASSERT(joined.size() <= 1, "backward: a concatenation's joined axis is not one axis");
  const bool has_whole = !joined.empty();
  const AxisId whole = has_whole ? joined[0] : -1;
  std::int64_t begin = 0;
  for (int i = 0; i < forward.num_inputs; ++i) {
    Derivation d(forward, i, Op::rearrange);
    const int dy = d.add_dy();
    const Axes& part = own[static_cast<std::size_t>(i)];
    const AtomView dya = d.atoms(dy);
    const int at = has_whole ? dya.index_of(whole) : -1;
    EINEXPR_ASSERT(at >= 0 || (!has_whole && product(d.axes(), part) <= 1), "backward: dY lacks the joined axis");
    const std::int64_t stride = at >= 0 ? dya.dims[static_cast<std::size_t>(at)].stride : 0;
    AtomView slice{-1, dya.buffer, checked_add(dya.offset, checked_mul(begin, stride)), {}};
    for (std::size_t k = 0; k < dya.dims.size(); ++k) {
      if (static_cast<int>(k) != at) {
        slice.dims.push_back(dya.dims[k]);
        continue;
      }
      for (const AtomDim& s : split_dim(d.axes(), part, stride)) slice.dims.push_back(s);
    }
    if (at < 0)
      for (AxisId id : part) slice.dims.push_back(AtomDim{id, d.axes().length(id), 0});
    begin = checked_add(begin, product(d.axes(), part));
    std::string parts;
    for (AxisId id : part) parts += (parts.empty() ? "" : " ") + d.axes().name(id);
    out.push_back(std::move(d).finish(d.lay_out(slice), "dY's slice for operand " + std::to_string(i + 1) + " (" +
                                                            parts + ") of " +
                                                            (has_whole ? d.axes().name(whole) : std::string("(*)"))));
  }
  return out;
}

std::vector<Gradient> split_gradients(const Plan& forward) {
  // A split's or an unpack's output j: dY written into zeros of X's shape, at part j of the
  // joined dim (its own atoms splitting it).
  EINEXPR_ASSERT(forward.slice.has_value(), "backward: a split without its slice");
  const SliceInfo& info = *forward.slice;
  Derivation d(forward, 0, Op::rearrange);
  const int dy = d.add_dy();
  const Axes y = d.y_axes();
  const AxisId whole = info.whole;
  const Axes part = missing(y, d.x_axes());
  std::int64_t begin = 0;
  for (int j = 0; j < info.part; ++j) begin = checked_add(begin, info.parts.at(static_cast<std::size_t>(j)));
  // Zeros in X's atom order, dY written into the part's slice.
  const Axes order = d.x_axes();
  Shape shape;
  for (AxisId id : order) shape.push_back(d.axes().length(id));
  const Strides strides = contiguous_strides(shape);
  // A joined dim of length 1 is an anonymous axis of length 1, which no atom of X names
  // (atoms_of): the part then holds 0 or 1 elements, written at offset 0, its atoms (of
  // length 0 or 1) after X's with stride 0.
  const auto g = static_cast<std::size_t>(std::find(order.begin(), order.end(), whole) - order.begin());
  EINEXPR_ASSERT(g < order.size() || (d.axes().length(whole) == 1 && product(d.axes(), part) <= 1),
                 "backward: X lacks the split axis");
  Axes slice_order;
  Shape slice_shape;
  Strides slice_strides;
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (k != g) {
      slice_order.push_back(order[k]);
      slice_shape.push_back(shape[k]);
      slice_strides.push_back(strides[k]);
      continue;
    }
    for (const AtomDim& s : split_dim(d.axes(), part, strides[g])) {
      slice_order.push_back(s.id);
      slice_shape.push_back(s.length);
      slice_strides.push_back(s.stride);
    }
  }
  if (g == order.size())
    for (AxisId id : part) {
      slice_order.push_back(id);
      slice_shape.push_back(d.axes().length(id));
      slice_strides.push_back(0);
    }
  const int from = d.builder().emit(over(d, d.atoms(dy), slice_order)).value;
  const Layout into{slice_shape, slice_strides, g < order.size() ? checked_mul(begin, strides[g]) : 0};
  AtomView result{-1, -1, 0, {}};
  for (std::size_t i = 0; i < order.size(); ++i) result.dims.push_back(AtomDim{order[i], shape[i], strides[i]});
  result.value = d.builder().new_temp_value(shape, strides, result.dims_axes());
  result.buffer = d.builder().value(result.value).buffer;
  d.builder().add_step(EmbedStep{from, result.value, into});
  return {std::move(d).finish(d.lay_out(result), "dY written into zeros at part " + std::to_string(info.part + 1) +
                                                     " of " + d.axes().name(whole))};
}

// dropout: dX = dY · (mask ? scale : 0), the same MaskStep; the whole op draws its mask again
// from the seed (the same bits: codegen/random.hpp), a program's apply statement reads the
// mask it kept. The mask statement (bool) and p = 0 (a view: dX = dY) need no mask.
std::vector<Gradient> dropout_gradients(const Plan& forward) {
  const RandomStep* random = nullptr;
  const MaskStep* mask = nullptr;
  for (const Step& s : forward.steps) {
    if (const auto* r = std::get_if<RandomStep>(&s)) random = r;
    if (const auto* m = std::get_if<MaskStep>(&s)) mask = m;
  }
  if (forward.dtype_of(forward.output) == DType::boolean) return {};  // the mask: no gradient flows
  Derivation d(forward, 0, Op::dropout);
  const int dy = d.add_dy();
  if (mask == nullptr) return {std::move(d).finish(d.lay_out(d.atoms(dy)), "dY")};  // p = 0: the identity
  const int second = d.add_input(1);
  const std::vector<DimAxes> dims = d.builder().value(dy).dims;
  const Shape shape = d.builder().value(dy).layout.shape;
  int keep = second;
  std::string what = d.source_name({GradientSource::Kind::input, 1, ""});
  if (random != nullptr) {
    keep = d.builder().new_temp_value(shape, contiguous_strides(shape), dims, DType::boolean);
    d.builder().add_step(RandomStep{second, keep, random->p});
    what = "the mask of seed " + what;
  }
  const int dst = d.builder().new_temp_value(shape, contiguous_strides(shape), dims);
  d.builder().add_step(MaskStep{dy, keep, dst, mask->scale});
  char scale[32];
  std::snprintf(scale, sizeof scale, "%.9g", mask->scale);
  return {std::move(d).finish(d.lay_out(d.atoms(dst)), "dY · " + what + " · " + scale)};
}

}  // namespace einexpr::detail::backward
