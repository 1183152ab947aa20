#!/usr/bin/python3
"""Writes index_torch_values.hpp: torch 1.13's embedding / index_select / gather, index_add,
F.cross_entropy (reduction='none', with and without ignore_index), cat and split (and einops' pack and
unpack as cat and split of flattened dims), with their
gradients by autograd, on seeded random inputs, for tests/lib/test_indexed.cpp. Run with
Debian's python3 (numpy, torch):
    /usr/bin/python3 tests/lib/data/make_index_torch.py > tests/lib/data/index_torch_values.hpp
"""
import math

import numpy as np
import torch
import torch.nn.functional as F

torch.manual_seed(0)
f64 = torch.float64


def cpp(v):
    if math.isnan(v):
        return "kNaN"
    if math.isinf(v):
        return "kInf" if v > 0 else "-kInf"
    return repr(float(v))


def tensor(t):
    t = t.detach()
    return "{{" + ", ".join(str(d) for d in t.shape) + "}, {" + ", ".join(cpp(v) for v in t.reshape(-1).tolist()) + "}}"


def tensors(ts):
    return "{" + ", ".join(tensor(t) for t in ts) + "}"


cases = []


def case(what, op, pattern, inputs, integer, fn, lengths="", ignore_index=-100):
    """fn(*inputs) -> list of outputs; gradients toward every float input by autograd."""
    xs = [x.detach().clone() if i in integer else x.detach().to(f64).requires_grad_(True) for i, x in enumerate(inputs)]
    outs = fn(*xs)
    dys = [torch.randn(o.shape, dtype=f64) for o in outs]
    floats = [x for i, x in enumerate(xs) if i not in integer]
    grads = torch.autograd.grad(outs, floats, dys, allow_unused=True)
    grads = [torch.zeros_like(f) if g is None else g for f, g in zip(floats, grads)]
    ints = "{" + ", ".join(str(i) for i in integer) + "}"
    cases.append(f'    {{"{what}", "{op}", "{pattern}", {{{lengths}}}, {ignore_index}, {tensors(xs)}, {ints}, '
                 f'{tensors(outs)}, {tensors(dys)}, {tensors(grads)}}},')


def ints(high, shape):
    return torch.randint(0, high, shape, dtype=torch.int64)


# ---- get_at: embedding, index_select, gather ----
V, D, B, S = 11, 5, 3, 4
wte = torch.randn(V, D, dtype=f64)
tok = ints(V, (B, S))
tok[0, 0] = tok[1, 2] = 7  # a repeated index: its gradient rows add up
case("embedding: [v] d, b s -> b s d", "get_at", "[v] d, b s -> b s d", [wte, tok], [1],
     lambda w, t: [F.embedding(t, w)])
case("index_select along the last axis: d [v], s -> d s", "get_at", "d [v], s -> d s",
     [torch.randn(D, V, dtype=f64), ints(V, (6,))], [1], lambda w, t: [torch.index_select(w, 1, t)])
x = torch.randn(B, 7, D, dtype=f64)
idx = ints(7, (B, 4))
case("gather per batch: b [n] d, b k -> b k d", "get_at", "b [n] d, b k -> b k d", [x, idx], [1],
     lambda x, i: [torch.gather(x, 1, i.unsqueeze(-1).expand(-1, -1, D))])
case("embedding into a permuted output: [v] d, b s -> d s b", "get_at", "[v] d, b s -> d s b", [wte, tok], [1],
     lambda w, t: [F.embedding(t, w).permute(2, 1, 0)])
case("embedding with a composed output: [v] d, b s -> b (s d)", "get_at", "[v] d, b s -> b (s d)", [wte, tok], [1],
     lambda w, t: [F.embedding(t, w).reshape(B, S * D)])

# ---- add_at: index_add (repeated indices add up) ----
upd = torch.randn(B, S, D, dtype=f64)
case("index_add: [v] d, b s, b s d -> [v] d", "add_at", "[v] d, b s, b s d -> [v] d", [wte, tok, upd], [1],
     lambda w, t, u: [w.index_add(0, t.reshape(-1), u.reshape(-1, D))])
case("index_add along the last axis: d [v], s, d s -> d [v]", "add_at", "d [v], s, d s -> d [v]",
     [torch.randn(D, V, dtype=f64), tok[0], torch.randn(D, S, dtype=f64)], [1],
     lambda w, t, u: [w.index_add(1, t, u)])

# ---- cross_entropy: F.cross_entropy, reduction='none' ----
logits = 3 * torch.randn(B, S, V, dtype=f64)
tgt = ints(V, (B, S))
case("cross_entropy: b s [v], b s -> b s", "cross_entropy", "b s [v], b s -> b s", [logits, tgt], [1],
     lambda x, t: [F.cross_entropy(x.permute(0, 2, 1), t, reduction="none")])
tgt_ignored = tgt.clone()
tgt_ignored[0, 1] = tgt_ignored[2, 3] = -100
case("cross_entropy with ignored targets (-100)", "cross_entropy", "b s [v], b s -> b s", [logits, tgt_ignored], [1],
     lambda x, t: [F.cross_entropy(x.permute(0, 2, 1), t, reduction="none")])
case("cross_entropy with ignore_index 0", "cross_entropy", "b s [v], b s -> b s", [logits, tgt], [1],
     lambda x, t: [F.cross_entropy(x.permute(0, 2, 1), t, reduction="none", ignore_index=0)], ignore_index=0)
case("cross_entropy, classes first: [v] n, n -> n", "cross_entropy", "[v] n, n -> n",
     [torch.randn(V, 6, dtype=f64), ints(V, (6,))], [1], lambda x, t: [F.cross_entropy(x.T, t, reduction="none")])
case("cross_entropy of large logits: max-subtracted", "cross_entropy", "n [v], n -> n",
     [1000 + 60 * torch.randn(5, V, dtype=f64), ints(V, (5,))], [1],
     lambda x, t: [F.cross_entropy(x, t, reduction="none")])
case("cross_entropy into a permuted output: b s [v], b s -> s b", "cross_entropy", "b s [v], b s -> s b",
     [logits, tgt], [1], lambda x, t: [F.cross_entropy(x.permute(0, 2, 1), t, reduction="none").T])

# ---- concatenation and split: cat, split ----
a, b = torch.randn(2, 3, 4, dtype=f64), torch.randn(2, 5, 4, dtype=f64)
case("cat: b s1 d, b s2 d -> b (s1 + s2) d", "rearrange", "b s1 d, b s2 d -> b (s1 + s2) d", [a, b], [],
     lambda a, b: [torch.cat([a, b], 1)])
case("cat of a permuted input: b d s1, b s2 d -> b (s1 + s2) d", "rearrange", "b d s1, b s2 d -> b (s1 + s2) d",
     [a.permute(0, 2, 1).contiguous(), b], [], lambda a, b: [torch.cat([a.permute(0, 2, 1), b], 1)])
c = torch.randn(2, 2, 4, dtype=f64)
case("cat of three along the last axis: b (s + t + u)", "rearrange", "b s, b t, b u -> b (s + t + u)",
     [a[:, :, 0], b[:, :, 1], c[:, :, 2]], [], lambda x, y, z: [torch.cat([x, y, z], 1)])
case("cat into a composition: s1 h k, s2 h k -> (s1 + s2) (h k)", "rearrange", "s1 h k, s2 h k -> (s1 + s2) (h k)",
     [torch.randn(3, 2, 2, dtype=f64), torch.randn(1, 2, 2, dtype=f64)], [],
     lambda x, y: [torch.cat([x, y], 0).reshape(4, 4)])
qkv = torch.randn(2, 3, 9, dtype=f64)
case("split: b s (q + k + v) -> b s q, b s k, b s v", "split", "b s (q + k + v) -> b s q, b s k, b s v", [qkv], [],
     lambda x: list(torch.split(x, [2, 3, 4], 2)), lengths='{"q", 2}, {"k", 3}')
case("split with permuted outputs: (a + b) c -> c a, b c", "split", "(a + b) c -> c a, b c",
     [torch.randn(5, 3, dtype=f64)], [], lambda x: [x[:2].T, x[2:]], lengths='{"b", 3}')
case("split into heads: b ((h + g) k) ... by composition: b (t + u) -> b t, b u", "split", "b (t + u) -> b t, b u",
     [torch.randn(4, 6, dtype=f64)], [], lambda x: [x[:, :1], x[:, 1:]], lengths='{"t", 1}, {"u", 5}')

# ---- einops' pack and unpack: cat of the flattened "*" dims, and its split ----
p1, p2, p3 = torch.randn(2, 3, 2, 4, dtype=f64), torch.randn(2, 4, dtype=f64), torch.randn(2, 5, 4, dtype=f64)
case("pack: b * d of (2 3 2 4), (2 4), (2 5 4)", "pack", "b * d", [p1, p2, p3], [],
     lambda x, y, z: [torch.cat([x.reshape(2, -1, 4), y.reshape(2, 1, 4), z.reshape(2, -1, 4)], 1)])
case("pack with nothing after the star: * c of (3 2 5), (5)", "pack", "* c",
     [torch.randn(3, 2, 5, dtype=f64), torch.randn(5, dtype=f64)], [],
     lambda x, y: [torch.cat([x.reshape(-1, 5), y.reshape(1, 5)], 0)])
# unpack: the outputs' "*" shapes are their shapes less the dims around the star
case("unpack: b * d into (3 2), (), (5)", "unpack", "b * d", [torch.randn(2, 12, 4, dtype=f64)], [],
     lambda x: [x[:, :6].reshape(2, 3, 2, 4), x[:, 6], x[:, 7:]])

print("// Generated by tests/lib/data/make_index_torch.py with torch " + torch.__version__ + " and numpy " +
      np.__version__ + "; do not edit.")
print("// Each case: what, op, pattern, axis lengths, ignore_index, the inputs (shape, values row-major; the")
print("// index inputs, listed next, hold integers), torch's outputs in float64, a gradient dY per output")
print("// and torch's gradient toward each float input by autograd.")
print("#pragma once")
print("#include <cstdint>")
print("#include <limits>")
print("#include <vector>")
print("")
print('#include "einexpr/einexpr.hpp"')
print("")
print("namespace torch_values {")
print("")
print("struct Values {")
print("  std::vector<std::int64_t> shape;")
print("  std::vector<double> values;")
print("};")
print("")
print("struct IndexCase {")
print("  const char* what;")
print("  const char* op;  // get_at, add_at, cross_entropy, rearrange (concatenation), split, pack, unpack")
print("  const char* pattern;")
print("  einexpr::AxisLengths lengths;")
print("  std::int64_t ignore_index;")
print("  std::vector<Values> inputs;")
print("  std::vector<int> integer;")
print("  std::vector<Values> outputs;")
print("  std::vector<Values> dys;")
print("  std::vector<Values> grads;")
print("};")
print("")
print("inline const double kIndexNaN = std::numeric_limits<double>::quiet_NaN();")
print("inline const double kIndexInf = std::numeric_limits<double>::infinity();")
print("")
print("inline const std::vector<IndexCase> index_cases = {")
print("\n".join(cases).replace("kNaN", "kIndexNaN").replace("kInf", "kIndexInf"))
print("};")
print("")
print("}  // namespace torch_values")
