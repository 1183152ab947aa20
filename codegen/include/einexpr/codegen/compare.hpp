#pragma once
// The published formulas for a transformer's parameters, FLOPs and activation memory, each
// beside einexpr's exact count of the same program, the difference split by cause
// (program cost --compare). The formulas (shared/REFERENCES.md):
//   parameters        Narayanan et al. 2021, eq. 2: 12·l·h² + 13·l·h + (V + s)·h
//   forward FLOPs     Kaplan et al. 2020, Table 1: (2·N + 2·l·s·d_attn) per token,
//                     N = 2·h·l·(2·d_attn + f) the non-embedding params
//   training FLOPs    Korthikanti et al. 2022: 72·b·l·s·h²·(1 + s/(6h) + V/(12·h·l)), no
//                     recomputation; Narayanan et al. 2021, eq. 3: 96·b·s·l·h²·(1 + s/(6h) +
//                     V/(16·l·h)), the layers' forward made again once (full recomputation)
//                     Hoffmann et al. 2022 (Chinchilla), App. F: per sequence 2·3·s·h·(k·a) +
//                     2·s²·(k·a) + 3·a·s² + 2·s²·(k·a) + 2·s·(k·a)·h + 2·s·(h·f + f·h) a layer,
//                     2·s·V·h for the embeddings and again for the logits; backward 2× forward
//   6·N·D             Kaplan's / Transformer Math 101's C ≈ 6·P·D, D = b·s tokens
//   activations       Korthikanti et al. 2022, Table 2: s·b·h·34 + 5·a·s²·b bytes per layer
//                     (16-bit activations, 1-byte dropout masks)
// The formulas' variables are the program's axes: l the layers of its block call, the others
// named (h=D s=S V=V a=H k=K f=F b=B by default; a=G*R names a product). The exact parts: params
// by where they are (a layer's matrices and vectors, tables and vectors outside the layers);
// FLOPs by statement (contractions with a layer's weights, the other contractions in a layer —
// attention's —, contractions outside the layers — the embedding or the head —, every other op).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "einexpr/codegen/count.hpp"
#include "einexpr/codegen/program_cost.hpp"
#include "einexpr/codegen/program_plan.hpp"

namespace einexpr {

/// The formulas' variables: which axis (or product of axes) each is. Unnamed ones take the
/// defaults above.
struct CompareOptions {
  std::vector<std::pair<std::string, std::string>> axes = {};  // {"h", "D"}, {"a", "G*R"}, ...
};

/// A formula's variables, resolved.
struct Geometry {
  std::int64_t l = 0, h = 0, s = 0, V = 0, a = 0, k = 0, f = 0, b = 0;
  std::string text;  // "l=12 (L) h=768 (D) ..."
};

struct ComparisonPart {
  std::string part;
  Count published, exact;
};

struct Comparison {
  std::string what;     // "parameters", "forward FLOPs", ...
  std::string formula;  // with its source
  Count published, exact;
  std::vector<ComparisonPart> parts;  // summing to the totals
  std::string note;     // the conventions that make a difference
};

struct Comparisons {
  Geometry geometry;
  std::vector<Comparison> rows;
  /// The tables for people, as program cost --compare prints them.
  std::string str() const;
};

/// The formulas beside `cost` (of `plan`). Error naming the variable for an axis the program
/// lacks, or a program with no block call (no layer axis) unless l is named.
Comparisons compare(const ProgramPlan& plan, const ProgramCost& cost, const CompareOptions& options = {});

}  // namespace einexpr
