// The new ops as model statements: token ids (i64 / i32 inputs), get_at, add_at,
// cross_entropy, concatenation, a split statement with several names, numbers in place of
// tensors. Each run against the same ops called directly (test_indexed.cpp checks those
// against torch); their costs and gradients; the errors, at their line and column.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "einexpr/einexpr.hpp"
#include "matchers.hpp"

using namespace einexpr;
using testing_support::MessageHas;

namespace {

using Inputs = std::map<std::string, Tensor, std::less<>>;

const std::string lm_program =
    "axes B=2 S=5 V=13 D=6 Q=2 K=4\n"
    "input tokens: B S i64\n"
    "input targets: B S i32\n"
    "param wte: V D\n"
    "param wpe: S D\n"
    "e = get_at(wte, tokens, \"[V] D, B S -> B S D\")\n"
    "x = map(e, wpe, \"B S D, S D -> B S D\", \"add\")\n"
    "h = map(x, 0.5, \"B S D, -> B S D\", \"mul\")\n"
    "q, k = rearrange(h, \"B S (Q + K) -> B S Q, B S K\")\n"
    "j = rearrange(k, q, \"B S K, B S Q -> B S (K + Q)\")\n"
    "logits = einsum(j, wte, \"B S D, V D -> B S V\")\n"
    "loss = cross_entropy(logits, targets, \"B S [V], B S -> B S\")\n"
    "total = reduce(loss, \"B S ->\", \"mean\")\n"
    "back = add_at(wte, tokens, e, \"[V] D, B S, B S D -> [V] D\")\n"
    "output total loss q k back\n";

Tensor ints(const std::vector<std::int64_t>& v, Shape shape, DType dtype) {
  return Tensor::from_vector(v, std::move(shape)).to(dtype);
}

}  // namespace

TEST_CASE("program: token ids, get_at, a split, numbers, concatenation, cross_entropy, add_at", "[program][indexed]") {
  const ast::Program p = parse_program(lm_program, "lm.ein");
  const CompiledProgram prog(p);
  Inputs in;
  in["tokens"] = ints({0, 3, 12, 3, 7, 1, 1, 9, 4, 0}, {2, 5}, DType::i64);
  in["targets"] = ints({3, 12, 3, 7, 1, 1, 9, 4, 0, 2}, {2, 5}, DType::i32);
  in["wte"] = Tensor::randn({13, 6}, DType::f32, 1);
  in["wpe"] = Tensor::randn({5, 6}, DType::f32, 2);
  const ProgramRun run = prog.run(in);
  std::map<std::string, Tensor> out(run.outputs.begin(), run.outputs.end());
  // The same ops, called directly.
  const Tensor e = get_at(in["wte"], in["tokens"], "[V] D, B S -> B S D");
  const Tensor x = map(e, in["wpe"], "B S D, S D -> B S D", "add");
  const Tensor h = map(x, 0.5, "B S D, -> B S D", "mul");
  const std::vector<Tensor> qk = split(h, "B S (Q + K) -> B S Q, B S K", {{"Q", 2}});
  const Tensor j = rearrange({qk[1], qk[0]}, "B S K, B S Q -> B S (K + Q)");
  const Tensor logits = einsum(j, in["wte"], "B S D, V D -> B S V");
  const Tensor loss = cross_entropy(logits, in["targets"], "B S [V], B S -> B S");
  CHECK(out.at("q").to_vector<float>() == qk[0].to_vector<float>());
  CHECK(out.at("k").to_vector<float>() == qk[1].to_vector<float>());
  CHECK(out.at("loss").to_vector<float>() == loss.to_vector<float>());
  CHECK(out.at("total").to_vector<float>() == reduce(loss, "B S ->", "mean").to_vector<float>());
  CHECK(out.at("back").to_vector<float>() ==
        add_at(in["wte"], in["tokens"], e, "[V] D, B S, B S D -> [V] D").to_vector<float>());
  CHECK(run.peak_bytes_measured <= prog.peak_bytes_predicted());
  // The plan: a constant for the number, one statement per output of the split.
  const ProgramPlan& plan = prog.plan();
  int constants = 0;
  for (const ProgramTensor& t : plan.tensors) constants += t.role == TensorRole::constant;
  CHECK(constants == 1);
  CHECK(plan.tensor(plan.tensor("tokens")).dtype == DType::i64);
  CHECK(plan.tensor(plan.tensor("q")).shape == Shape{2, 5, 2});
  // The cost: get_at's 0 FLOPs, cross_entropy's 4 per logit + 1 per row, gradients toward
  // the params only (none toward the token ids).
  const ProgramCost c = cost(plan);
  CHECK(c.params == Count(13 * 6 + 5 * 6));
  for (const StatementCost& s : c.statements) {
    if (s.name == "e") CHECK(s.forward.flops == Count(0));
    if (s.name == "loss") CHECK(s.forward.flops == Count(4 * 2 * 5 * 13 + 2 * 5));
  }
}

TEST_CASE("program: pack, as a concatenation of flattened dims, and its cost", "[program][indexed]") {
  const std::string text =
      "axes B=2 S=3 T=2 U=2 V=4 D=4 N=7 E=3\n"
      "input x: B S D\ninput y: B T U D\nparam w: D E\n"
      "p = pack(x, y, \"B * D\")\n"
      "f = rearrange(y, \"B T U D -> B (T U) D\")\n"
      "c = rearrange(x, f, \"B S D, B V D -> B (S + V) D\")\n"
      "h = einsum(p, w, \"B N D, D E -> B N E\")\n"
      "output p c h\n";
  const CompiledProgram prog(parse_program(text, "pack.ein"));
  Inputs in;
  in["x"] = Tensor::randn({2, 3, 4}, DType::f32, 3);
  in["y"] = Tensor::randn({2, 2, 2, 4}, DType::f32, 4);
  in["w"] = Tensor::randn({4, 3}, DType::f32, 5);
  const ProgramRun run = prog.run(in);
  std::map<std::string, Tensor> out(run.outputs.begin(), run.outputs.end());
  const Tensor direct = pack(std::vector<Tensor>{in["x"], in["y"]}, "B * D").first;
  CHECK(out.at("p").shape() == Shape{2, 7, 4});
  CHECK(out.at("p").to_vector<float>() == direct.to_vector<float>());
  CHECK(out.at("p").to_vector<float>() == out.at("c").to_vector<float>());
  CHECK(out.at("h").to_vector<float>() == einsum(direct, in["w"], "B N D, D E -> B N E").to_vector<float>());
  // pack moves every element once: reads and writes 2*7*4 f32; its pattern shown as written.
  const ProgramCost c = cost(prog.plan());
  bool seen = false;
  for (const StatementCost& s : c.statements) {
    if (s.name != "p") continue;
    seen = true;
    CHECK(s.pattern == "B * D");
    CHECK(s.forward.flops == Count(0));
    CHECK(s.forward.bytes_read == Count(2 * 7 * 4 * 4));
    CHECK(s.forward.bytes_written == Count(2 * 7 * 4 * 4));
  }
  CHECK(seen);
}

TEST_CASE("program: the new statements' errors, at their line and column", "[program][indexed]") {
  struct Bad {
    std::string text;
    std::string message;
    std::size_t line;
  };
  const std::string head = "axes B=2 S=3 V=5 D=4\ninput t: B S i64\ninput f: B S\nparam w: V D\n";
  for (const Bad& b : std::vector<Bad>{
           {head + "e = get_at(w, f, \"[V] D, B S -> B S D\")", "holds integer indices; declare it i64 or i32", 5},
           {head + "e = get_at(w, 3, \"[V] D, -> D\")", "number 3 in place of get_at's indices", 5},
           {head + "a, b = get_at(w, t, \"[V] D, B S -> B S D\")", "the pattern has 1 output but 2 tensors are named", 5},
           {head + "a = rearrange(w, \"V (D1 + D2) -> V D1, V D2\")", "the pattern has 2 outputs but 1 tensor is named", 5},
           {head + "a = map(w, 2x, \"V D, -> V D\", \"mul\")", "a number runs into letters", 5},
           {head + "a = map(2, 3, \", -> \", \"mul\")", "every operand of 'a' is a number", 5},
           {head + "e = get_at(w, t, \"[V] D, B S -> B S\")", "lacks axis 'D'", 5},
           {head + "a, b = unpack(w, \"V *\")", "unpack needs its outputs' shapes", 5},
           {head + "a = pack(w, f, \"V * D\")", "the dims around '*' must match", 5},
       }) {
    CAPTURE(b.text);
    try {
      const ast::Program p = parse_program(b.text, "bad.ein");
      (void)plan_program(p);
      FAIL("accepted");
    } catch (const ProgramError& e) {
      CHECK_THAT(e, MessageHas(b.message));
      CHECK(e.place().line == b.line);
    }
  }
}

TEST_CASE("program: a device's part of the table (ProgramOptions::parts): get_at reads zeros outside it, add_at adds inside it only",
          "[program][indexed]") {
  // A device of a mesh holding rows [4, 8) of an 8-row table (what lib's mesh run sets for
  // "V:tp" on its second of two devices): indices are checked against all 8 rows, a row
  // outside the part is a row of zeros (the mesh's all-reduce adds the other device's), an
  // update outside it is another device's to add.
  const ast::Program p = parse_program(
      "axes B=4 V=8 D=3\ninput tok: B i64\nparam wte: V D\ninput upd: B D\n"
      "e = get_at(wte, tok, \"[V] D, B -> B D\")\n"
      "back = add_at(wte, tok, upd, \"[V] D, B, B D -> [V] D\")\noutput e back\n",
      "part.ein");
  const Tensor whole = Tensor::randn({8, 3}, DType::f32, 11), upd = Tensor::randn({4, 3}, DType::f32, 12);
  const Tensor tok = ints({1, 5, 7, 5}, {4}, DType::i64);
  ProgramOptions o;
  o.axes = {{"V", 4}};
  o.parts = {{"V", AxisPart{4, 8, -1}}};
  const CompiledProgram part(p, o);
  const Tensor mine = whole.slice(0, 4, 8).contiguous();
  const ProgramRun r = part.run(Inputs{{"tok", tok}, {"wte", mine}, {"upd", upd}});
  std::map<std::string, Tensor> out(r.outputs.begin(), r.outputs.end());
  const std::vector<float> e = out.at("e").to_vector<float>(), w = whole.to_vector<float>(), u = upd.to_vector<float>();
  const std::vector<std::int64_t> rows = {1, 5, 7, 5};
  for (std::size_t b = 0; b < 4; ++b)
    for (std::size_t d = 0; d < 3; ++d)
      CHECK(e[b * 3 + d] == (rows[b] >= 4 ? w[static_cast<std::size_t>(rows[b]) * 3 + d] : 0.0f));
  // add_at: rows 5 (twice) and 7 of the whole table, at 1 and 3 of this part
  std::vector<float> want = mine.to_vector<float>();
  for (std::size_t b = 0; b < 4; ++b)
    if (rows[b] >= 4)
      for (std::size_t d = 0; d < 3; ++d) want[static_cast<std::size_t>(rows[b] - 4) * 3 + d] += u[b * 3 + d];
  CHECK(out.at("back").to_vector<float>() == want);
  // the plan says so; an index past the whole axis is refused, one past the part is not
  CHECK_THAT(to_string(part.plan().statements.at(0).plan), Catch::Contains("4 rows, part [4, 8) of 8"));
  CHECK_THROWS_WITH(part.run(Inputs{{"tok", ints({1, 8, 0, 0}, {4}, DType::i64)}, {"wte", mine}, {"upd", upd}}),
                    Catch::Contains("index 8 at position [1] is out of range [0, 8)"));
  // a cross_entropy on part of its classes needs a mesh run's collectives
  const ast::Program q = parse_program("axes B=2 V=6\ninput x: B V\ninput t: B i64\n"
                                       "ce = cross_entropy(x, t, \"B [V], B -> B\")\n", "part_ce.ein");
  ProgramOptions oq;
  oq.axes = {{"V", 3}};
  oq.parts = {{"V", AxisPart{3, 6, -1}}};
  CHECK_THROWS_WITH(CompiledProgram(q, oq).run(Inputs{{"x", Tensor::randn({2, 3}, DType::f32, 3)}, {"t", ints({0, 5}, {2}, DType::i64)}}),
                    Catch::Contains("without a mesh's collectives"));
}
