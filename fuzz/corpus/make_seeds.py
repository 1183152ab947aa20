#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/README.md): patterns for fuzz_parse,
model programs for fuzz_model (with examples/models/*.ein), hand-made .npy files for
fuzz_npy, encoded cases for fuzz_plan (format in plan_case.hpp) and einsums of 11-64
operands in the same format for fuzz_order.
Run from anywhere; it rewrites the seed_* files beside it and leaves other files (crashes
found by fuzzing, kept as regression inputs) alone. Needs only the standard library."""
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    os.makedirs(os.path.join(HERE, target), exist_ok=True)
    with open(os.path.join(HERE, target, "seed_" + name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8"))


# ---- fuzz_parse: pattern text --------------------------------------------------------------
PATTERNS = [
    "b h w c -> b (h w) c", "b (h d) -> b h d", "b s h -> b h", "h w -> h w c", "i j, j k -> i k",
    "b i j, b j k -> b i k", "i i -> i", "... i, ... i -> ...", "a b c d e -> (a b) c d e",
    "b () h 1 -> b h", "(b1 b2) h w c -> (b1 h) (b2 w) c", "... -> (...)", "  a  ->  ", " -> ",
    "b ... c -> c ... b", "i j * k", "* a b", "a, b, c, d -> a b c d",
    # malformed
    "b (h d -> b h d", "a b) -> a b", "(a (b c)) -> a b c", "a .. -> a", "2b -> b", "a -> b -> c",
    "a, , b -> a", "a -> b c, d", "a\x00b -> a", "caf\u00e9 -> caf\u00e9", "a \u2192 b", "a -\u00e9> b",
    "99999999999999999999 -> a", "9223372036854775807 -> a", "0 -> a", "a_ -> a", "(a, b) -> a b",
    "\xff\xfe -> a",
    # concatenation, split, indexed patterns (parse_indexed: get_at, add_at, cross_entropy)
    "b s1 d, b s2 d -> b (s1 + s2) d", "b s (q + k + v) -> b s q, b s k, b s v", "(a + b) c -> c a, b c",
    "a (b + ) -> a b", "a + b -> a", "[v] d, b s -> b s d", "b [n] d, b k -> b k d",
    "[v] d, b s, b s d -> [v] d", "b s [v], b s -> b s", "[v] [d], b -> b", "[(v w)] d, n -> n d", "[v d, n -> n",
]


def parse_seeds():
    for i, p in enumerate(PATTERNS):
        write("parse", "%02d" % i, p.encode("latin-1") if "\xff" in p else p.encode("utf-8"))
    write("parse", "long", "a " * 2050 + "-> a")  # over the 4096-byte limit


# ---- fuzz_model: model programs -------------------------------------------------------------
MODEL_PRELUDE = "axes B=2 D=3 E=4\ninput x: B D\nparam w: D E bf16\n"
MODELS = [
    MODEL_PRELUDE + 'h = einsum(x, w, "B D, D E -> B E")\n',
    MODEL_PRELUDE + 'h = einsum(x, w, "B D, D E -> B E")\ng = map(h, "B E -> B E", "gelu")\n'
    'r = reduce(g, "B E -> B", "mean")\noutput h r\n',
    MODEL_PRELUDE + 'y = rearrange(x, "B (h d) -> B h d", h=3)\nz = repeat(y, "B h d -> B h d c", c=2)\n',
    MODEL_PRELUDE + 'm = map(x, x, "B D, B D -> B D", "mul")  # comment\r\n\toutput m\r\n',
    "# only a comment\n\n",
    "axes H=2 K=3\ninput s:\nparam q: (H K) f8_e4m3\nt = rearrange(q, \"(H K) -> K H\")\n",
    # malformed and inconsistent
    MODEL_PRELUDE + 'h = einsum(x, w, "B D, D E -> B (E")\n',
    MODEL_PRELUDE + 'h = einsum(x, v, "B D, D E -> B E")\n',
    MODEL_PRELUDE + 'h = map(g, "B D -> B D", "exp")\ng = map(x, "B D -> B D", "exp")\n',
    MODEL_PRELUDE + 'x = map(x, "B D -> D B", "gleu")\n',
    MODEL_PRELUDE + 'h = reduce(x, "B D -> B")\noutput z z\n',
    MODEL_PRELUDE + 'h = einsum(x, w, "B D, D E -> B E", c=2, "sum")\n',
    "axes B=0 C=99999999999999999999 f32=1\n",
    "input = map(x, \"a -> a\")\n",
    'h = map(x, "a\x00 -> a", "caf\u00e9")\n',
    "axes B=2\ninput x: B\nh = map(x, \"B -> B\", \"exp\"\n",
    # token ids, the indexed ops, numbers, concatenation and a split statement
    "axes B=2 S=3 V=7 D=4 Q=1 K=3\ninput t: B S i64\ninput y: B S i32\nparam w: V D\n"
    "e = get_at(w, t, \"[V] D, B S -> B S D\")\nh = map(e, 0.5, \"B S D, -> B S D\", \"mul\")\n"
    "q, k = rearrange(h, \"B S (Q + K) -> B S Q, B S K\")\nj = rearrange(k, q, \"B S K, B S Q -> B S (K + Q)\")\n"
    "l = einsum(j, w, \"B S D, V D -> B S V\")\nc = cross_entropy(l, y, \"B S [V], B S -> B S\")\n"
    "g = add_at(w, t, e, \"[V] D, B S, B S D -> [V] D\")\noutput c g q\n",
    "axes B=2 V=5\ninput t: B f32\nparam w: V\ne = get_at(w, t, \"[V], B -> B\")\n",
    "axes B=2\ninput x: B\nh = map(x, 1e400, \"B, -> B\", \"mul\")\n",
    "axes B=2\ninput x: B\na, b = map(x, 2, \"B, -> B\", \"mul\")\n",
    # past the parser: views, accumulation, 0-d and three-operand einsums (planned, costed, run)
    "axes A=3 B=4 Q=2 R=2\nparam w: A B\ninput v: B\ninput m: A A\ninput n: A Q\n"
    't = rearrange(w, "A B -> B A")\nu = einsum(t, v, "B A, B -> A")\nd = einsum(m, "A A -> A")\n'
    'e = map(u, d, "A, A -> A", "maximum")\nr = repeat(e, "A -> A R")\ns = reduce(r, "A R -> R", "prod")\n'
    'z = einsum(w, v, n, "A B, B, A Q -> Q")\nmx = reduce(w, "A B ->", "max")\noutput t s z mx d\n',
    "axes B=4 D=3\ninput x: B D\nparam w: D\na = map(x, w, \"B D, D -> B D\", \"mul\")\n"
    "b = map(a, a, \"B D, B D -> B D\", \"add\")\nloss = reduce(b, \"B D ->\", \"sum\")\n",
    # semantic faults: a length two statements disagree on, dtypes, an integer param
    MODEL_PRELUDE + 'h = einsum(x, w, "B D, D E -> B E")\ng = map(h, "B D -> B D", "exp")\n',
    "axes B=4\ninput x: B bf16\nparam w: B\nh = map(x, w, \"B, B -> B\", \"mul\")\n",
    "axes B=4\nparam w: B i64\nh = map(w, \"B -> B\", \"exp\")\n",
    # normalizations along bracketed axes, and brackets where they do not belong
    "axes B=2 S=3 D=4\ninput x: B S D\nparam g: D\nn = layer_norm(x, \"B S [D]\")\n"
    "y = map(n, g, \"B S D, D -> B S D\", \"mul\")\np = softmax(y, \"B [S] D\")\n"
    "r = rms_norm(p, \"B [S D]\")\nl = log_softmax(r, \"[B] S D\")\n",
    MODEL_PRELUDE + 'n = softmax(x, "B D")\nm = layer_norm(x, "[B D] -> B D")\nr = reduce(x, "B [D] -> B", "sum")\n',
    # checkpoint lines: kept for the backward (trained with them), and their faults
    "axes B=4 D=3 E=5\ninput x: B D\nparam w: D E\nparam v: E\nh = einsum(x, w, \"B D, D E -> B E\")\n"
    "g = map(h, \"B E -> B E\", \"gelu\")\nm = map(g, v, \"B E, E -> B E\", \"mul\")\ncheckpoint g\n"
    "loss = reduce(m, \"B E ->\", \"mean\")\n",
    MODEL_PRELUDE + 'h = einsum(x, w, "B D, D E -> B E")\ncheckpoint h, x\ncheckpoint h h\ncheckpoint\n',
    # normalizations with their affine part in the statement, and a gain over the wrong dims
    "axes B=2 S=3 D=4\ninput x: B S D\nparam g: D\nparam b: D\nn = layer_norm(x, g, b, \"B S [D]\")\n"
    "r = rms_norm(n, g, \"B S [D]\")\nloss = reduce(r, \"B S D ->\", \"mean\")\n",
    "axes B=2 S=3 D=4\ninput x: B S D\nparam g: S\nn = layer_norm(x, g, \"B S [D]\")\nm = softmax(x, g, \"B S [D]\")\n",
    # dropout: trained (its mask kept, its seed set per step), a run's identity; and its faults
    "axes B=4 D=3 E=5\ninput x: B D\nparam w: D E\nh = einsum(x, w, \"B D, D E -> B E\")\nd = dropout(h, 0.25)\n"
    "e = dropout(d, 0)\nq = map(e, \"B E -> B E\", \"square\")\nloss = reduce(q, \"B E ->\", \"mean\")\n",
    MODEL_PRELUDE + 'd = dropout(x, 1)\ne = dropout(x)\nf = dropout(x, w)\ng = dropout(x, 0.5, "B D, -> B D")\n',
    # a mesh and a layout: data and tensor parallelism over named axes, and their faults
    "axes B=4 D=3 E=4\nmesh dp=2@ib tp=2@nvlink\nshard B:dp E:tp\ninput x: B D\nparam w: D E\nparam v: E D\n"
    "h = einsum(x, w, \"B D, D E -> B E\")\ng = map(h, \"B E -> B E\", \"gelu\")\nz = einsum(g, v, \"B E, E D -> B D\")\n"
    "loss = reduce(z, \"B D ->\", \"mean\")\n",
    "axes B=4 D=3\nmesh dp=2 dp=3\nshard B:tp Q:dp\nmesh tp=0\ninput x: B D\nh = map(x, \"B D -> B D\", \"exp\")\n",
]


def model_seeds():
    for i, text in enumerate(MODELS):
        write("model", "%02d" % i, text)
    models = os.path.join(HERE, "..", "..", "examples", "models")
    # the zoo's block models at tiny sizes, so that every mutation is planned, run and trained fast
    small = {"gpt2.ein": ("gpt2_layers.ein", b"axes L=2 B=2 S=4 T=4 D=8 H=2 K=4 F=16 V=11"),
             "llama2.ein": ("llama2_layers.ein", b"axes L=2 B=2 S=4 T=4 D=8 G=2 R=2 K=4 K1=2 K2=2 F=12 V=11")}
    for name in sorted(os.listdir(models)):
        if name.endswith(".ein"):
            with open(os.path.join(models, name), "rb") as f:
                text = f.read()
            if name in small:
                seed, axes = small[name]
                lines = text.split(b"\n")
                lines = [axes if line.startswith(b"axes ") else line for line in lines]
                write("model", seed, b"\n".join(lines))
            else:
                write("model", name, text)


# ---- fuzz_npy: .npy files ------------------------------------------------------------------
def npy(descr, shape, data, fortran=False, version=1, pad=True):
    shape_text = "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape_text)
    field = 2 if version == 1 else 4
    if pad:
        total = 10 + (field - 2) + len(d) + 1
        d += " " * ((64 - total % 64) % 64)
    d += "\n"
    head = b"\x93NUMPY" + bytes([version, 0]) + len(d).to_bytes(field, "little")
    return head + d.encode("latin-1") + data


def npy_seeds():
    f4 = b"".join(struct.pack("<f", v) for v in range(6))
    write("npy", "f4_2x3.npy", npy("<f4", (2, 3), f4))
    write("npy", "f4_fortran.npy", npy("<f4", (2, 3), f4, fortran=True))
    write("npy", "f8_big.npy", npy(">f8", (3,), b"".join(struct.pack(">d", v) for v in (1.5, -2, 3))))
    write("npy", "f2.npy", npy("<f2", (2,), b"\x00\x3c\x00\xc0"))
    write("npy", "i8.npy", npy("<i8", (2, 1), struct.pack("<qq", -1, 2**62)))
    write("npy", "i4_big.npy", npy(">i4", (2,), struct.pack(">ii", 7, -7)))
    write("npy", "bool.npy", npy("|b1", (4,), b"\x00\x01\x02\x00"))
    write("npy", "bool_q.npy", npy("?", (1,), b"\x01"))
    write("npy", "bf16.npy", npy("<V2", (2,), b"\x80\x3f\x00\x40"))
    write("npy", "bfloat16.npy", npy("bfloat16", (1,), b"\x80\x3f"))
    write("npy", "e4m3.npy", npy("float8_e4m3fn", (3,), b"\x38\x40\xc0"))
    write("npy", "e5m2.npy", npy("float8_e5m2", (2,), b"\x3c\xbc"))
    write("npy", "u2.npy", npy("<u2", (2,), b"\x80\x3f\x00\x40"))
    write("npy", "scalar.npy", npy("<f8", (), struct.pack("<d", 3.25)))
    write("npy", "empty.npy", npy("<f4", (0, 5), b""))
    write("npy", "v2.npy", npy("<i4", (2,), struct.pack("<ii", 1, 2), version=2))
    write("npy", "v3.npy", npy("<f4", (1,), struct.pack("<f", 1), version=3))
    write("npy", "unpadded.npy", npy("<f4", (1,), struct.pack("<f", 2), pad=False))
    write("npy", "rank4.npy", npy("<i4", (1, 2, 1, 2), struct.pack("<iiii", 1, 2, 3, 4), fortran=True))
    write("npy", "lying_shape.npy", npy("<f8", (1000000000000,), b"\x00" * 8))
    write("npy", "overflow.npy", npy("<f4", (4294967296, 4294967296), b""))
    write("npy", "truncated.npy", npy("<f4", (2, 3), f4)[:-5])


# ---- fuzz_plan: encoded cases (plan_case.hpp) ----------------------------------------------
KINDS = {"rearrange": 0, "reduce": 1, "repeat": 2, "einsum": 3, "binary": 4, "unary": 5, "get_at": 6, "add_at": 7,
         "cross_entropy": 8, "pack": 9, "unpack": 10}
DTYPES = {"f64": 0, "f32": 1, "f16": 2, "bf16": 3, "e4m3": 4, "e5m2": 5, "i64": 6, "i32": 7, "bool": 8}
SMALL = {1: 0, 2: 1, 3: 2, 4: 3, 5: 4, 0: 5}  # length -> the byte draw_length reads as it


def plan_case(kind, dtype, pattern, sizes, layouts=None, flags=0, choice=0, choice2=0, ellipsis=(), extra=b""):
    """sizes: one length per name in order of first appearance; layouts: per operand, the
    layout kind byte followed by its parameter bytes; ellipsis: what '...' stands for."""
    head = bytes([KINDS[kind], DTYPES[dtype], flags, choice, choice2])
    params = bytes(SMALL.get(s, 0) for s in sizes)
    params += bytes([len(ellipsis)]) + bytes(SMALL[s] for s in ellipsis)
    for layout in layouts or []:
        params += bytes(layout) + b"\x01"  # the layout, then an offset of 1 for running
    return head + pattern.encode() + b"\x00" + params + extra


ALL = 2  # flag: every length given


def plan_seeds():
    seeds = [
        ("rearrange", "f32", "b h w c -> b (h w) c", [2, 3, 4, 5], [[0]]),
        ("rearrange", "f32", "b h w c -> (b c) h w", [2, 3, 4, 5], [[1]]),
        ("rearrange", "f64", "b (h d) -> b h d", [2, 3, 2], [[3, 1, 2]], ALL),
        ("rearrange", "i32", "(b1 b2) h -> (b1 h) b2", [2, 2, 3], [[2, 1]], ALL),
        ("rearrange", "bf16", "b ... c -> c ... b", [2, 3], [[0]], 0, 0, 0, (2, 2)),
        ("rearrange", "e4m3", "a b -> b a", [3, 4], [[4, 1, 0]]),
        ("rearrange", "f32", "a 1 b -> a b", [3, 4], [[5, 1, 2, 3]]),
        ("reduce", "f32", "b s h -> b h", [2, 3, 4], [[0]], 0, 0),
        ("reduce", "f64", "b (s 2) h -> h b", [2, 3, 4], [[1]], ALL, 1),
        ("reduce", "i64", "a b c -> c", [2, 3, 2], [[2, 2, 1]], 0, 2),
        ("reduce", "f32", "a b -> a", [3, 0], [[0]], 0, 3),
        ("reduce", "bool", "a b -> b", [3, 2], [[0]], 0, 5),
        ("reduce", "i32", "... h -> h", [3], [[3, 2, 2]], 0, 4, 0, (2,)),
        ("repeat", "f32", "h w -> h w c", [2, 3, 4], [[0]], ALL),
        ("repeat", "f16", "h -> (h 2) r", [3, 2], [[0]], ALL),
        ("repeat", "i64", "a b -> b a 3", [2, 2], [[4, 1, 1]], ALL, 0, 2),
        ("einsum", "f32", "i j, j k -> i k", [2, 3, 4], [[0], [1]]),
        ("einsum", "f64", "b i j, b j k -> b i k", [2, 3, 4, 5], [[0], [2, 1, 0]]),
        ("einsum", "f32", "i i -> i", [3], [[0]]),
        ("einsum", "i64", "... i, ... i -> ...", [3], [[0], [0]], 0, 0, 0, (2, 3)),
        ("einsum", "f32", "a b, b c, c d -> a d", [2, 3, 4, 5], [[0], [1], [3, 2, 2]]),
        ("einsum", "i32", "a b, c d -> a b c d", [2, 2, 3, 1], [[0], [5, 0, 1]]),
        ("einsum", "f32", "a b c -> ", [2, 3, 4], [[0]]),
        ("einsum", "f64", "(a b) c, c -> a b", [2, 3, 4], [[0], [0]], 0, 0, 3),
        ("einsum", "f32", "a b, a b, a b, a b -> a", [3, 2], [[0], [1], [0], [4, 1, 0]], 0, 0, 6),
        ("einsum", "f64", "i, -> i", [4], [[0], [0]]),               # a 0-d operand
        ("einsum", "f32", ", i, i ->", [3], [[0], [1], [0]]),        # 0-d, and a scalar output
        ("einsum", "f64", "a a b, b c -> a c", [3, 2, 4], [[0], [1]]),  # a diagonal (and its gradient)
        ("einsum", "f64", "a b e, b c, c d -> a d", [2, 3, 2, 4, 3], [[1], [0], [0]]),  # a private axis
        ("binary", "f64", "a b, -> a b", [2, 3], [[0], [0]], 0, 2),   # a 0-d operand of a map
        ("binary", "f32", "b s h, h -> b s h", [2, 3, 4], [[0], [0]], 0, 0),
        ("binary", "i32", "a b, b a -> a b", [2, 3], [[0], [1]], 0, 3),
        ("binary", "f64", "a, b -> a b", [3, 4], [[3, 2], [4, 1]], 0, 5),
        ("unary", "f32", "", [2, 3], [[0]], 0, 1),
        ("unary", "f64", "", [4], [[1]], 0, 10),
    ]
    for i, s in enumerate(seeds):
        kind, dtype, pattern, sizes, layouts = s[:5]
        flags = s[5] if len(s) > 5 else 0
        choice = s[6] if len(s) > 6 else 0
        choice2 = s[7] if len(s) > 7 else 0
        ellipsis = s[8] if len(s) > 8 else ()
        if kind == "unary":  # the rank comes first, then the sizes
            data = bytes([KINDS[kind], DTYPES[dtype], flags, choice, choice2]) + b"\x00" + bytes([len(sizes)])
            data += bytes(SMALL[x] for x in sizes) + b"\x00" + bytes(layouts[0]) + b"\x01"
        else:
            data = plan_case(kind, dtype, pattern, sizes, layouts, flags, choice, choice2, ellipsis)
        write("plan", "%02d_%s" % (i, kind), data)
    # enormous lengths: planned and costed, never run
    write("plan", "huge_einsum", bytes([3, 1, 4, 0, 0]) + b"i j, j k -> i k\x00" + bytes([0x86, 0x87, 0x85, 0]))
    write("plan", "huge_repeat", bytes([2, 0, 6, 0, 1]) + b"a -> a b c\x00" + bytes([0x84, 0x86, 0x87, 0]))
    write("plan", "huge_anon", bytes([2, 1, 2, 0, 0]) + b"a -> a 4611686018427387904 2\x00" + bytes([2, 0]))
    # splits, their outputs run through split() too (check_split): 64 rows and more of the
    # input, copied in one pass with Copy::always (choice2 2); views with Copy::if_needed
    for name, dtype, pattern, sizes, choice2 in [
        ("split_rows_always", "f32", "b1 b2 b3 (q + k + v) -> b1 b2 b3 q, b1 b2 b3 k, b1 b2 b3 v", [4, 4, 4, 2, 3, 1], 2),
        ("split_rows_bf16", "bf16", "b1 b2 b3 (q + k) -> b1 b2 b3 q, b1 b2 b3 k", [4, 4, 5, 1, 3], 2),
        ("split_views", "f64", "b (q + k) -> b q, b k", [3, 2, 2], 0),
    ]:
        write("plan", name, plan_case("rearrange", dtype, pattern, sizes, [[0]], ALL, 0, choice2))
    # pack: the names' lengths, the number of inputs - 1, then per input its "*" rank and
    # lengths; unpack: the same for its outputs, then the output planned, the shape that may
    # get a -1 and whether it does (0) and where; then each input's layout and offset
    for name, kind, dtype, pattern, sizes, draw in [
        ("pack_2", "pack", "f32", "b * d", [2, 3], [1, 1, 1, 2, 1, 2]),              # "*": (2), (2, 3)
        ("pack_3", "pack", "i64", "* h", [2], [2, 0, 1, 0, 2, 1, 5]),                # "*": (), (1), (2, 0)
        ("pack_star_first", "pack", "bf16", "* a b", [3, 2], [0, 2, 2, 1]),         # "*": (3, 2)
        ("unpack_2", "unpack", "f32", "b * d", [2, 3], [1, 1, 2, 1, 3, 1, 0, 0]),   # output 2 of (-1 = 3), (4)
        ("unpack_infer", "unpack", "f64", "* c", [4], [2, 1, 1, 1, 2, 1, 3, 0, 1, 0, 0]),  # output 1 of (2), (3), (4)
        ("unpack_scalar", "unpack", "i32", "a *", [3], [1, 0, 1, 1, 1, 1]),
    ]:
        data = bytes([KINDS[kind], DTYPES[dtype], 0, 0, 0]) + pattern.encode() + b"\x00"
        data += bytes(SMALL[x] for x in sizes) + bytes(draw) + bytes([0, 1, 3, 1, 1, 1, 0, 1])
        write("plan", name, data)


# ---- fuzz_order: einsums of 11-64 operands, fuzz_plan's format -----------------------------
def rand_equation(rng, n, reg, n_out, diagonal=False):
    """An einsum of n operands in the way of opt_einsum's rand_equation: every inner axis in
    two operands (about reg axes an operand), n_out output axes in one each."""
    inner = ["x%d" % i for i in range(n * reg // 2)]
    outer = ["o%d" % i for i in range(n_out)]
    ops = [[] for _ in range(n)]
    for a in inner:
        for k in rng.sample(range(n), 2):
            ops[k].append(a)
    for a in outer:
        ops[rng.randrange(n)].append(a)
    for k, o in enumerate(ops):
        if not o:
            o.append(inner[k % len(inner)])
        rng.shuffle(o)
    if diagonal:
        ops[0].append(ops[0][0])
    return ", ".join(" ".join(o) for o in ops) + " -> " + " ".join(outer)


def names_in_order(pattern):
    seen = []
    for side in pattern.replace("->", ",").split(","):
        for a in side.split():
            if a not in seen and a[0].isalpha():
                seen.append(a)
    return seen


def order_seeds():
    rng = random.Random(34)
    chain = lambda n: ", ".join("c%d c%d" % (i, i + 1) for i in range(n)) + " -> c0 c%d" % n
    ring = lambda n: ", ".join("r%d r%d" % (i, (i + 1) % n) for i in range(n)) + " ->"
    # (name, dtype, flags, choice2, pattern, length bytes: cycled over the names)
    seeds = [
        ("chain_11", "f32", 0, 0, chain(11), [1]),                 # matrix chain, small: runs
        ("chain_30_sizes", "f64", 0, 0, chain(30), [1, 2, 3, 4]),
        ("ring_12", "f32", 0, 0, ring(12), [1]),
        ("ring_20_greedy", "f64", 0, 3, ring(20), [2, 1]),
        ("rand_11", "f32", 0, 0, rand_equation(rng, 11, 3, 2), [1, 2]),
        ("rand_14", "f64", 0, 0, rand_equation(rng, 14, 3, 1), [1, 2, 0, 3]),
        ("rand_18_i64", "i64", 0, 0, rand_equation(rng, 18, 3, 2), [1, 2]),
        ("rand_24", "f32", 0, 0, rand_equation(rng, 24, 3, 2), [1, 2, 3]),
        ("rand_30", "f32", 0, 0, rand_equation(rng, 30, 3, 2), [1, 2]),
        ("rand_31_heuristic", "bf16", 0, 0, rand_equation(rng, 31, 3, 2), [1, 2, 3]),
        ("rand_40_naive", "f32", 0, 6, rand_equation(rng, 40, 3, 2), [1, 2]),
        ("rand_48", "f16", 0, 0, rand_equation(rng, 48, 4, 3), [1, 2, 4]),
        ("rand_64", "f32", 0, 0, rand_equation(rng, 64, 3, 2), [4, 1, 2]),
        ("rand_64_reg4", "f64", 0, 0, rand_equation(rng, 64, 4, 0), [1, 2]),
        ("rand_16_diagonal", "f64", 0, 0, rand_equation(rng, 16, 3, 2, diagonal=True), [0, 1]),
        ("rand_13_inconsistent", "f32", 1, 0, rand_equation(rng, 13, 3, 2), [1, 2]),
        ("rand_20_huge", "f32", 4, 0, rand_equation(rng, 20, 3, 2), [0x85, 1, 0x87, 2]),
        ("rand_12_lengths", "f32", 2, 0, rand_equation(rng, 12, 2, 2), [1, 2]),
        ("groups_2x8", "f64", 0, 0, chain(7).replace(" -> c0 c7", ", ") + ring(8).replace("r", "g") + " c0 c7", [1, 0]),
        ("batch_12_ellipsis", "f32", 0, 0, ", ".join("... e%d e%d" % (i, i + 1) for i in range(12)) + " -> ... e0", [1]),
        ("rand_11_zero", "f32", 0, 0, rand_equation(rng, 11, 3, 2), [1, 5]),
    ]
    for name, dtype, flags, choice2, pattern, lengths in seeds:
        n = len(names_in_order(pattern))
        params = bytes(lengths[i % len(lengths)] for i in range(n))
        if "..." in pattern:
            params += bytes([2, 1, 0])  # "..." stands for (2, 1)
        else:
            params += bytes([0])
        layouts = b"".join(bytes([k % 3, 1]) for k in range(pattern.count(",") + 1))  # contiguous, transposed, permuted
        write("order", name, bytes([KINDS["einsum"], DTYPES[dtype], flags, 0, choice2]) + pattern.encode() + b"\x00"
              + params + layouts)


if __name__ == "__main__":
    parse_seeds()
    model_seeds()
    npy_seeds()
    plan_seeds()
    order_seeds()
