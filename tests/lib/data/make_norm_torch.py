#!/usr/bin/python3
"""Writes norm_torch_values.hpp: torch 1.13's softmax, log_softmax, layer_norm and an RMS norm
(x · rsqrt(mean(x²) + eps), which torch 1.13 lacks as a function: written in torch ops), with
their gradients by autograd, and layer_norm / rms_norm with a weight (and bias) and the
weight's and bias's gradients, on seeded inputs and edge cases, for
tests/lib/test_normalize.cpp. Run with Debian's python3 (numpy, torch):
    /usr/bin/python3 tests/lib/data/make_norm_torch.py > tests/lib/data/norm_torch_values.hpp
"""
import math

import torch
import torch.nn.functional as F

torch.manual_seed(0)
inf, nan = math.inf, math.nan


def cpp(v):
    if math.isnan(v):
        return "kNaN"
    if math.isinf(v):
        return "kInf" if v > 0 else "-kInf"
    return repr(float(v))


def values(t):
    return "{" + ", ".join(cpp(v) for v in t.reshape(-1).tolist()) + "}"


def shape(t):
    return "{" + ", ".join(str(d) for d in t.shape) + "}"


def along(fn, x, dims, eps):
    """fn over `dims` of x (moved last and flattened), the result put back in x's order."""
    rest = [d for d in range(x.dim()) if d not in dims]
    order = rest + list(dims)
    moved = x.permute(*order)
    flat = moved.reshape(*moved.shape[:len(rest)], -1)
    if fn == "softmax":
        y = torch.softmax(flat, -1)
    elif fn == "log_softmax":
        y = torch.log_softmax(flat, -1)
    elif fn == "layer_norm":
        y = F.layer_norm(flat, (flat.shape[-1],), eps=eps)
    else:  # rms_norm
        y = flat * torch.rsqrt(flat.square().mean(-1, keepdim=True) + eps)
    back = [0] * x.dim()
    for i, d in enumerate(order):
        back[d] = i
    return y.reshape(moved.shape).permute(*back)


cases = []
EPS = {"softmax": 0.0, "log_softmax": 0.0, "layer_norm": 1e-5, "rms_norm": 1e-6}


def case(what, pattern, fn, x, dims, dtype="f64", eps=None, gradient=True, lengths=""):
    eps = EPS[fn] if eps is None else eps
    xt = x.detach().to(torch.float64).requires_grad_(gradient)
    y = along(fn, xt, dims, eps)
    dy, dx = torch.zeros(0), torch.zeros(0)
    if gradient:
        dy = torch.randn(y.shape, dtype=torch.float64)
        (dx,) = torch.autograd.grad(y, xt, dy)
    cases.append(f'    {{"{what}", "{pattern}", {{{lengths}}}, Normalization::{fn}, {eps!r}, DType::{dtype}, {shape(x)}, '
                 f'{values(xt.detach())}, {values(y.detach())}, {values(dy)}, {values(dx)}}},')


x = torch.randn(2, 3, 3, 4, dtype=torch.float64)
case("softmax over the last axis", "b h q [k]", "softmax", x, (3,))
case("softmax over a middle axis", "b [h] q k", "softmax", x, (1,))
case("softmax over two axes in two brackets", "[b] h [q] k", "softmax", x, (0, 2))
case("log_softmax after an ellipsis", "... [k]", "log_softmax", x, (3,))
case("log_softmax over the first axis", "[b] ...", "log_softmax", x, (0,))
case("layer_norm over the last axis", "b h q [k]", "layer_norm", 3 + 2 * x, (3,))
case("layer_norm over the last two axes", "b h [q k]", "layer_norm", x, (2, 3))
case("layer_norm over the first axis, eps 0.1", "[b] h q k", "layer_norm", x, (0,), eps=0.1)
case("rms_norm over the last axis", "b h q [k]", "rms_norm", x, (3,))
case("rms_norm over a composition", "b h [(q k)]", "rms_norm", x.reshape(2, 3, 12), (2,), lengths='{"q", 3}')
case("softmax of large values: max-subtracted", "a [b]", "softmax", 1000 + 50 * torch.randn(3, 7, dtype=torch.float64),
     (1,))
case("layer_norm of a constant row is 0", "a [b]", "layer_norm", torch.full((2, 6), 3.25, dtype=torch.float64), (1,))
masked = torch.randn(4, 4, dtype=torch.float64) + torch.triu(torch.full((4, 4), -inf, dtype=torch.float64), 1)
case("softmax with -inf (a causal mask)", "q [k]", "softmax", masked, (1,), gradient=False)
case("log_softmax with -inf (a causal mask)", "q [k]", "log_softmax", masked, (1,), gradient=False)
edges = torch.tensor([[-inf, -inf, -inf], [inf, 1.0, 2.0], [nan, 1.0, 2.0], [1.0, 2.0, 3.0]], dtype=torch.float64)
case("softmax: a row of -inf, +inf and NaN are NaN", "a [b]", "softmax", edges, (1,), gradient=False)
case("layer_norm with inf and NaN", "a [b]", "layer_norm", edges, (1,), gradient=False)
case("f32 softmax over 256 keys", "q [k]", "softmax", (4 * torch.randn(2, 256)).to(torch.float32), (1,), dtype="f32")
case("f32 layer_norm of 1e4 + randn: stable", "a [d]", "layer_norm", (1e4 + torch.randn(2, 384)).to(torch.float32),
     (1,), dtype="f32")
case("f32 rms_norm over 192", "s [d]", "rms_norm", torch.randn(2, 192).to(torch.float32), (1,), dtype="f32")

affine = []


def affine_case(what, pattern, fn, x, nd, bias=True, dtype="f64", eps=None):
    """layer_norm / rms_norm over x's last `nd` dims with torch's weight (and bias), and the
    gradients of x, the weight and the bias by autograd."""
    eps = EPS[fn] if eps is None else eps
    xt = x.detach().to(torch.float64).requires_grad_(True)
    shape = tuple(x.shape[-nd:])
    g = (1 + 0.5 * torch.randn(shape, dtype=torch.float64)).requires_grad_(True)
    b = (0.5 * torch.randn(shape, dtype=torch.float64)).requires_grad_(True) if bias else None
    if fn == "layer_norm":
        y = F.layer_norm(xt, shape, weight=g, bias=b, eps=eps)
    else:
        dims = tuple(range(x.dim() - nd, x.dim()))
        y = xt * torch.rsqrt(xt.square().mean(dims, keepdim=True) + eps) * g
    dy = torch.randn(y.shape, dtype=torch.float64)
    grads = torch.autograd.grad(y, [xt, g] + ([b] if bias else []), dy)
    db = grads[2] if bias else torch.zeros(0)
    bv = b.detach() if bias else torch.zeros(0)
    affine.append(f'    {{"{what}", "{pattern}", Normalization::{fn}, {eps!r}, DType::{dtype}, {shape_of(x)}, {shape_of(g)}, '
                  f'{values(xt.detach())}, {values(g.detach())}, {values(bv)}, {values(y.detach())}, {values(dy)}, '
                  f'{values(grads[0])}, {values(grads[1])}, {values(db)}}},')


def shape_of(t):
    return "{" + ", ".join(str(d) for d in t.shape) + "}"


xa = torch.randn(2, 3, 5, dtype=torch.float64)
affine_case("layer_norm with a gain and a bias over the last axis", "b s [d]", "layer_norm", 1 + 2 * xa, 1)
affine_case("layer_norm with a gain and a bias over the last two axes", "b [s d]", "layer_norm", xa, 2)
affine_case("rms_norm with a gain over the last axis", "b s [d]", "rms_norm", xa, 1, bias=False)
affine_case("layer_norm with a gain and a bias, f32", "b s [d]", "layer_norm",
            torch.randn(3, 4, 64).to(torch.float32), 1, dtype="f32")

print("// Generated by tests/lib/data/make_norm_torch.py with torch " + torch.__version__ + "; do not edit.")
print("// Each case: what, pattern, axis lengths, normalization, eps, dtype, input shape, input (row-major), torch's")
print("// output in float64 (inputs given as f32 are exactly these values), an output gradient dY")
print("// and torch's input gradient dX by autograd (both empty where the case has none).")
print("#pragma once")
print("#include <cstdint>")
print("#include <limits>")
print("#include <vector>")
print("")
print('#include "einexpr/einexpr.hpp"')
print("")
print("namespace torch_values {")
print("")
print("using einexpr::AxisLengths;")
print("using einexpr::DType;")
print("using einexpr::Normalization;")
print("inline const double kNaN = std::numeric_limits<double>::quiet_NaN();")
print("inline const double kInf = std::numeric_limits<double>::infinity();")
print("")
print("struct NormCase {")
print("  const char* what;")
print("  const char* pattern;")
print("  AxisLengths lengths;")
print("  Normalization normalization;")
print("  double eps;")
print("  DType dtype;")
print("  std::vector<std::int64_t> shape;")
print("  std::vector<double> input;")
print("  std::vector<double> expected;")
print("  std::vector<double> dy;")
print("  std::vector<double> dx;")
print("};")
print("")
print("inline const std::vector<NormCase> norm_cases = {")
print("\n".join(cases))
print("};")
print("")
print("// layer_norm / rms_norm with torch's weight (and bias) over the bracketed (last) dims, and")
print("// autograd's gradients of x, the weight and the bias (db empty without a bias).")
print("struct AffineNormCase {")
print("  const char* what;")
print("  const char* pattern;")
print("  Normalization normalization;")
print("  double eps;")
print("  DType dtype;")
print("  std::vector<std::int64_t> shape, gain_shape;")
print("  std::vector<double> input, gain, bias, expected, dy, dx, dgain, dbias;")
print("};")
print("")
print("inline const std::vector<AffineNormCase> affine_norm_cases = {")
print("\n".join(affine))
print("};")
print("")
print("}  // namespace torch_values")
