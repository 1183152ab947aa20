"""einexpr.Program: a model program from a file or text, checked, costed (the object
`einexpr program cost --json` prints), run against numpy, and trained against torch.optim
step for step in f64; the errors name what is wrong."""
import json
import os
import threading
import time

import numpy as np
import pytest

import einexpr
from conftest import run_cli

MODELS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "models"))
LECTURE = os.path.join(MODELS, "lecture2.ein")
GPT2_BLOCK = os.path.join(MODELS, "gpt2_block.ein")

LECTURE_TEXT = """\
# x --w1--> h1 --w2--> h2 -> loss
axes B=16 D=32 E=24 K=8
input x: B D
param w1: D E
param w2: E K
h1 = einsum(x, w1, "B D, D E -> B E")
h2 = einsum(h1, w2, "B E, E K -> B K")
sq = map(h2, "B K -> B K", "square")
loss = reduce(sq, "B K ->", "mean")
"""


def lecture_numpy(x, w1, w2):
    return np.mean(np.square(x @ w1 @ w2))


def lecture_data(rng, b=16, d=256, e=256, k=64, steps=3):
    xs = [rng.standard_normal((b, d)) for _ in range(steps)]
    w1 = rng.standard_normal((d, e)) / np.sqrt(d)
    w2 = rng.standard_normal((e, k)) / np.sqrt(e)
    return xs, w1, w2


# ---- the program ----------------------------------------------------------------------

def test_program_from_file_and_text():
    m = einexpr.Program(LECTURE, B=16)
    assert m.file == LECTURE
    assert (m.inputs, m.params, m.outputs) == (["x"], ["w1", "w2"], ["loss"])
    assert m.check() is None
    assert m.shapes() == {"x": ((16, 256), "f32"), "w1": ((256, 256), "f32"), "w2": ((256, 64), "f32")}
    t = einexpr.Program(LECTURE_TEXT)
    assert t.file == "<program>"
    assert t.check() is None
    assert t.shapes("f64")["w2"] == ((24, 8), "f64")
    import pathlib
    assert einexpr.Program(pathlib.Path(LECTURE)).file == LECTURE


def test_check_raises_with_line_column_and_caret():
    bad_shapes = LECTURE_TEXT.replace("param w2: E K", "param w2: D K")
    m = einexpr.Program(bad_shapes)  # names are fine: the shapes are check()'s
    with pytest.raises(einexpr.Error) as e:
        m.check()
    msg = str(e.value)
    assert msg.startswith("<program>:7:")
    assert "h2 = einsum(h1, w2" in msg and "\n" in msg and "^" in msg
    with pytest.raises(einexpr.Error, match=r"(?s)<program>:6:16: unknown tensor 'w3'.*\n +\^"):
        einexpr.Program(LECTURE_TEXT.replace("einsum(x, w1", "einsum(x, w3"))
    with pytest.raises(einexpr.Error, match="unknown axis 'Q'"):
        einexpr.Program(LECTURE, Q=3).check()
    with pytest.raises(einexpr.Error, match="cannot read .*missing.ein"):
        einexpr.Program("missing.ein")
    with pytest.raises(einexpr.ArgumentError):
        einexpr.Program(3)


# ---- cost -----------------------------------------------------------------------------

@pytest.mark.parametrize("sizes,options,flags", [
    ({"B": 64}, {}, []),
    ({}, {"optimizer": "adam", "dtype": "bf16", "mixed_precision": True},
     ["--optimizer", "adam", "--dtype", "bf16", "--mixed-precision"]),
    ({"B": 8, "D": 512}, {"optimizer": "adamw", "device": "a100", "dtype": "f64"},
     ["--optimizer", "adamw", "--device", "a100", "--dtype", "f64"]),
    ({"B": 64}, {"recompute": "checkpoints", "checkpoints": ["h2"]}, ["--recompute", "checkpoints", "--checkpoint", "h2"]),
])
def test_cost_is_program_cost_json(sizes, options, flags):
    got = einexpr.Program(LECTURE, **sizes).cost(**options)
    status, out, err = run_cli("program", "cost", LECTURE, *[f"{k}={v}" for k, v in sizes.items()], *flags, "--json")
    assert status == 0, err
    assert got == json.loads(out)
    assert got["file"] == LECTURE and got["axes"]["B"] == sizes.get("B", 1024)


def test_cost_recompute_auto_is_program_cost_json():
    gpt2 = os.path.join(MODELS, "gpt2_train.ein")
    got = einexpr.Program(gpt2).cost(optimizer="adam", recompute="auto", memory_limit=72000)
    status, out, err = run_cli("program", "cost", gpt2, "--optimizer", "adam", "--recompute", "auto",
                               "--memory-limit", "72000", "--json")
    assert status == 0, err
    assert got == json.loads(out)
    assert got["recompute"]["mode"] == "auto" and got["recompute"]["recomputes"]
    assert got["recompute_flops"] > 0 and got["memory"]["peak_bytes"] <= 72000
    assert einexpr.Program(gpt2).cost(optimizer="adam", memory_limit="70.3125KiB") == got  # auto implied, units read
    with pytest.raises(einexpr.Error, match="no choice of what to keep for the backward fits"):
        einexpr.Program(gpt2).cost(optimizer="adam", recompute="auto", memory_limit=1000)
    with pytest.raises(einexpr.ArgumentError, match="memory_limit must be a byte count"):
        einexpr.Program(gpt2).cost(memory_limit=1.5)
    with pytest.raises(einexpr.ArgumentError, match="--recompute auto needs --memory-limit"):
        einexpr.Program(gpt2).cost(recompute="auto")


def test_cost_of_text_is_that_of_its_file(tmp_path):
    path = tmp_path / "lecture.ein"
    path.write_text(LECTURE_TEXT)
    got = einexpr.Program(LECTURE_TEXT, B=4).cost(optimizer="momentum")
    status, out, err = run_cli("program", "cost", str(path), "B=4", "--optimizer", "momentum", "--json")
    assert status == 0, err
    want = json.loads(out)
    assert got["file"] == "<program>"
    want["file"] = "<program>"
    assert got == want


def test_cost_without_the_tool():
    c = einexpr.Program(LECTURE, B=8).cost()
    assert c["axes"] == {"B": 8, "D": 256, "E": 256, "K": 64}
    assert c["params"] == 256 * 256 + 256 * 64
    assert c["forward_flops"] == 2 * 8 * 256 * 256 + 2 * 8 * 256 * 64 + 8 * 64 + 8 * 64  # einsums, square, mean
    assert [s["name"] for s in c["statements"]] == ["h1", "h2", "sq", "loss"]
    with pytest.raises(einexpr.Error, match="unknown device 'tpu'"):
        einexpr.Program(LECTURE).cost(device="tpu")
    with pytest.raises(einexpr.Error, match="unknown optimizer 'adagrad'"):
        einexpr.Program(LECTURE).cost(optimizer="adagrad")


# ---- run ------------------------------------------------------------------------------

def test_run_against_numpy(rng):
    xs, w1, w2 = lecture_data(rng)
    m = einexpr.Program(LECTURE, B=16)
    out = m.run(x=xs[0], w1=w1, w2=w2)
    assert list(out) == ["loss"] and isinstance(out["loss"], np.ndarray) and out["loss"].shape == ()
    np.testing.assert_allclose(out["loss"], lecture_numpy(xs[0], w1, w2), rtol=1e-12)
    # the plan kept for the same shapes, a new one for others (the shapes bind the axes)
    np.testing.assert_allclose(m.run(x=xs[1], w1=w1, w2=w2)["loss"], lecture_numpy(xs[1], w1, w2), rtol=1e-12)
    with pytest.raises(einexpr.Error, match="'x' gives axis 'B' length 5 .* but it is 16 \\(given as B=16\\)"):
        m.run(x=xs[1][:5], w1=w1, w2=w2)
    m = einexpr.Program(LECTURE)  # B=1024 on its axes line: the given shapes decide
    np.testing.assert_allclose(m.run(x=xs[1][:5], w1=w1, w2=w2)["loss"], lecture_numpy(xs[1][:5], w1, w2), rtol=1e-12)
    t = einexpr.Program(LECTURE_TEXT)
    x, v1, v2 = rng.standard_normal((16, 32)), rng.standard_normal((32, 24)), rng.standard_normal((24, 8))
    f = t.run(x=x.astype(np.float32), w1=np.asfortranarray(v1.astype(np.float32)), w2=v2.astype(np.float32))
    assert f["loss"].dtype == np.float32
    np.testing.assert_allclose(f["loss"], lecture_numpy(x, v1, v2), rtol=1e-5)


def test_run_several_outputs_and_torch(rng):
    torch = pytest.importorskip("torch")
    m = einexpr.Program(LECTURE_TEXT + "output h1 loss\n")
    x, w1, w2 = rng.standard_normal((16, 32)), rng.standard_normal((32, 24)), rng.standard_normal((24, 8))
    out = m.run(x=torch.from_numpy(x), w1=torch.from_numpy(w1), w2=torch.from_numpy(w2))
    assert list(out) == ["h1", "loss"] and all(isinstance(v, torch.Tensor) for v in out.values())
    np.testing.assert_allclose(out["h1"].numpy(), x @ w1, rtol=1e-12)
    np.testing.assert_allclose(out["loss"].item(), lecture_numpy(x, w1, w2), rtol=1e-12)


def test_run_errors_name_the_tensor(rng):
    m = einexpr.Program(LECTURE_TEXT)
    x, w1, w2 = np.zeros((16, 32)), np.zeros((32, 24)), np.zeros((24, 8))
    with pytest.raises(einexpr.Error, match="'h1' is computed by the program"):
        m.run(x=x, w1=w1, w2=w2, h1=np.zeros((16, 24)))
    with pytest.raises(einexpr.Error, match="'w3' names no input or param.*params: w1, w2"):
        m.run(x=x, w1=w1, w2=w2, w3=w2)
    with pytest.raises(einexpr.Error, match="missing param 'w2': run\\(\\) takes every input and param"):
        m.run(x=x, w1=w1)
    with pytest.raises(einexpr.Error, match="'w2' gives axis 'E' length 23"):
        m.run(x=x, w1=w1, w2=np.zeros((23, 8)))


# ---- training -------------------------------------------------------------------------

def torch_reference(torch, make_optimizer, xs, w1, w2):
    """Losses and final params of torch.optim on the lecture model, in f64."""
    p1 = torch.tensor(w1, dtype=torch.float64, requires_grad=True)
    p2 = torch.tensor(w2, dtype=torch.float64, requires_grad=True)
    opt = make_optimizer([p1, p2])
    losses, grads = [], []
    for x in xs:
        opt.zero_grad()
        loss = (torch.from_numpy(x) @ p1 @ p2).square().mean()
        loss.backward()
        grads.append({"w1": p1.grad.numpy().copy(), "w2": p2.grad.numpy().copy()})
        losses.append(loss.item())
        opt.step()
    return losses, {"w1": p1.detach().numpy(), "w2": p2.detach().numpy()}, grads


OPTIMIZERS = [
    ("adam", {"lr": 1e-2, "betas": (0.9, 0.99), "eps": 1e-8},
     lambda torch, ps: torch.optim.Adam(ps, lr=1e-2, betas=(0.9, 0.99), eps=1e-8)),
    ("sgd", {"lr": 0.1, "weight_decay": 0.01},
     lambda torch, ps: torch.optim.SGD(ps, lr=0.1, weight_decay=0.01)),
    ("momentum", {"lr": 0.05, "momentum": 0.8},
     lambda torch, ps: torch.optim.SGD(ps, lr=0.05, momentum=0.8)),
    ("adamw", {"lr": 1e-2, "weight_decay": 0.1},
     lambda torch, ps: torch.optim.AdamW(ps, lr=1e-2, weight_decay=0.1)),
]


@pytest.mark.parametrize("optimizer,options,reference", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_trainer_against_torch_optim(rng, optimizer, options, reference):
    torch = pytest.importorskip("torch")
    xs, w1, w2 = lecture_data(rng)
    losses, params, grads = torch_reference(torch, lambda ps: reference(torch, ps), xs, w1, w2)
    t = einexpr.Program(LECTURE, B=16).trainer(optimizer=optimizer, **options, w1=w1, w2=w2)
    assert t.steps == 0 and t.optimizer == optimizer
    got = []
    for x in xs:
        got.append(t.step(x=x))
        assert isinstance(got[-1], float)
    assert t.steps == 3
    np.testing.assert_allclose(got, losses, rtol=1e-10, atol=0)
    mine = t.parameters()
    assert sorted(mine) == ["w1", "w2"]
    for name in mine:
        assert mine[name].dtype == np.float64
        np.testing.assert_allclose(mine[name], params[name], rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(t.gradients()[name], grads[-1][name], rtol=1e-10, atol=1e-13)
    # copies: the caller's arrays and earlier copies do not move with the trainer
    before = t.parameters()["w1"].copy()
    t.parameters()["w1"][...] = 0
    np.testing.assert_array_equal(t.parameters()["w1"], before)
    snapshot = t.parameters()["w2"]
    t.step(x=xs[0])
    assert not np.array_equal(snapshot, t.parameters()["w2"])
    assert not np.array_equal(w1, t.parameters()["w1"])
    assert t.peak_bytes_predicted >= 2 * (w1.nbytes + w2.nbytes)


def test_trainer_on_torch_inputs_in_f32(rng):
    torch = pytest.importorskip("torch")
    xs, w1, w2 = lecture_data(rng, b=8, d=32, e=24, k=8)
    t = einexpr.Program(LECTURE_TEXT, B=8).trainer(optimizer="sgd", lr=0.1, w1=torch.from_numpy(w1).float(),
                                                   w2=w2.astype(np.float32))
    loss = t.step(x=torch.from_numpy(xs[0]).float())
    np.testing.assert_allclose(loss, lecture_numpy(xs[0], w1, w2), rtol=1e-5)
    assert t.parameters()["w1"].dtype == torch.float32  # torch params in, torch params out (the first decides)


def test_trainer_errors_name_what_is_wrong(rng):
    m = einexpr.Program(LECTURE_TEXT)
    w1, w2 = np.zeros((32, 24)), np.zeros((24, 8))
    with pytest.raises(einexpr.Error, match="param 'w3' names no input or param of the program"):
        m.trainer(w1=w1, w2=w2, w3=w2)
    with pytest.raises(einexpr.Error, match="'x' is an input, not a param"):
        m.trainer(w1=w1, w2=w2, x=np.zeros((16, 32)))
    with pytest.raises(einexpr.Error, match="missing param 'w2'"):
        m.trainer(w1=w1)
    with pytest.raises(einexpr.Error, match="'w2' gives axis 'E' length 23"):
        m.trainer(w1=w1, w2=np.zeros((23, 8)))
    with pytest.raises(einexpr.Error, match="unknown optimizer 'adagrad'"):
        m.trainer(optimizer="adagrad", w1=w1, w2=w2)
    with pytest.raises(einexpr.ArgumentError, match="betas"):
        m.trainer(betas=0.9, w1=w1, w2=w2)
    t = m.trainer(w1=w1, w2=w2)
    with pytest.raises(einexpr.ShapeError, match="input 'x' has shape \\[16, 31\\]"):
        t.step(x=np.zeros((16, 31)))
    with pytest.raises(einexpr.DTypeError, match="input 'x' is f32"):
        t.step(x=np.zeros((16, 32), np.float32))
    with pytest.raises(einexpr.Error, match="'w1' is a param"):
        t.step(x=np.zeros((16, 32)), w1=w1)
    with pytest.raises(einexpr.Error, match="missing input 'x'"):
        t.step()
    assert t.steps == 0
    # the one output must be the loss: gpt2_block's is y, a [B S D] tensor
    g = einexpr.Program(GPT2_BLOCK, B=1, S=4, T=4, D=8, H=2, K=4, F=16)
    params = {n: np.zeros(s) for n, (s, _) in g.shapes("f64").items() if n in g.params}
    with pytest.raises(einexpr.Error, match="'y' \\[B=1, S=4, D=8\\] f64 is not"):
        g.trainer(**params)


def test_step_releases_the_gil(rng):
    xs, w1, w2 = lecture_data(rng, b=2048, d=256, e=256, k=64, steps=1)
    t = einexpr.Program(LECTURE, B=2048).trainer(w1=w1, w2=w2)
    ticks_inside = 0
    for _ in range(20):
        window = {}

        def work():
            window["start"] = time.perf_counter()
            t.step(x=xs[0])
            window["end"] = time.perf_counter()

        worker = threading.Thread(target=work)
        ticks = []
        worker.start()
        while worker.is_alive():
            ticks.append(time.perf_counter())
            time.sleep(0.0005)
        worker.join()
        ticks_inside = sum(window["start"] < s < window["end"] for s in ticks)
        if ticks_inside >= 5:
            break
    assert ticks_inside >= 5


def test_trainer_micro_batches_equal_the_full_batch():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 6))
    w1, w2 = rng.standard_normal((6, 5)) * 0.5, rng.standard_normal((5, 3)) * 0.5
    p = einexpr.Program(LECTURE, B=8)
    whole = p.trainer(optimizer="adam", lr=0.01, w1=w1, w2=w2)
    micro = p.trainer(optimizer="adam", lr=0.01, micro_batches=4, w1=w1, w2=w2)
    for _ in range(3):
        assert micro.step(x=x) == pytest.approx(whole.step(x=x), rel=1e-12)
    for name, value in whole.parameters().items():
        np.testing.assert_allclose(micro.parameters()[name], value, rtol=1e-11)
    with pytest.raises(einexpr.Error, match="does not split into 3 equal micro-batches"):
        p.trainer(micro_batches=3, w1=w1, w2=w2).step(x=x)
    with pytest.raises(einexpr.ArgumentError, match="micro_batches must be an integer"):
        p.trainer(micro_batches=1.5, w1=w1, w2=w2)


def test_trainer_mixed_precision_bf16():
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(3)
    x = torch.randn(8, 6, generator=g).bfloat16()
    w1 = (torch.randn(6, 5, generator=g) * 0.5).bfloat16()
    w2 = (torch.randn(5, 3, generator=g) * 0.5).bfloat16()
    p = einexpr.Program(LECTURE, B=8)
    with pytest.raises(einexpr.Error, match="train it with mixed precision"):
        p.trainer(optimizer="adam", lr=0.01, w1=w1, w2=w2)
    t = p.trainer(optimizer="adam", lr=0.01, mixed_precision=True, w1=w1, w2=w2)
    # torch by hand: bf16 forward and backward, adam on f32 masters, params their rounding
    params = [w1.clone().requires_grad_(True), w2.clone().requires_grad_(True)]
    masters = [q.detach().float().requires_grad_(True) for q in params]
    opt = torch.optim.Adam(masters, lr=0.01)
    for _ in range(3):
        loss = t.step(x=x)
        for q in params:
            q.grad = None
        want = torch.square(x @ params[0] @ params[1]).mean()
        want.backward()
        for q, m in zip(params, masters):
            m.grad = q.grad.float()
        opt.step()
        with torch.no_grad():
            for q, m in zip(params, masters):
                q.copy_(m.bfloat16())
        assert loss == pytest.approx(want.item(), rel=2e-2)  # a few bf16 ulps (8 bits)
    got = t.parameters()
    for name, q in zip(("w1", "w2"), params):
        assert got[name].dtype == torch.bfloat16
        np.testing.assert_allclose(got[name].float().numpy(), q.detach().float().numpy(), atol=3 * 0.01 * 2 + 1e-2)


def test_trainer_checkpoints_recompute_bit_for_bit():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((8, 6))
    w1, w2 = rng.standard_normal((6, 5)), rng.standard_normal((5, 3))
    p = einexpr.Program(LECTURE, B=8)
    keep = p.trainer(optimizer="adam", lr=0.01, w1=w1, w2=w2)
    again = p.trainer(optimizer="adam", lr=0.01, checkpoints=["h2"], w1=w1, w2=w2)
    assert [keep.step(x=x) for _ in range(2)] == [again.step(x=x) for _ in range(2)]
    for name, value in keep.parameters().items():
        assert np.array_equal(again.parameters()[name], value)
    assert keep.recompute_flops == 0
    assert again.recompute_flops == 2 * 8 * 6 * 5  # h1 = x w1, made again for dw2
    with pytest.raises(einexpr.Error, match="'x' is no statement's result"):
        p.trainer(checkpoints=["x"], w1=w1, w2=w2)
    with pytest.raises(einexpr.ArgumentError, match="checkpoints must be a list"):
        p.trainer(checkpoints="h2", w1=w1, w2=w2)
    nothing = p.trainer(optimizer="adam", lr=0.01, checkpoints=[], w1=w1, w2=w2)  # only the loss kept
    assert nothing.recompute_flops > again.recompute_flops


def test_trainer_recompute_auto_within_the_limit():
    rng = np.random.default_rng(11)
    p = einexpr.Program(os.path.join(MODELS, "gpt2_train.ein"))
    params = {name: rng.standard_normal(shape).astype(np.float32) for name, (shape, dtype) in p.shapes().items()
              if name not in ("tok", "tgt", "mask")}
    tok = rng.integers(0, 32, (2, 8))
    tgt = rng.integers(0, 32, (2, 8))
    mask = np.triu(np.full((8, 8), -1e9, dtype=np.float32), 1)
    keep = p.trainer(optimizer="adam", **params)
    limit = int(keep.peak_bytes_predicted * 0.95)
    auto = p.trainer(optimizer="adam", recompute="auto", memory_limit=limit, **params)
    assert auto.peak_bytes_predicted <= limit < keep.peak_bytes_predicted
    assert auto.recompute_flops > 0
    assert [keep.step(tok=tok, tgt=tgt, mask=mask) for _ in range(2)] == \
        [auto.step(tok=tok, tgt=tgt, mask=mask) for _ in range(2)]


# ---- blocks: a layer written once ---------------------------------------------------------

BLOCK_TEXT = """\
axes L=3 B=4 D=8 F=16
input x: B D
param w1: L D F
param w2: L F D
block layer(h) over L
  a = einsum(h, w1, "B D, D F -> B F")
  z = map(a, "B F -> B F", "tanh")
  m = einsum(z, w2, "B F, F D -> B D")
  y = map(h, m, "B D, B D -> B D", "add")
end
hL = layer(x)
sq = map(hL, "B D -> B D", "square")
loss = reduce(sq, "B D ->", "mean")
output loss hL
"""


def test_block_runs_as_numpy_loops_over_the_stacked_params():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 8))
    w1 = rng.standard_normal((3, 8, 16)) / np.sqrt(8)
    w2 = rng.standard_normal((3, 16, 8)) / np.sqrt(16)
    p = einexpr.Program(BLOCK_TEXT)
    out = p.run(x=x.astype(np.float32), w1=w1.astype(np.float32), w2=w2.astype(np.float32))
    h = x
    for layer in range(3):
        h = h + np.tanh(h @ w1[layer]) @ w2[layer]
    assert set(out) == {"loss", "hL"}  # the call's name, not its last layer's
    np.testing.assert_allclose(out["hL"], h, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["loss"], np.mean(h * h), rtol=1e-5)
    assert p.shapes()["w1"] == ((3, 8, 16), "f32")  # the stack, as declared
    assert p.cost()["params"] == 2 * 3 * 8 * 16


# dropout's masks written out again from SplitMix64 (Steele, Lea and Flood 2014): bits(s, i) is
# the i-th output from state s; element i is kept when its top 32 bits reach round(p·2^32)
M64 = (1 << 64) - 1


def _mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def _keep(seed, n, p):
    s = seed & M64
    t = int(p * 4294967296.0 + 0.5)
    return np.array([(_mix((s + (i + 1) * 0x9E3779B97F4A7C15) & M64) >> 32) >= t for i in range(n)])


def test_dropout_draws_splitmix64_masks(rng):
    x = rng.standard_normal((5, 7))
    y = einexpr.dropout(x, 0.3, 123)
    keep = _keep(123, x.size, 0.3).reshape(x.shape)
    np.testing.assert_array_equal(y, np.where(keep, x * (1 / 0.7), 0.0))
    assert 0 < keep.sum() < x.size
    np.testing.assert_array_equal(einexpr.dropout(x, 0.3, 2**64 - 1), np.where(_keep(2**64 - 1, 35, 0.3).reshape(5, 7),
                                                                               x * (1 / 0.7), 0.0))
    np.testing.assert_array_equal(einexpr.dropout(x, 0.0, 5), x)
    with pytest.raises(einexpr.Error, match=r"outside \[0, 1\)"):
        einexpr.dropout(x, 1.0, 0)
    with pytest.raises(einexpr.ArgumentError, match="seed"):
        einexpr.dropout(x, 0.5, 2**64)


def test_trainer_seed_draws_other_masks():
    text = ("axes B=4 D=3\ninput x: B D\nparam w: D D\nh = einsum(x, w, \"B D, D E -> B E\", E=3)\n"
            "d = dropout(h, 0.5)\nq = map(d, \"B E -> B E\", \"square\")\nloss = reduce(q, \"B E ->\", \"sum\")\n")
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((4, 3)), rng.standard_normal((3, 3))
    p = einexpr.Program(text)
    losses = {}
    for seed in (1, 1, 2):
        t = p.trainer(w=w, seed=seed, lr=0.0)
        losses.setdefault(seed, []).append(t.step(x=x))
    assert losses[1][0] == losses[1][1]
    assert losses[1][0] != losses[2][0]
    # a run is inference: no dropout
    np.testing.assert_allclose(p.run(x=x, w=w)["loss"], ((x @ w) ** 2).sum(), rtol=1e-12)
