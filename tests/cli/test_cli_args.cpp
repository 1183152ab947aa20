// The command line's rough edges: patterns that begin with "->" are positionals ("--"
// also ends the options), bench --copy picks a rearrange's or repeat's copy policy, and
// an error on a long pattern quotes only a window of it.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

using namespace einexpr;
using test::Sandbox;

TEST_CASE("patterns beginning with '->' are positionals, and '--' ends the options") {
  Sandbox box;
  const Tensor scalar = Tensor::full({}, 2.5, DType::f32);
  box.write_npy("s.npy", scalar);
  struct Row {
    std::vector<std::string> args;
    Shape shape;  // of out.npy
  };
  const std::vector<Row> rows = {
      {{"rearrange", "->", "s.npy", "-o", "out.npy"}, {}},
      {{"rearrange", "-o", "out.npy", "->", "s.npy"}, {}},
      {{"einsum", "->", "s.npy", "-o", "out.npy"}, {}},
      {{"repeat", "-> r", "s.npy", "-o", "out.npy", "r=3"}, {3}},
      {{"repeat", "-o", "out.npy", "--", "-> r c", "s.npy", "r=2", "c=2"}, {2, 2}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.args);
    const test::CliResult r = box.run(row.args);
    INFO(r);
    REQUIRE(r.status == 0);
    const Tensor out = box.read_npy("out.npy");
    CHECK(out.shape() == row.shape);
    CHECK(out.to_vector<float>() == std::vector<float>(static_cast<std::size_t>(out.numel()), 2.5f));
  }
  CHECK(box.run({"check", "->"}).out == "ok (rearrange)\n");
  CHECK(box.run({"check", "--", "->"}).out == "ok (rearrange)\n");
  CHECK(box.run({"check", "-> a", "--op", "repeat"}).out == "ok (repeat)\n");
  const test::CliResult c = box.run({"cost", "einsum", "->", "--json"});
  INFO(c);
  REQUIRE(c.status == 0);
  CHECK(nlohmann::json::parse(c.out)["pattern"] == "->");
  // A malformed pattern beginning with "->" is the library's error (exit 1) with its caret,
  // quoted without the mark the tool adds internally.
  const test::CliResult bad = box.run({"check", "-> (a"});
  CHECK(bad.status == 1);
  CHECK_THAT(bad.err, Catch::Contains("  -> (a\n"));
  CHECK(bad.err.find('\x1f') == std::string::npos);
  const test::CliResult extra = box.run({"check", "a -> a", "->"});
  CHECK(extra.status == 2);
  CHECK_THAT(extra.err, Catch::Contains("->"));
  CHECK(extra.err.find('\x1f') == std::string::npos);
}

TEST_CASE("bench --copy times a rearrange's or repeat's view or copy") {
  Sandbox box;
  struct Row {
    std::vector<std::string> args;
    bool view;
  };
  const std::vector<std::string> permute = {"bench", "rearrange", "b h w -> b w h", "b=2", "h=8", "w=16"};
  const std::vector<std::string> broadcast = {"bench", "repeat", "h w -> c h w", "c=4", "h=8", "w=8"};
  const std::vector<Row> rows = {
      {{}, true},
      {{"--copy", "if_needed"}, true},
      {{"--copy", "never"}, true},
      {{"--copy", "always"}, false},
  };
  for (const auto& base : {permute, broadcast}) {
    for (const Row& row : rows) {
      std::vector<std::string> args = base;
      args.insert(args.end(), row.args.begin(), row.args.end());
      args.insert(args.end(), {"--json", "--repeats", "1", "--warmup", "0", "--min-time", "0"});
      CAPTURE(args);
      const test::CliResult r = box.run(args);
      INFO(r);
      REQUIRE(r.status == 0);
      const nlohmann::json j = nlohmann::json::parse(r.out);
      CHECK(j["output_is_view"] == row.view);
    }
  }
  const test::CliResult never = box.run({"bench", "rearrange", "a b c -> (a c) b", "a=2", "b=3", "c=4", "--copy",
                                         "never", "--repeats", "1", "--min-time", "0"});
  CHECK(never.status == 1);
  CHECK_THAT(never.err, Catch::Contains("a b c -> (a c) b"));
  const test::CliResult einsum = box.run({"bench", "einsum", "a b -> b a", "a=2", "b=3", "--copy", "always"});
  CHECK(einsum.status == 2);
  CHECK_THAT(einsum.err, Catch::Contains("--copy always applies to rearrange and repeat, not einsum"));
  const test::CliResult bad = box.run({"bench", "rearrange", "a b -> b a", "a=2", "b=3", "--copy", "sometimes"});
  CHECK(bad.status == 2);
  CHECK_THAT(bad.err, Catch::Contains("--copy"));
}

TEST_CASE("an error on a long pattern quotes a window around the caret, not the whole pattern") {
  Sandbox box;
  box.write_npy("x.npy", Tensor::zeros({2, 3}));
  std::string names;  // a1 a2 ... : 40 KB
  for (int i = 0; names.size() < 40000; ++i) names += "a" + std::to_string(i) + " ";
  const std::vector<std::vector<std::string>> rows = {
      {"rearrange", names + "-> a0", "x.npy", "-o", "out.npy"},  // too long: refused at byte 4096
      {"check", names.substr(0, 3000) + "( -> a0"},              // unbalanced, 3000 bytes in
      {"cost", "rearrange", names.substr(0, 3000) + "-> b", "a0=1"},
  };
  for (const auto& args : rows) {
    CAPTURE(args.size());
    const test::CliResult r = box.run(args);
    CHECK(r.status == 1);
    CHECK(r.err.size() < 1000);
    CHECK_THAT(r.err, Catch::Contains("...") && Catch::Contains("^"));
    CHECK(!box.files().count("out.npy"));
  }
}
