// program run / train on a device mesh, end to end: the tool under `mpirun --oversubscribe -np
// N` writes what one process writes (the outputs; the params after 5 Adam steps, f32 within
// 1e-5), reports each collective predicted and as issued, equal; takes the model file's mesh
// and shard lines; refuses before any rank computes, once, leaving nothing behind. In a build
// without MPI, a mesh run says how to get one.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <map>

#include "cli_run.hpp"
#include "einexpr/einexpr.hpp"
#include "model_files.hpp"
#include "tensor_difference.hpp"

using namespace einexpr;
using test::Sandbox;

namespace {

void lecture_files(const Sandbox& box) {
  box.write_bytes("m.ein", test::read_model("lecture2.ein"));
  box.write_npy("x.npy", Tensor::randn({16, 8}, DType::f32, 1));
  box.write_npy("w1.npy", Tensor::randn({8, 12}, DType::f32, 2));
  box.write_npy("w2.npy", Tensor::randn({12, 4}, DType::f32, 3));
}

#ifdef EINEXPR_MPIEXEC
std::vector<std::string> mpirun(int n) { return {EINEXPR_MPIEXEC, "--oversubscribe", "-np", std::to_string(n)}; }
// Root in CI; one thread a rank. Under AddressSanitizer (scripts/test.sh's build-asan) without
// LeakSanitizer: Open MPI keeps its components' memory at exit, from modules it has unloaded by
// then, which no suppression can name (memory errors are still caught).
const std::map<std::string, std::string> as_root = {{"OMPI_ALLOW_RUN_AS_ROOT", "1"},
                                                    {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"},
                                                    {"OMP_NUM_THREADS", "1"},
                                                    {"ASAN_OPTIONS", "detect_leaks=0:allocator_may_return_null=1"}};

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// program train ARGS as one process (-o one), then under mpirun -np 2 with MESH (-o two): the
// mesh run's result, after checking that it succeeded
test::CliResult train_alone_and_on_two(const Sandbox& box, const std::vector<std::string>& args,
                                       const std::vector<std::string>& mesh) {
  std::vector<std::string> one = {"program", "train"}, two = one;
  one.insert(one.end(), args.begin(), args.end());
  one.insert(one.end(), {"-o", "one"});
  two.insert(two.end(), args.begin(), args.end());
  two.insert(two.end(), {"-o", "two"});
  two.insert(two.end(), mesh.begin(), mesh.end());
  REQUIRE(box.run(one).status == 0);
  test::CliResult r = box.run_under(mpirun(2), two, as_root);
  INFO(r);
  REQUIRE(r.status == 0);
  return r;
}

// lecture2's params as the two runs wrote them, f32 within 1e-5
void check_same_params(const Sandbox& box) {
  for (const char* w : {"w1", "w2"})
    CHECK(test::max_relative_difference(box.read_npy(std::string("two/") + w + ".npy"), box.read_npy(std::string("one/") + w + ".npy")) <= 1e-5);
}
#endif

}  // namespace

#ifdef EINEXPR_MPIEXEC

TEST_CASE("program run on a mesh: 4 ranks (dp and tp) write one process's outputs, each collective as the cost predicts", "[program][mpi]") {
  Sandbox box;
  lecture_files(box);
  const std::vector<std::string> files = {"x=x.npy", "w1=w1.npy", "w2=w2.npy"};
  std::vector<std::string> one = {"program", "run", "m.ein"}, four = one;
  one.insert(one.end(), files.begin(), files.end());
  one.insert(one.end(), {"-o", "one"});
  four.insert(four.end(), files.begin(), files.end());
  four.insert(four.end(), {"-o", "four", "--mesh", "dp=2 tp=2", "--shard", "B:dp E:tp", "--json"});
  const test::CliResult a = box.run(one);
  REQUIRE(a.status == 0);
  const test::CliResult r = box.run_under(mpirun(4), four, as_root);
  INFO(r);
  REQUIRE(r.status == 0);
  CHECK(test::max_relative_difference(box.read_npy("four/loss.npy"), box.read_npy("one/loss.npy")) <= 1e-6);
  const nlohmann::json j = nlohmann::json::parse(r.out);  // rank 0's report alone
  CHECK(j["ranks"] == 4);
  CHECK(j["mesh"] == "dp=2 tp=2; B:dp E:tp");
  // h2 sums over E (split over tp): 16/2 x 4 f32 all-reduced over 2 ranks, 2·(2−1)/2·128 bytes;
  // the loss a mean over B (split over dp): 1 f32
  const auto& c = j["collectives"];
  REQUIRE(c["predicted"].size() == 2);
  CHECK(c["predicted"][0]["tensor"] == "h2");
  CHECK(c["predicted"][0]["mesh_dim"] == "tp");
  CHECK(c["predicted"][0]["elements"] == 32);
  CHECK(c["predicted"][0]["bus_bytes"] == 128);
  CHECK(c["predicted"][1]["tensor"] == "loss");
  CHECK(c["predicted"][1]["mesh_dim"] == "dp");
  CHECK(c["measured"] == c["predicted"]);
  CHECK(c["bus_bytes_measured"] == 132);
  CHECK(c["measured_equals_predicted"] == true);
}

TEST_CASE("program train on a mesh: 2 ranks with ZeRO-1 train as one process, from the model file's mesh and shard lines", "[program][mpi]") {
  Sandbox box;
  lecture_files(box);
  box.write_bytes("meshed.ein", test::read_model("lecture2.ein") + "mesh dp=2@ib\nshard B:dp\n");
  const std::vector<std::string> common = {"x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "5", "--optimizer", "adam", "--lr", "0.01"};
  std::vector<std::string> one = {"program", "train", "m.ein"}, two = {"program", "train", "meshed.ein"};
  one.insert(one.end(), common.begin(), common.end());
  one.insert(one.end(), {"-o", "one"});
  two.insert(two.end(), common.begin(), common.end());
  two.insert(two.end(), {"-o", "two", "--zero", "1"});
  REQUIRE(box.run(one).status == 0);
  const test::CliResult r = box.run_under(mpirun(2), two, as_root);
  INFO(r);
  REQUIRE(r.status == 0);
  CHECK(count(r.out, "trained meshed.ein for 5 steps on 2 ranks (dp=2@ib; B:dp; ZeRO-1") == 1);
  // dw1 and dw2 reduce-scattered, w1 and w2 gathered after the update, the loss all-reduced
  CHECK(count(r.out, "each step: 5 collectives, 580 bytes sent by each rank (nccl-tests' bus bytes), as program cost --mesh predicts") == 1);
  check_same_params(box);
  // what program cost --mesh says of the same step
  const test::CliResult c = box.run({"program", "cost", "meshed.ein", "--optimizer", "adam", "--zero", "1", "--json"});
  REQUIRE(c.status == 0);
  CHECK(nlohmann::json::parse(c.out)["mesh"]["collectives"].size() == 5);
}

TEST_CASE("program train on a mesh with recomputation: the statement made again all-reduces again, as the cost says", "[program][mpi]") {
  Sandbox box;
  lecture_files(box);
  const test::CliResult r = train_alone_and_on_two(
      box, {"m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "3", "--optimizer", "adam", "--lr", "0.01", "--recompute", "checkpoints"},
      {"--mesh", "tp=2@nvlink", "--shard", "E:tp", "--json"});
  INFO(r);
  // nothing kept (no checkpoint lines): h2 (a sum over E, split) is made again for sq's gradient
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const auto& c = j["collectives_per_step"];
  REQUIRE(c["predicted"].size() == 2);
  for (int k = 0; k < 2; ++k) {
    CHECK(c["predicted"][k]["tensor"] == "h2");
    CHECK(c["predicted"][k]["kind"] == "all-reduce");
    CHECK(c["predicted"][k]["elements"] == 64);  // B K = 16 x 4 on each device: 2·(2−1)/2·256 bytes
    CHECK(c["predicted"][k]["bus_bytes"] == 256);
  }
  CHECK(c["predicted"][0]["phase"] == "forward");
  CHECK(c["predicted"][1]["phase"] == "backward");
  CHECK(c["measured_equals_predicted"] == true);
  check_same_params(box);
  // program cost says the same, and why
  const test::CliResult cost = box.run({"program", "cost", "m.ein", "B=16", "D=8", "E=12", "K=4", "--mesh", "tp=2@nvlink", "--shard", "E:tp", "--recompute",
                                        "checkpoints"});
  INFO(cost);
  REQUIRE(cost.status == 0);
  CHECK(count(cost.out, "backward  all-reduce over tp (2)  h2  64 elements, 256 B sent  recomputed for the backward: sums over E") == 1);
}

TEST_CASE("program train on a mesh with micro-batches: the loss's all-reduce each micro-batch, the gradients' once a step", "[program][mpi]") {
  Sandbox box;
  lecture_files(box);
  const test::CliResult r = train_alone_and_on_two(
      box, {"m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "3", "--optimizer", "adam", "--lr", "0.01"},
      {"--mesh", "dp=2@ib", "--shard", "B:dp", "--micro-batches", "2", "--json"});
  INFO(r);
  // each rank's 8 rows in 2 micro-batches of 4: the loss (a mean over B, split) all-reduced in
  // each; dw1 (8 x 12) and dw2 (12 x 4) summed over the micro-batches, then all-reduced once
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const auto& c = j["collectives_per_step"];
  std::map<std::string, int> seen;
  for (const auto& x : c["predicted"]) ++seen[x["phase"].get<std::string>() + " " + x["tensor"].get<std::string>()];
  CHECK(seen == std::map<std::string, int>{{"forward loss", 2}, {"backward dw1", 1}, {"backward dw2", 1}});
  CHECK(c["measured_equals_predicted"] == true);
  check_same_params(box);
}

TEST_CASE("program run on a mesh: refused once, before any rank computes, and nothing written", "[program][mpi]") {
  Sandbox box;
  lecture_files(box);
  auto refused = [&](const std::vector<std::string>& args, int ranks, const std::string& message) {
    std::vector<std::string> full = {"program", "run", "m.ein", "x=x.npy", "w2=w2.npy", "-o", "out"};
    full.insert(full.end(), args.begin(), args.end());
    const test::CliResult r = box.run_under(mpirun(ranks), full, as_root);
    INFO(r);
    CHECK(r.status != 0);
    CHECK(count(r.err, message) == 1);
    CHECK(!std::filesystem::exists(box.path("out")));
  };
  refused({"w1=w1.npy", "--mesh", "dp=4", "--shard", "B:dp"}, 2,
          "the mesh dp=4; B:dp has 4 devices but MPI runs 2 ranks: launch it with mpirun -np 4");
  refused({"w1=w1.npy", "--mesh", "dp=2", "--shard", "Q:dp"}, 2, "shard: the program has no axis Q");
  refused({"w1=w1.npy", "--mesh", "dp=2", "--shard", "B:dp E:dp"}, 2, "splits both B and E over dp");
  refused({"w1=missing.npy", "--mesh", "dp=2", "--shard", "B:dp"}, 2, "missing.npy");
  refused({"w1=w1.npy", "B=15", "--mesh", "dp=2", "--shard", "B:dp"}, 2, "B=15");  // 16 rows given: rejected
  // without mpirun: one rank for a mesh of two
  const test::CliResult alone = box.run(
      {"program", "run", "m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "-o", "out", "--mesh", "dp=2", "--shard", "B:dp"},
      {{"ASAN_OPTIONS", "detect_leaks=0:allocator_may_return_null=1"}});
  CHECK(alone.status == 1);
  CHECK(count(alone.err, "MPI runs 1 rank: launch it with mpirun -np 2") == 1);
  // --resume from a folder that is no checkpoint: every rank says so, nothing written
  const test::CliResult resume = box.run_under(
      mpirun(2), {"program", "train", "m.ein", "x=x.npy", "--steps", "1", "--resume", ".", "-o", "out", "--mesh", "dp=2", "--shard", "B:dp"},
      as_root);
  CHECK(resume.status != 0);
  CHECK(count(resume.err, "rank 0 of 2: ") == 1);
  CHECK_FALSE(std::filesystem::exists(box.path("out")));
}

TEST_CASE("program train on a mesh: --resume continues as an uninterrupted run, bit for bit, from a checkpoint as one process writes it", "[program][mpi]") {
  Sandbox box;
  lecture_files(box);
  const std::vector<std::string> common = {"program", "train", "m.ein", "x=x.npy", "--optimizer", "adam", "--lr", "0.01"};
  const std::vector<std::string> mesh = {"--mesh", "dp=2", "--shard", "B:dp", "--zero", "1"};
  auto train = [&](std::vector<std::string> more, bool on_mesh) {
    std::vector<std::string> args = common;
    args.insert(args.end(), more.begin(), more.end());
    if (on_mesh) args.insert(args.end(), mesh.begin(), mesh.end());
    const test::CliResult r = on_mesh ? box.run_under(mpirun(2), args, as_root) : box.run(args);
    INFO(r);
    REQUIRE(r.status == 0);
  };
  train({"w1=w1.npy", "w2=w2.npy", "--steps", "4", "-o", "m4"}, true);
  train({"w1=w1.npy", "w2=w2.npy", "--steps", "2", "-o", "m2"}, true);
  train({"--resume", "m2", "--steps", "2", "-o", "m22"}, true);
  train({"w1=w1.npy", "w2=w2.npy", "--steps", "4", "-o", "s4"}, false);
  train({"--resume", "m2", "--steps", "2", "-o", "s22"}, false);  // the mesh's checkpoint on one process
  train({"w1=w1.npy", "w2=w2.npy", "--steps", "2", "-o", "s2"}, false);
  train({"--resume", "s2", "--steps", "2", "-o", "ms22"}, true);  // one process's on the mesh
  const char* files[] = {"w1.npy", "w2.npy", "w1.exp_avg.npy", "w1.exp_avg_sq.npy", "w2.exp_avg.npy", "w2.exp_avg_sq.npy",
                         "trainer.steps.npy"};
  for (const char* f : files) {
    CAPTURE(f);
    // the mesh resumed is the mesh uninterrupted, to the bit: params, each ZeRO part of the
    // state put back in place, the step count
    CHECK(box.read_bytes(std::string("m22/") + f) == box.read_bytes(std::string("m4/") + f));
    const Tensor one = box.read_npy(std::string("s4/") + f);
    for (const char* dir : {"m4/", "s22/", "ms22/"}) {
      CAPTURE(dir);
      const Tensor t = box.read_npy(std::string(dir) + f);
      REQUIRE(t.shape() == one.shape());  // the state shaped as its param, as one process keeps it
      CHECK(test::max_relative_difference(t, one) <= 1e-5);
    }
  }
  CHECK(box.read_npy("m22/trainer.steps.npy").data<std::int64_t>()[0] == 4);
  // a checkpoint that does not fit: named once, every rank exits 1, nothing written
  std::filesystem::copy(box.path("m2"), box.path("bad"));
  box.write_npy("bad/w1.exp_avg.npy", Tensor::zeros({12, 8}));
  std::vector<std::string> bad = common;
  bad.insert(bad.end(), {"--resume", "bad", "--steps", "1", "-o", "never"});
  bad.insert(bad.end(), mesh.begin(), mesh.end());
  const test::CliResult misshapen = box.run_under(mpirun(2), bad, as_root);
  CHECK(misshapen.status != 0);
  CHECK(count(misshapen.err, "rank 0 of 2: the checkpoint's 'w1.exp_avg' is [12, 8]: a state of param 'w1' is shaped as the "
                             "param, [8, 12]") == 1);
  // momentum's checkpoint for adam
  REQUIRE(box.run({"program", "train", "m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "--steps", "1", "--optimizer", "momentum",
                   "-o", "momentum"}).status == 0);
  std::vector<std::string> other = common;
  other.insert(other.end(), {"--resume", "momentum", "--steps", "1", "-o", "never"});
  other.insert(other.end(), mesh.begin(), mesh.end());
  const test::CliResult wrong = box.run_under(mpirun(2), other, as_root);
  CHECK(wrong.status != 0);
  CHECK(count(wrong.err, "rank 0 of 2: the checkpoint has no 'w1.exp_avg' (adam keeps it for each param)") == 1);
  CHECK_FALSE(std::filesystem::exists(box.path("never")));
}

#else

TEST_CASE("program run on a mesh in a build without MPI: says so, and how to cost it instead", "[program][mpi]") {
  Sandbox box;
  lecture_files(box);
  const test::CliResult r = box.run(
      {"program", "run", "m.ein", "x=x.npy", "w1=w1.npy", "w2=w2.npy", "-o", "out", "--mesh", "dp=2", "--shard", "B:dp"});
  INFO(r);
  CHECK(r.status == 1);
  CHECK(r.err.find("needs MPI, and this einexpr was built without it") != std::string::npos);
  CHECK(!std::filesystem::exists(box.path("out")));
}

#endif
