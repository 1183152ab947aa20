// The GPT-2-style pre-norm transformer block of issue 15 (B=4, S=128, D=256, 8 heads of 32,
// MLP 1024, causal), as the model program examples/models/gpt2_block_norm.ein compiled once
// (CompiledProgram: every statement planned and lowered, memory planned by liveness), run
// at 2 threads beside its matrix products alone through OpenBLAS (limit:gemm: the six
// projections and the two batched attention products, nothing elementwise).
// bench/torch_block.py times torch's block on the same weights in the same run and compares
// the outputs: with EINEXPR_BLOCK_DIR set, every input and param is read from DIR/NAME.npy
// and the block's output is written to DIR/y_einexpr.npy; without it the weights are random.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "bench.hpp"

#ifndef EINEXPR_SOURCE_DIR
#define EINEXPR_SOURCE_DIR "."
#endif

namespace bench {

namespace {

using einexpr::Tensor;

constexpr std::int64_t B = 4, S = 128, D = 256, H = 8, K = 32, F = 1024;
constexpr int block_threads = 2;
const char* const block_file = EINEXPR_SOURCE_DIR "/examples/models/gpt2_block_norm.ein";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw einexpr::Error("bench block: cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const einexpr::AxisLengths& block_axes() {
  static const einexpr::AxisLengths axes{{"B", B}, {"S", S}, {"T", S}, {"D", D}, {"H", H}, {"K", K}, {"F", F}};
  return axes;
}

struct Block {
  std::shared_ptr<einexpr::CompiledProgram> program;
  std::map<std::string, Tensor, std::less<>> inputs;
};

/// The compiled block and its inputs (read from EINEXPR_BLOCK_DIR, else random: weights
/// scaled by 1/sqrt(fan-in), the causal mask, the 1/sqrt(K) scale).
std::shared_ptr<Block> make_block() {
  auto b = std::make_shared<Block>();
  const einexpr::ast::Program ast = einexpr::parse_program(read_text(block_file), block_file);
  b->program = std::make_shared<einexpr::CompiledProgram>(ast, einexpr::ProgramOptions{block_axes()});
  const char* dir = std::getenv("EINEXPR_BLOCK_DIR");
  const einexpr::ProgramPlan& plan = b->program->plan();
  std::uint64_t seed = 1;
  for (const einexpr::ProgramTensor& t : plan.tensors) {
    if (t.role != einexpr::TensorRole::input && t.role != einexpr::TensorRole::param) continue;
    if (dir != nullptr && *dir != '\0') {
      b->inputs[t.name] = einexpr::read_npy(std::string(dir) + "/" + t.name + ".npy");
      continue;
    }
    Tensor v;
    if (t.name == "mask") {
      std::vector<float> m(static_cast<std::size_t>(S * S));
      for (std::int64_t i = 0; i < S; ++i)
        for (std::int64_t j = 0; j < S; ++j) m[static_cast<std::size_t>(i * S + j)] = j <= i ? 0.0f : -INFINITY;
      v = Tensor::from_vector(m, t.shape);
    } else if (t.name == "scale") {
      v = Tensor::from_vector(std::vector<float>(static_cast<std::size_t>(H), 1.0f / std::sqrt(float(K))), t.shape);
    } else {
      v = random_f32(t.shape, seed++);
      if (t.role == einexpr::TensorRole::param && t.shape.size() == 2) {  // weights: variance 1 / fan-in
        std::vector<float> values = v.to_vector<float>();
        for (float& x : values) x /= std::sqrt(static_cast<float>(t.shape[0]));
        v = Tensor::from_vector(values, t.shape);
      }
    }
    b->inputs[t.name] = v;
  }
  return b;
}

/// FLOPs of one forward pass (einexpr's own count of the program).
double block_flops() {
  const einexpr::ast::Program ast = einexpr::parse_program(read_text(block_file), block_file);
  return einexpr::cost(ast, block_axes()).forward_flops.to_double();
}

}  // namespace

void register_block() {
  const std::string w = "block gpt2_block_norm B=4 S=128 D=256 H=8 F=1024 f32";
  Work work;
  try {
    work.flops = block_flops();
  } catch (const einexpr::Error&) {
    return;  // the example is missing (an installed bench): no block rows
  }
  auto shared = std::make_shared<std::shared_ptr<Block>>();
  add(w, "run", block_threads, work, [=](int) {
    if (!*shared) *shared = make_block();
    const std::shared_ptr<Block> b = *shared;
    if (const char* dir = std::getenv("EINEXPR_BLOCK_DIR"); dir != nullptr && *dir != '\0')
      einexpr::write_npy(std::string(dir) + "/y_einexpr.npy", b->program->run(b->inputs)["y"]);
    return std::function<void()>([b] { benchmark_keep(b->program->run(b->inputs).outputs.size()); });
  });
  if (!have_openblas()) return;
  Work gemms;  // the limit's own FLOPs: the products alone
  gemms.flops = 2.0 * B * S * (4.0 * D * H * K + 2.0 * D * F) + 2.0 * 2.0 * B * H * S * S * K;
  add(w, "limit:gemm", block_threads, gemms, [=](int) {
    // The block's matrix products on buffers of their sizes (values irrelevant to the time).
    struct Buffers {
      Tensor x = random_f32({B * S, D}, 90), wq = random_f32({D, H * K}, 91), q = random_f32({B * S, H * K}, 92),
             s = random_f32({B * H, S, S}, 93), wfc = random_f32({D, F}, 94), f = random_f32({B * S, F}, 95),
             wproj = random_f32({F, D}, 96), out = random_f32({B * S, D}, 97), o = random_f32({B * H, S, K}, 98);
    };
    auto m = std::make_shared<Buffers>();
    const auto p = [](const Tensor& t) { return static_cast<float*>(t.data_ptr()); };
    return std::function<void()>([m, p] {
      const std::int64_t n = B * S;
      for (int i = 0; i < 3; ++i) gemm_openblas(p(m->x), D, p(m->wq), H * K, p(m->q), H * K, n, H * K, D, false);
      for (std::int64_t bh = 0; bh < B * H; ++bh) {  // scores q k^T, then p v, per (batch, head)
        const float* q = p(m->q) + (bh / H) * S * H * K + (bh % H) * K;
        gemm_openblas(q, H * K, q, H * K, p(m->s) + bh * S * S, S, S, S, K, true);
        gemm_openblas(p(m->s) + bh * S * S, S, q, H * K, p(m->o) + bh * S * K, K, S, K, S, false);
      }
      gemm_openblas(p(m->q), H * K, p(m->wq), H * K, p(m->out), D, n, D, H * K, false);
      gemm_openblas(p(m->x), D, p(m->wfc), F, p(m->f), F, n, F, D, false);
      gemm_openblas(p(m->f), F, p(m->wproj), D, p(m->out), D, n, D, F, false);
    });
  });
}

/// A model file run whole, for bench/torch_zoo.py: registered only when EINEXPR_MODEL_FILE names
/// one, with its axes from EINEXPR_MODEL_AXES ("L=12 B=1 ...") and every input and param read
/// from EINEXPR_MODEL_DIR/NAME.npy; its first output is written to DIR/out_einexpr.npy.
void register_model() {
  const char* file = std::getenv("EINEXPR_MODEL_FILE");
  const char* dir = std::getenv("EINEXPR_MODEL_DIR");
  if (file == nullptr || *file == '\0' || dir == nullptr || *dir == '\0') return;
  einexpr::AxisLengths axes;
  std::istringstream given(std::getenv("EINEXPR_MODEL_AXES") ? std::getenv("EINEXPR_MODEL_AXES") : "");
  for (std::string word; given >> word;) {
    const std::size_t eq = word.find('=');
    if (eq == std::string::npos) throw einexpr::Error("EINEXPR_MODEL_AXES: NAME=LEN, not '" + word + "'");
    axes.emplace_back(word.substr(0, eq), std::stoll(word.substr(eq + 1)));
  }
  const std::string path = file, folder = dir;
  const einexpr::ast::Program ast = einexpr::parse_program(read_text(path), path);
  Work work;
  work.flops = einexpr::cost(ast, axes).forward_flops.to_double();
  auto shared = std::make_shared<std::shared_ptr<Block>>();
  add("model " + path.substr(path.find_last_of('/') + 1), "run", block_threads, work, [=](int) {
    if (!*shared) {
      auto b = std::make_shared<Block>();
      b->program = std::make_shared<einexpr::CompiledProgram>(ast, einexpr::ProgramOptions{axes});
      for (const einexpr::ProgramTensor& t : b->program->plan().tensors)
        if (t.role == einexpr::TensorRole::input || t.role == einexpr::TensorRole::param)
          b->inputs[t.name] = einexpr::read_npy(folder + "/" + t.name + ".npy");
      *shared = b;
    }
    const std::shared_ptr<Block> b = *shared;
    einexpr::write_npy(folder + "/out_einexpr.npy", b->program->run(b->inputs).outputs.front().second);
    return std::function<void()>([b] { benchmark_keep(b->program->run(b->inputs).outputs.size()); });
  });
}

}  // namespace bench
