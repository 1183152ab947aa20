// compare(): the published formulas beside the exact counts of a program (compare.hpp).
#include "einexpr/codegen/compare.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "einexpr/runtime/error.hpp"

namespace einexpr {

namespace {

Count c(std::int64_t v) { return Count::from_int64(v); }

/// The variable's axis (or product of axes) and its length.
std::int64_t resolve(const ProgramPlan& plan, const std::string& var, const std::string& axes, const char* meaning,
                     std::string& text) {
  std::int64_t n = 1;
  std::string rest = axes;
  while (!rest.empty()) {
    const std::size_t star = rest.find('*');
    const std::string axis = rest.substr(0, star);
    rest = star == std::string::npos ? "" : rest.substr(star + 1);
    const auto it = std::find_if(plan.axes.begin(), plan.axes.end(), [&](const auto& a) { return a.first == axis; });
    if (it == plan.axes.end())
      throw Error("--compare: the program has no axis '" + axis + "' for " + var + " (" + meaning +
                  "): name the axis, e.g. --compare-axes " + var + "=NAME (products as G*R); its axes are " +
                  plan.axes_text());
    n = checked_mul(n, it->second);
  }
  text += (text.empty() ? "" : " ") + var + "=" + std::to_string(n) + " (" + axes + ")";
  return n;
}

enum Kind { weights, attention, outside, other, kinds };

bool reads_param(const ProgramPlan& plan, const PlannedStatement& st) {
  return std::any_of(st.inputs.begin(), st.inputs.end(), [&](int in) {
    const ProgramTensor& t = plan.tensor(in);
    return t.role == TensorRole::param || (t.role == TensorRole::layer && plan.tensor(t.stacked).role == TensorRole::param);
  });
}

Kind kind_of(const ProgramPlan& plan, const PlannedStatement& st) {
  if (st.spec.op() != Op::einsum) return other;
  if (st.call < 0) return outside;
  return reads_param(plan, st) ? weights : attention;
}

const char* const kind_names[kinds] = {"contractions with a layer's weights", "other contractions in a layer (attention)",
                                       "contractions outside the layers (embedding, head)",
                                       "every other op (norms, softmax, activations, biases, the loss)"};

Comparison flops_rows(const char* what, std::string formula, const std::vector<Count>& exact, const Count published[kinds],
                      std::string note) {
  Comparison r{what, std::move(formula), {}, {}, {}, std::move(note)};
  for (int k = 0; k < kinds; ++k) {
    r.parts.push_back({kind_names[k], published[k], exact[static_cast<std::size_t>(k)]});
    r.published += published[k];
    r.exact += exact[static_cast<std::size_t>(k)];
  }
  return r;
}

std::string signed_difference(Count exact, Count published) {
  return exact >= published ? "+" + (exact - published).str() : "-" + (published - exact).str();
}

std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> w(4, 0);
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  std::string out;
  for (const auto& r : rows) {
    std::string line = "    " + r[0] + std::string(w[0] - r[0].size(), ' ');
    for (std::size_t i = 1; i < r.size(); ++i) line += "  " + std::string(w[i] - r[i].size(), ' ') + r[i];
    out += line + "\n";
  }
  return out;
}

}  // namespace

Comparisons compare(const ProgramPlan& plan, const ProgramCost& cost, const CompareOptions& options) {
  std::map<std::string, std::string> named = {{"h", "D"}, {"s", "S"}, {"V", "V"}, {"a", "H"}, {"k", "K"}, {"f", "F"}, {"b", "B"}};
  for (const auto& [var, axes] : options.axes) {
    if (var != "l" && !named.count(var))
      throw Error("--compare: unknown variable '" + var + "': the formulas' are l h s V a k f b");
    named[var] = axes;
  }
  Comparisons out;
  Geometry& g = out.geometry;
  std::string& text = g.text;
  if (options.axes.end() != std::find_if(options.axes.begin(), options.axes.end(), [](const auto& p) { return p.first == "l"; })) {
    g.l = resolve(plan, "l", std::find_if(options.axes.begin(), options.axes.end(), [](const auto& p) { return p.first == "l"; })->second,
                  "the layers", text);
  } else {
    if (plan.blocks.empty())
      throw Error("--compare: the program calls no block, so it has no layer axis: write its layer as a block "
                  "(block NAME(x) over L ... end) or name l's axis, e.g. --compare-axes l=L");
    g.l = plan.blocks.front().layers;
    text = "l=" + std::to_string(g.l) + " (" + plan.blocks.front().axis + ")";
  }
  g.h = resolve(plan, "h", named["h"], "the hidden size", text);
  g.s = resolve(plan, "s", named["s"], "the sequence length", text);
  g.V = resolve(plan, "V", named["V"], "the vocabulary", text);
  g.a = resolve(plan, "a", named["a"], "the attention heads", text);
  g.k = resolve(plan, "k", named["k"], "a head's size", text);
  g.f = resolve(plan, "f", named["f"], "the MLP's width", text);
  g.b = resolve(plan, "b", named["b"], "the batch", text);
  const Count l = c(g.l), h = c(g.h), s = c(g.s), V = c(g.V), a = c(g.a), k = c(g.k), f = c(g.f), b = c(g.b);
  const Count d_attn = a * k, tokens = b * s;

  // ---- parameters, by where they are
  {
    std::vector<bool> stacked(plan.tensors.size(), false);
    for (const ProgramTensor& t : plan.tensors)
      if (t.role == TensorRole::layer) stacked[static_cast<std::size_t>(t.stacked)] = true;
    Count parts[4];
    for (std::size_t i = 0; i < plan.tensors.size(); ++i) {
      const ProgramTensor& t = plan.tensors[i];
      if (t.role != TensorRole::param) continue;
      const Count n = Count::from_int64(checked_numel(t.shape));
      const std::size_t dims = t.shape.size() - (stacked[i] ? 1 : 0);
      parts[stacked[i] ? (dims >= 2 ? 0 : 1) : (dims >= 2 ? 2 : 3)] += n;
    }
    Comparison r{"parameters", "Narayanan et al. 2021, eq. 2: 12·l·h² + 13·l·h + (V + s)·h", {}, {}, {},
                 "the formula's layer is GPT's (4·h² attention + 8·h² MLP, f = 4·h; 13·h of biases and two norms' "
                 "gains and biases), its tables a tied embedding and learned positions; it leaves out the final norm"};
    const Count published[4] = {Count(12) * l * h * h, Count(13) * l * h, (V + s) * h, Count{}};
    const char* names[4] = {"a layer's matrices", "a layer's vectors (biases, norms)", "tables (embeddings, an untied head)",
                            "vectors outside the layers (the final norm)"};
    for (int i = 0; i < 4; ++i) {
      r.parts.push_back({names[i], published[i], parts[i]});
      r.published += published[i];
      r.exact += parts[i];
    }
    out.rows.push_back(std::move(r));
  }

  // ---- FLOPs, by statement kind
  std::vector<Count> fwd(kinds), bwd(kinds), layer_fwd(kinds);
  for (std::size_t i = 0; i < plan.statements.size(); ++i) {
    const Kind kd = kind_of(plan, plan.statements[i]);
    fwd[kd] += cost.statements[i].forward.flops;
    bwd[kd] += cost.statements[i].backward_flops;
    if (plan.statements[i].call >= 0) layer_fwd[kd] += cost.statements[i].forward.flops;
  }
  bwd[other] += cost.accumulate_flops;
  {
    const Count n = Count(2) * h * l * (Count(2) * d_attn + f);
    const Count published[kinds] = {Count(2) * n * tokens, Count(2) * l * s * d_attn * tokens, Count{}, Count{}};
    out.rows.push_back(flops_rows(
        "forward FLOPs", "Kaplan et al. 2020, Table 1: (2·N + 2·l·s·d_attn) per token, N = 2·h·l·(2·d_attn + f), "
                         "times b·s tokens",
        fwd, published,
        "Kaplan counts one s·d_attn contraction per token and layer for attention (einexpr counts Q·Kᵀ and P·V, "
        "each over every key), and leaves the embedding and the de-embedding (2·h·V per token) out of C_forward"));
  }
  std::vector<Count> step(kinds), full(kinds);
  for (int i = 0; i < kinds; ++i) {
    step[static_cast<std::size_t>(i)] = fwd[static_cast<std::size_t>(i)] + bwd[static_cast<std::size_t>(i)];
    full[static_cast<std::size_t>(i)] = step[static_cast<std::size_t>(i)] + layer_fwd[static_cast<std::size_t>(i)];
  }
  {
    const Count published[kinds] = {Count(72) * b * l * s * h * h, Count(12) * b * l * s * s * h, Count(6) * b * s * V * h,
                                    Count{}};
    out.rows.push_back(flops_rows(
        "training FLOPs", "Korthikanti et al. 2022: 72·b·l·s·h²·(1 + s/(6h) + V/(12·h·l)), forward and backward",
        step, published,
        "the formula is 3 times the forward's contractions of a GPT layer (f = 4·h, d_attn = h) and of the head; "
        "einexpr's backward computes only the gradients a param needs (no gradient toward the token ids' table "
        "lookup, none toward inputs)"));
  }
  {
    // per sequence: QKV 2·3·s·h·(k·a), output projection 2·s·(k·a)·h, dense 2·s·(h·f + f·h) a
    // layer's weights; K@Q and softmax@V 2·s²·(k·a) each; the embeddings and the final logits
    // 2·s·V·h each; the softmax 3·a·s²; backward twice forward
    const Count three_b = Count(3) * b;
    const Count published[kinds] = {
        three_b * l * (Count(6) * s * h * d_attn + Count(2) * s * d_attn * h + Count(4) * s * h * f),
        three_b * l * Count(4) * s * s * d_attn, three_b * Count(4) * s * V * h, three_b * l * Count(3) * a * s * s};
    out.rows.push_back(flops_rows(
        "training FLOPs, Chinchilla",
        "Hoffmann et al. 2022, App. F: per sequence QKV, K@Q, softmax 3·a·s², softmax@V, projection, dense, the "
        "embeddings and the logits, times b; backward = 2 × forward",
        step, published,
        "Chinchilla counts the embedding as a matmul (2·s·V·h a sequence; einexpr's is a table lookup, get_at, no "
        "FLOPs forward) and the softmax as 3·a·s², where einexpr counts each op of its norms, activations, biases "
        "and loss by its own convention"));
  }
  {
    const Count published[kinds] = {Count(96) * b * s * l * h * h, Count(16) * b * s * s * l * h, Count(6) * b * s * V * h,
                                    Count{}};
    out.rows.push_back(flops_rows(
        "training FLOPs, full recomputation",
        "Narayanan et al. 2021, eq. 3: 96·b·s·l·h²·(1 + s/(6h) + V/(16·l·h)), each layer's forward made again once",
        full, published,
        "exact: forward + backward + every layer's forward once more (--recompute with a checkpoint at each layer's "
        "input is this choice)"));
  }
  {
    Comparison r{"training FLOPs, 6·N·D", "6·P·D, P the params, D = b·s tokens (Kaplan et al. 2020; Transformer Math 101)",
                 Count(6) * cost.params * tokens, cost.forward_flops + cost.backward_flops, {}, ""};
    r.note = "the 6·N·P estimate above splits this difference by part";
    out.rows.push_back(std::move(r));
  }
  // ---- activations kept per layer, bytes
  {
    Count kept_s2, kept_rest;
    std::int64_t layers = 0;
    if (!plan.blocks.empty()) {
      const ProgramBlock& first = plan.blocks.front();
      layers = first.layers;
      const Count scores = b * a * s * s;
      for (const KeptActivation& kp : cost.memory.kept) {
        if (kp.layer < 0 || kp.call != first.name) continue;
        const int t = plan.tensor(kp.tensor);
        const bool s2 = t >= 0 && Count::from_int64(checked_numel(plan.tensor(t).shape)) == scores;
        (s2 ? kept_s2 : kept_rest) += kp.bytes;
      }
    }
    const Count per = Count::from_int64(std::max<std::int64_t>(layers, 1));
    Comparison r{"activations per layer (bytes)",
                 "Korthikanti et al. 2022, Table 2: s·b·h·34 + 5·a·s²·b (no parallelism, no recomputation)", {}, {}, {},
                 "the formula's bytes are 16-bit activations and 1-byte dropout masks (exact: at the program's dtypes); "
                 "its s·b·h terms hold two 1-byte dropout masks (after attention and after the MLP, s·b·h each), its "
                 "a·s²·b terms the softmax's output (2·a·s²·b) and attention dropout's mask (a·s²·b) and output "
                 "(2·a·s²·b): a model without dropout keeps none of the dropout's 2·s·b·h + 3·a·s²·b"};
    r.parts.push_back({"s·b·h terms", Count(34) * s * b * h, Count::from_u128(kept_rest.raw() / per.raw())});
    r.parts.push_back({"a·s²·b terms (scores, softmax, dropout)", Count(5) * a * s * s * b,
                       Count::from_u128(kept_s2.raw() / per.raw())});
    for (const ComparisonPart& p : r.parts) {
      r.published += p.published;
      r.exact += p.exact;
    }
    out.rows.push_back(std::move(r));
  }
  return out;
}

std::string Comparisons::str() const {
  std::ostringstream os;
  os << "published formulas (" << geometry.text << ")\n";
  for (const Comparison& r : rows) {
    os << "  " << r.what << ": " << r.formula << "\n";
    std::vector<std::vector<std::string>> t = {{"part", "published", "exact", "difference"}};
    for (const ComparisonPart& p : r.parts)
      t.push_back({p.part, p.published.str(), p.exact.str(), signed_difference(p.exact, p.published)});
    t.push_back({"total", r.published.str(), r.exact.str(), signed_difference(r.exact, r.published)});
    os << table(t);
    if (!r.note.empty()) os << "    " << r.note << "\n";
  }
  return os.str();
}

}  // namespace einexpr
