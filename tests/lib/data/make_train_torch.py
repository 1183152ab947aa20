#!/usr/bin/python3
"""Writes train_torch_values.hpp: torch's training runs of two model files of examples/models/,
for `program train` (forward, autograd's backward toward every param, then an optimizer step):

  - lecture2.ein (x B D, w1 D E, w2 E K, loss = mean of square of h2) at B=6 D=5 E=4 K=3, with
    every optimizer (sgd, momentum, adam, adamw) for 5 steps in f64 and in f32, and adam for 20
    steps in f32 (a loss curve);
  - gpt2_train.ein (a 1-layer GPT-2-style language model with its cross-entropy loss) at its
    default sizes, with adamw for 3 steps in f64 and in f32, and sgd for 2 steps in f64;
  - gpt2.ein (GPT-2 with its layer written once as a block over L) at tiny sizes with L=2, with
    sgd for 2 steps in f64 (its key bias b_k has a gradient of exactly 0 and rounding noise:
    sgd moves it by lr times that noise, which adam would blow up to lr), its dropouts' masks
    those einexpr draws for seed 0 (SplitMix64, written out again below), applied as x·mask/(1-p);
  - llama2.ein (LLaMA-2 with its layer written once: RMSNorm, rotary embeddings, grouped-query
    attention, SwiGLU, an untied head) at tiny sizes with L=2 and 2 groups of 2 query heads,
    with sgd for 2 steps in f64;
  - both in bf16 with mixed precision (lecture2 adam, gpt2_train adamw): bf16 params, inputs
    and compute, the optimizer on f32 master copies (their gradients the bf16 ones widened),
    each param then its master rounded to bf16.

The optimizers are torch.optim's own (SGD with momentum 0 or m, dampening 0, no nesterov; Adam
with L2 added to the gradient; AdamW's decoupled decay); each step zeroes the gradients, runs the
forward, loss.backward() and opt.step(), on the same inputs every step. torch computes in the
case's dtype; an f32 case's inputs and initial params are the f32 roundings of the f64 ones
(the values the header holds), and its numbers are f32 values written as doubles. Each case
records every input and param's initial value (the model file's declaration order), each step's
loss (the forward before that step's update), every param's gradient in the first step, and the
params after the last step. gpt2_train's torch model follows einexpr's ops exactly: layer_norm
with eps 1e-5 and no affine part (the gains and biases are maps), "gelu" as torch's
approximate="tanh", the scale 1/sqrt(K) a 0-d number of the run's dtype, the causal mask an
input (0 on and below the diagonal, -1e9 above: finite, so that the header needs no infinity)
added to the scores, softmax over the keys, cross_entropy as F.cross_entropy, the mean over B S.
(gpt2_train.ein has no key bias: its gradient is 0 exactly, and Adam would turn the rounding
noise in it into steps of about lr that no two implementations share.)

Run with Debian's python3 (numpy, torch):
    /usr/bin/python3 tests/lib/data/make_train_torch.py > tests/lib/data/train_torch_values.hpp
"""
import math

import torch
import torch.nn.functional as F

f64 = torch.float64
DTYPES = {"f64": torch.float64, "f32": torch.float32, "bf16": torch.bfloat16}


# ---- the models: the declarations of the model file, in order, and its forward in torch ----

LECTURE2_SIZES = [("B", 6), ("D", 5), ("E", 4), ("K", 3)]


def lecture2_values():
    """[(name, kind, f64 or i64 tensor)] in lecture2.ein's declaration order; kind is input or param."""
    B, D, E, K = (n for _, n in LECTURE2_SIZES)
    torch.manual_seed(2)
    return [
        ("x", "input", torch.randn(B, D, dtype=f64)),
        ("w1", "param", torch.randn(D, E, dtype=f64) * 0.5),
        ("w2", "param", torch.randn(E, K, dtype=f64) * 0.5),
    ]


def lecture2_forward(t):
    h1 = t["x"] @ t["w1"]
    h2 = h1 @ t["w2"]
    return torch.square(h2).mean()


GPT2_SIZES = [("B", 2), ("S", 8), ("T", 8), ("D", 16), ("H", 2), ("K", 8), ("F", 64), ("V", 32)]
GPT2_SCALE = 0.35355339059327373  # 1/sqrt(K) as gpt2_train.ein writes it
GPT2_MASKED = -1e9  # the mask above the diagonal


def lm_data(B, S, V):
    """Token ids, their targets (the next token; the last position's drawn) and the causal
    mask (0 on and below the diagonal, GPT2_MASKED above), from torch's current seed."""
    tok = torch.randint(0, V, (B, S), dtype=torch.int64)
    tgt = torch.empty_like(tok)
    tgt[:, :-1] = tok[:, 1:]
    tgt[:, -1] = torch.randint(0, V, (B,), dtype=torch.int64)
    return tok, tgt, torch.triu(torch.full((S, S), GPT2_MASKED, dtype=f64), diagonal=1)


def gpt2_values():
    """[(name, kind, f64 or i64 tensor)] in gpt2_train.ein's declaration order."""
    s = dict(GPT2_SIZES)
    B, S, D, H, K, F_, V = s["B"], s["S"], s["D"], s["H"], s["K"], s["F"], s["V"]
    torch.manual_seed(3)

    def rn(*shape, scale):
        return torch.randn(*shape, dtype=f64) * scale

    tok, tgt, mask = lm_data(B, S, V)
    return [
        ("tok", "input", tok),
        ("tgt", "input", tgt),
        ("mask", "input", mask),
        ("wte", "param", rn(V, D, scale=0.3)),
        ("wpe", "param", rn(S, D, scale=0.1)),
        ("ln1_g", "param", 1 + rn(D, scale=0.1)),
        ("ln1_b", "param", rn(D, scale=0.1)),
        ("w_q", "param", rn(D, H * K, scale=0.25)),
        ("b_q", "param", rn(H * K, scale=0.1)),
        ("w_k", "param", rn(D, H * K, scale=0.25)),
        ("w_v", "param", rn(D, H * K, scale=0.25)),
        ("b_v", "param", rn(H * K, scale=0.1)),
        ("w_o", "param", rn(H * K, D, scale=0.25)),
        ("b_o", "param", rn(D, scale=0.1)),
        ("ln2_g", "param", 1 + rn(D, scale=0.1)),
        ("ln2_b", "param", rn(D, scale=0.1)),
        ("w_fc", "param", rn(D, F_, scale=0.25)),
        ("b_fc", "param", rn(F_, scale=0.1)),
        ("w_proj", "param", rn(F_, D, scale=0.125)),
        ("b_proj", "param", rn(D, scale=0.1)),
        ("lnf_g", "param", 1 + rn(D, scale=0.1)),
        ("lnf_b", "param", rn(D, scale=0.1)),
    ]


def gpt2_forward(t, sizes=None):
    """gpt2_train.ein's forward in torch, at `sizes` ({axis: length}; its default sizes if None).
    bench/bench_train.py imports it for its larger sizes."""
    s = dict(sizes or GPT2_SIZES)
    B, S, D, H, K, V = s["B"], s["S"], s["D"], s["H"], s["K"], s["V"]
    dt = t["wte"].dtype

    def ln(x, gain, bias):  # layer_norm(x, "B S [D]") (eps 1e-5, no affine part), then two maps
        return F.layer_norm(x, (D,), eps=1e-5) * gain + bias

    def heads(z):  # B S (H K) -> B H S K
        return z.reshape(B, S, H, K).permute(0, 2, 1, 3)

    x = F.embedding(t["tok"], t["wte"]) + t["wpe"]
    ln1 = ln(x, t["ln1_g"], t["ln1_b"])
    q = heads(ln1 @ t["w_q"] + t["b_q"])
    k = heads(ln1 @ t["w_k"])
    v = heads(ln1 @ t["w_v"] + t["b_v"])
    s0 = q @ k.transpose(-1, -2)
    s2 = s0 * torch.tensor(GPT2_SCALE, dtype=dt) + t["mask"]
    p = torch.softmax(s2, dim=-1)
    o1 = (p @ v).permute(0, 2, 1, 3).reshape(B, S, H * K)
    h = x + (o1 @ t["w_o"] + t["b_o"])
    ln2 = ln(h, t["ln2_g"], t["ln2_b"])
    g = F.gelu(ln2 @ t["w_fc"] + t["b_fc"], approximate="tanh")
    y = h + (g @ t["w_proj"] + t["b_proj"])
    lnf = ln(y, t["lnf_g"], t["lnf_b"])
    logits = lnf @ t["wte"].T
    ce = F.cross_entropy(logits.reshape(B * S, V), t["tgt"].reshape(B * S), reduction="none")
    return ce.mean()


GPT2L_SIZES = [("L", 2), ("B", 2), ("S", 4), ("T", 4), ("D", 8), ("H", 2), ("K", 4), ("F", 16), ("V", 16)]
GPT2L_SCALE = 0.125  # the number gpt2.ein writes (1/sqrt(64), GPT-2's K)


def gpt2l_values():
    """[(name, kind, f64 or i64 tensor)] in gpt2.ein's declaration order: the layers' params stacked over L."""
    s = dict(GPT2L_SIZES)
    L, B, S, D, H, K, F_, V = s["L"], s["B"], s["S"], s["D"], s["H"], s["K"], s["F"], s["V"]
    torch.manual_seed(4)

    def rn(*shape, scale):
        return torch.randn(*shape, dtype=f64) * scale

    tok, tgt, mask = lm_data(B, S, V)
    return [
        ("tok", "input", tok),
        ("tgt", "input", tgt),
        ("mask", "input", mask),
        ("wte", "param", rn(V, D, scale=0.3)),
        ("wpe", "param", rn(S, D, scale=0.1)),
        ("ln1_g", "param", 1 + rn(L, D, scale=0.1)),
        ("ln1_b", "param", rn(L, D, scale=0.1)),
        ("w_q", "param", rn(L, D, H * K, scale=0.25)),
        ("b_q", "param", rn(L, H * K, scale=0.1)),
        ("w_k", "param", rn(L, D, H * K, scale=0.25)),
        ("b_k", "param", rn(L, H * K, scale=0.1)),
        ("w_v", "param", rn(L, D, H * K, scale=0.25)),
        ("b_v", "param", rn(L, H * K, scale=0.1)),
        ("w_o", "param", rn(L, H * K, D, scale=0.25)),
        ("b_o", "param", rn(L, D, scale=0.1)),
        ("ln2_g", "param", 1 + rn(L, D, scale=0.1)),
        ("ln2_b", "param", rn(L, D, scale=0.1)),
        ("w_fc", "param", rn(L, D, F_, scale=0.25)),
        ("b_fc", "param", rn(L, F_, scale=0.1)),
        ("w_proj", "param", rn(L, F_, D, scale=0.125)),
        ("b_proj", "param", rn(L, D, scale=0.1)),
        ("lnf_g", "param", 1 + rn(D, scale=0.1)),
        ("lnf_b", "param", rn(D, scale=0.1)),
    ]


# dropout's masks as einexpr draws them (codegen/random.hpp), written out again here: SplitMix64
# (mix its finalizer), the k-th dropout of a step t keeping element i (row-major) when
# bits(stream(seed, t, k), i) >> 32 >= round(p·2^32); kept elements scaled by 1/(1-p).
M64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def dropout_mask(seed, step, k, shape, p):
    s = mix((mix((mix(seed) + step) & M64) + k) & M64)
    threshold = int(p * 4294967296.0 + 0.5)
    n = math.prod(shape)
    keep = [(mix((s + (i + 1) * GAMMA) & M64) >> 32) >= threshold for i in range(n)]
    return torch.tensor(keep, dtype=torch.bool).reshape(shape)


class Dropouts:
    """The masks of one training step (t["_step"]), drawn in the program's planning order; none without a step
    (inference: the identity, as einexpr's run)."""

    def __init__(self, t, seed=0):
        self.step, self.seed, self.k = t.get("_step"), seed, 0

    def __call__(self, x, p):
        if self.step is None:
            return x
        mask = dropout_mask(self.seed, self.step, self.k, tuple(x.shape), p)
        self.k += 1
        return x * (mask.to(x.dtype) * (1.0 / (1.0 - p)))


def gpt2l_forward(t, sizes=None):
    """gpt2.ein's forward in torch: the block applied to layer l's slice of each stacked param, l = 0, 1, ...
    (at `sizes`, {axis: length}; the case's if None), with dropout 0.1 where gpt2.ein has it when t has a "_step".
    bench/torch_zoo.py imports it for GPT-2 small."""
    s = dict(sizes or GPT2L_SIZES)
    L, B, S, D, H, K, V = s["L"], s["B"], s["S"], s["D"], s["H"], s["K"], s["V"]
    dt = t["wte"].dtype
    drop = Dropouts(t)

    def heads(z):  # B S (H K) -> B H S K
        return z.reshape(B, S, H, K).permute(0, 2, 1, 3)

    x = drop(F.embedding(t["tok"], t["wte"]) + t["wpe"], 0.1)
    for l in range(L):
        w = {n: t[n][l] for n in ("ln1_g", "ln1_b", "w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o", "ln2_g",
                                  "ln2_b", "w_fc", "b_fc", "w_proj", "b_proj")}
        ln1 = F.layer_norm(x, (D,), w["ln1_g"], w["ln1_b"], eps=1e-5)
        q = heads(ln1 @ w["w_q"] + w["b_q"])
        k = heads(ln1 @ w["w_k"] + w["b_k"])
        v = heads(ln1 @ w["w_v"] + w["b_v"])
        s2 = (q @ k.transpose(-1, -2)) * torch.tensor(GPT2L_SCALE, dtype=dt) + t["mask"]
        p = drop(torch.softmax(s2, dim=-1), 0.1)
        o1 = (p @ v).permute(0, 2, 1, 3).reshape(B, S, H * K)
        h = x + drop(o1 @ w["w_o"] + w["b_o"], 0.1)
        ln2 = F.layer_norm(h, (D,), w["ln2_g"], w["ln2_b"], eps=1e-5)
        g = F.gelu(ln2 @ w["w_fc"] + w["b_fc"], approximate="tanh")
        x = h + drop(g @ w["w_proj"] + w["b_proj"], 0.1)
    lnf = F.layer_norm(x, (D,), t["lnf_g"], t["lnf_b"], eps=1e-5)
    logits = lnf @ t["wte"].T
    ce = F.cross_entropy(logits.reshape(B * S, V), t["tgt"].reshape(B * S), reduction="none")
    return ce.mean()


LLAMA_SIZES = [("L", 2), ("B", 2), ("S", 4), ("T", 4), ("D", 8), ("G", 2), ("R", 2), ("K", 4), ("K1", 2), ("K2", 2),
               ("F", 12), ("V", 16)]
LLAMA_SCALE = 0.08838834764831845  # the number llama2.ein writes (1/sqrt(128), LLaMA-2's K)


def llama_values():
    """[(name, kind, f64 or i64 tensor)] in llama2.ein's declaration order."""
    s = dict(LLAMA_SIZES)
    L, B, S, D, G, R, K, F_, V = s["L"], s["B"], s["S"], s["D"], s["G"], s["R"], s["K"], s["F"], s["V"]
    torch.manual_seed(5)

    def rn(*shape, scale):
        return torch.randn(*shape, dtype=f64) * scale

    tok, tgt, mask = lm_data(B, S, V)
    # Hugging Face's rotary tables: angle position · 10000^(-2i/K) for i < K/2, repeated for both halves
    inv = 1.0 / (10000 ** (torch.arange(0, K, 2, dtype=f64) / K))
    angles = torch.outer(torch.arange(S, dtype=f64), inv)
    angles = torch.cat([angles, angles], dim=-1)
    return [
        ("tok", "input", tok),
        ("tgt", "input", tgt),
        ("mask", "input", mask),
        ("cos", "input", angles.cos()),
        ("sin", "input", angles.sin()),
        ("emb", "param", rn(V, D, scale=0.3)),
        ("n1", "param", 1 + rn(L, D, scale=0.1)),
        ("w_q", "param", rn(L, D, G * R * K, scale=0.25)),
        ("w_k", "param", rn(L, D, G * K, scale=0.25)),
        ("w_v", "param", rn(L, D, G * K, scale=0.25)),
        ("w_o", "param", rn(L, G * R * K, D, scale=0.25)),
        ("n2", "param", 1 + rn(L, D, scale=0.1)),
        ("w_gate", "param", rn(L, D, F_, scale=0.25)),
        ("w_up", "param", rn(L, D, F_, scale=0.25)),
        ("w_down", "param", rn(L, F_, D, scale=0.2)),
        ("nf", "param", 1 + rn(D, scale=0.1)),
        ("w_out", "param", rn(D, V, scale=0.3)),
    ]


def llama_forward(t):
    """llama2.ein's forward in torch: RMSNorm (eps 1e-6), Hugging Face's rotate_half rotary
    embeddings, grouped-query attention (query head g·R + r reads key/value head g), SwiGLU."""
    s = dict(LLAMA_SIZES)
    L, B, S, D, G, R, K, V = s["L"], s["B"], s["S"], s["D"], s["G"], s["R"], s["K"], s["V"]
    dt = t["emb"].dtype

    def rms(x, gain):
        return x * torch.rsqrt(torch.mean(x * x, dim=-1, keepdim=True) + 1e-6) * gain

    def rotate_half(z):
        return torch.cat([-z[..., K // 2:], z[..., :K // 2]], dim=-1)

    def rope(z):  # z: ... S K
        return z * t["cos"] + rotate_half(z) * t["sin"]

    x = F.embedding(t["tok"], t["emb"])
    for l in range(L):
        a = rms(x, t["n1"][l])
        q = (a @ t["w_q"][l]).reshape(B, S, G, R, K).permute(0, 2, 3, 1, 4)  # B G R S K
        k = (a @ t["w_k"][l]).reshape(B, S, G, K).permute(0, 2, 1, 3)  # B G T K
        v = (a @ t["w_v"][l]).reshape(B, S, G, K).permute(0, 2, 1, 3)
        qr, kr = rope(q), rope(k)
        s2 = (qr @ kr.unsqueeze(2).transpose(-1, -2)) * torch.tensor(LLAMA_SCALE, dtype=dt) + t["mask"]
        p = torch.softmax(s2, dim=-1)
        o = (p @ v.unsqueeze(2)).permute(0, 3, 1, 2, 4).reshape(B, S, G * R * K)
        h = x + o @ t["w_o"][l]
        b = rms(h, t["n2"][l])
        x = h + (F.silu(b @ t["w_gate"][l]) * (b @ t["w_up"][l])) @ t["w_down"][l]
    logits = rms(x, t["nf"]) @ t["w_out"]
    ce = F.cross_entropy(logits.reshape(B * S, V), t["tgt"].reshape(B * S), reduction="none")
    return ce.mean()


def cast(values, dtype):
    """The declarations with their float tensors in `dtype` ("f32" or "f64"): [(name, kind, dtype name, tensor)]."""
    out = []
    for name, kind, v in values:
        if v.is_floating_point():
            out.append((name, kind, dtype, v.to(DTYPES[dtype])))
        else:
            out.append((name, kind, "i64", v.clone()))
    return out


# ---- a training run ----


def make_optimizer(params, optimizer, lr, momentum, weight_decay, beta1, beta2, eps):
    if optimizer == "sgd":
        return torch.optim.SGD(params, lr=lr, weight_decay=weight_decay)
    if optimizer == "momentum":
        return torch.optim.SGD(params, lr=lr, momentum=momentum, dampening=0, nesterov=False,
                               weight_decay=weight_decay)
    if optimizer == "adam":
        return torch.optim.Adam(params, lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay,
                                amsgrad=False)
    if optimizer == "adamw":
        return torch.optim.AdamW(params, lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay,
                                 amsgrad=False)
    raise ValueError(optimizer)


def train(decls, forward, optimizer, lr, momentum, weight_decay, beta1, beta2, eps, steps):
    """Returns (losses, first step's grads {name: tensor}, final params {name: tensor})."""
    t = {}
    params = []
    for name, kind, _, v in decls:
        if kind == "param":
            t[name] = v.clone().requires_grad_(True)
            params.append(t[name])
        else:
            t[name] = v.clone()
    # mixed precision (bf16 params): the optimizer steps f32 master copies, whose gradients are
    # the bf16 gradients widened, and each param is then its master rounded to bf16
    mixed = any(p.dtype == torch.bfloat16 for p in params)
    masters = [p.detach().float().requires_grad_(True) for p in params] if mixed else params
    opt = make_optimizer(masters, optimizer, lr, momentum, weight_decay, beta1, beta2, eps)
    losses, grads = [], None
    for step in range(steps):
        opt.zero_grad(set_to_none=False)
        for p in params:
            p.grad = None
        t["_step"] = step  # dropout's masks of this step (gpt2.ein's; the other models have none)
        loss = forward(t)
        loss.backward()
        losses.append(loss.item())
        if grads is None:
            grads = {name: t[name].grad.detach().clone() for name, kind, _, _ in decls if kind == "param"}
        if mixed:
            for p, m in zip(params, masters):
                m.grad = p.grad.float()
        opt.step()
        if mixed:
            with torch.no_grad():
                for p, m in zip(params, masters):
                    p.copy_(m.to(torch.bfloat16))
    final = {name: t[name].detach().clone() for name, kind, _, _ in decls if kind == "param"}
    return losses, grads, final


# ---- C++ text ----


def cpp(v):
    v = float(v)
    assert math.isfinite(v), v
    return repr(v)


def values(t):
    t = t.detach()
    shape = ", ".join(str(d) for d in t.shape)
    data = t.to(f64).reshape(-1).tolist() if t.is_floating_point() else [float(i) for i in t.reshape(-1).tolist()]
    return "{{" + shape + "}, {" + ", ".join(cpp(v) for v in data) + "}}"


def named(name, dtype, t):
    return f'{{"{name}", "{dtype}", {values(t)}}}'


cases = []

OPT_DEFAULTS = dict(momentum=0.0, weight_decay=0.0, beta1=0.9, beta2=0.999, eps=1e-8)


def case(model, sizes, vals, forward, dtype, optimizer, steps, **hyper):
    h = dict(OPT_DEFAULTS)
    h.update(hyper)
    decls = cast(vals, dtype)
    losses, grads, final = train(decls, forward, optimizer, h["lr"], h["momentum"], h["weight_decay"], h["beta1"],
                                 h["beta2"], h["eps"], steps)
    what = f"{model.removesuffix('.ein')}, {optimizer}, {dtype}, {steps} steps"
    pdtype = {name: dt for name, kind, dt, _ in decls}
    lines = [
        "  {",
        f'    "{what}", "{model}",',
        "    {" + ", ".join(f'{{"{n}", {v}}}' for n, v in sizes) + "},",
        f'    "{dtype}", "{optimizer}",',
        "    " + ", ".join(cpp(h[k]) for k in ("lr", "momentum", "weight_decay", "beta1", "beta2", "eps")) + ",",
        f"    {steps},",
        "    {" + ",\n     ".join(named(name, dt, v) for name, _, dt, v in decls) + "},",
        "    {" + ", ".join(cpp(v) for v in losses) + "},",
        "    {" + ",\n     ".join(named(n, pdtype[n], g) for n, g in grads.items()) + "},",
        "    {" + ",\n     ".join(named(n, pdtype[n], p) for n, p in final.items()) + "},",
        "  },",
    ]
    cases.append("\n".join(lines))


def main():
    lecture2 = lecture2_values()
    for dtype in ("f64", "f32"):
        case("lecture2.ein", LECTURE2_SIZES, lecture2, lecture2_forward, dtype, "sgd", 5, lr=0.1)
        case("lecture2.ein", LECTURE2_SIZES, lecture2, lecture2_forward, dtype, "momentum", 5, lr=0.05, momentum=0.9,
             weight_decay=0.01)
        case("lecture2.ein", LECTURE2_SIZES, lecture2, lecture2_forward, dtype, "adam", 5, lr=0.01, beta1=0.9,
             beta2=0.999, eps=1e-8, weight_decay=0.01)
        case("lecture2.ein", LECTURE2_SIZES, lecture2, lecture2_forward, dtype, "adamw", 5, lr=0.01, beta1=0.9,
             beta2=0.95, eps=1e-8, weight_decay=0.1)
    case("lecture2.ein", LECTURE2_SIZES, lecture2, lecture2_forward, "f32", "adam", 20, lr=0.01, beta1=0.9,
         beta2=0.999, eps=1e-8, weight_decay=0.01)

    gpt2 = gpt2_values()
    for dtype in ("f64", "f32"):
        case("gpt2_train.ein", GPT2_SIZES, gpt2, gpt2_forward, dtype, "adamw", 3, lr=1e-3, beta1=0.9, beta2=0.95,
             eps=1e-8, weight_decay=0.1)
    case("gpt2_train.ein", GPT2_SIZES, gpt2, gpt2_forward, "f64", "sgd", 2, lr=0.1)
    case("gpt2.ein", GPT2L_SIZES, gpt2l_values(), gpt2l_forward, "f64", "sgd", 2, lr=0.1)
    case("llama2.ein", LLAMA_SIZES, llama_values(), llama_forward, "f64", "sgd", 2, lr=0.1)
    # mixed precision: bf16 params, inputs and compute, f32 master weights and optimizer state
    case("lecture2.ein", LECTURE2_SIZES, lecture2, lecture2_forward, "bf16", "adam", 5, lr=0.01, beta1=0.9,
         beta2=0.999, eps=1e-8, weight_decay=0.01)
    case("gpt2_train.ein", GPT2_SIZES, gpt2, gpt2_forward, "bf16", "adamw", 3, lr=1e-3, beta1=0.9, beta2=0.95,
         eps=1e-8, weight_decay=0.1)

    version = ".".join(torch.__version__.split(".")[:2])
    print(f"// Generated by tests/lib/data/make_train_torch.py (torch {version}): do not edit.")
    print("""#pragma once
#include <cstdint>
#include <utility>
#include <vector>
namespace train_torch {
struct Values { std::vector<std::int64_t> shape; std::vector<double> data; };
struct Named { const char* name; const char* dtype; Values v; };  // dtype "f32", "f64", "bf16" or "i64"
struct Case {
  const char* what;       // e.g. "lecture2, adamw, f32"
  const char* model;      // a file of examples/models/, e.g. "lecture2.ein"
  std::vector<std::pair<const char*, std::int64_t>> sizes;  // axis overrides NAME=LEN
  const char* dtype;      // "f32", "f64" or "bf16" (mixed precision: f32 master weights): the run's float dtype
  const char* optimizer;  // "sgd", "momentum", "adam" or "adamw"
  double lr, momentum, weight_decay, beta1, beta2, eps;
  int steps;
  std::vector<Named> inputs;   // every input and every param's initial value, in the model file's declaration order
  std::vector<double> losses;  // steps entries: the loss each step's forward computed (before that step's update)
  std::vector<Named> grads;    // every param's gradient in the FIRST step
  std::vector<Named> params;   // every param after `steps` updates
};
inline const std::vector<Case> cases = {""")
    print("\n".join(cases))
    print("};")
    print("}  // namespace train_torch")


if __name__ == "__main__":
    main()
