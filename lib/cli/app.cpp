// The command line's definition: one function per subcommand adds its positionals,
// options and --help text. Examples are the lecture notes' (shared/seeds/): the linear
// model, attention scores, average pooling, the grey image repeated to 4 channels.
#include "app.hpp"

#include "args.hpp"

#include "einexpr/config.hpp"

namespace einexpr::cli {

namespace {

/// The mark protect_patterns puts before an argument beginning with "->" (ASCII unit
/// separator: never in a pattern, a path or a number one would type).
constexpr char positional_mark = '\x1f';

/// A positional option whose values may carry protect_patterns' mark: it is removed.
CLI::Option* positional(CLI::Option* option) {
  return option->transform([](std::string value) { return unprotect(std::move(value)); }, "", "");
}

const char* const tool_description =
    "einexpr: einops-style tensor expressions on NumPy .npy files -- run them, count their\n"
    "FLOPs and bytes exactly, and place them on a device's roofline.\n\n"
    "Exit status: 0 success; 1 the expression, an input file or a value was rejected (the\n"
    "message on stderr says why, and no output file is written); 2 the command line is\n"
    "malformed. 'einexpr COMMAND --help' describes each command.";

const char* const tool_footer =
    "Examples (CS336 lecture 2):\n"
    "  einexpr einsum \"b d, d k -> b k\" x.npy w.npy -o y.npy\n"
    "  einexpr cost einsum \"b d, d k -> b k\" b=1024 d=256 k=64\n"
    "  einexpr reduce \"c (h h2) (w w2) -> c h w\" mean img.npy -o pooled.npy h2=20 w2=20\n"
    "  einexpr repeat \"h w -> c h w\" grey.npy -o rgba.npy c=4\n"
    "  einexpr check \"batch seq1 hidden, batch seq2 hidden -> batch seq1 seq2\"\n"
    "  einexpr roofline plot.svg --dtype bf16 \"einsum|i j, j k -> i k|i=1024,j=1024,k=1024\"";

const char* const bf16_help =
    "Read and write bfloat16 as '<u2' (raw bit patterns, for numpy without ml_dtypes). "
    "Without it, bf16 is '<V2', as np.save writes ml_dtypes.bfloat16, and '<u2' is refused";

const char* const sizes_help =
    "[REDUCTION | FUNCTION] NAME=LEN... | IN.npy...: a reduce's reduction (sum, mean, max, min, prod, any, all, "
    "var, std, logsumexp; default sum) or a map's function (gelu, exp, ...; add, mul, ...), then every axis's "
    "length, or each operand's .npy file (only its header is read: the shape and dtype) and the lengths its "
    "shape leaves open";

const char* const correction_help =
    "reduce var and std: divide by n - N (torch's correction; default 1, as torch; 0: the population variance)";

const char* const eps_help = "layer_norm and rms_norm: added to the variance / mean square (default 1e-5 and 1e-6)";

const char* const norm_footer =
    "The pattern names the input's dims with the axes to normalize along in brackets (einx's\n"
    "notation): \"b h q [k]\" along k; \"b [h w] c\" along h and w together; \"... [d]\" along the\n"
    "last dim. layer_norm and rms_norm have no affine part: scale and shift with map.\n"
    "Examples:\n"
    "  einexpr softmax \"b h q [k]\" scores.npy -o p.npy\n"
    "  einexpr layer_norm \"b s [d]\" x.npy -o y.npy --eps 1e-5";

const char* const map_footer =
    "A unary map's pattern may permute, split and merge axes around the function, as rearrange\n"
    "does; every axis is on both sides, so nothing is summed or repeated. A binary map\n"
    "broadcasts its operands by name. Functions: relu gelu (tanh form) gelu_erf (torch's\n"
    "nn.GELU()) exp log square sqrt rsqrt neg abs sigmoid tanh silu reciprocal erf softplus;\n"
    "binary: add sub mul div maximum minimum. An argument NAME=LEN (an identifier, '=',\n"
    "digits) is an axis length, any other is an input file.\n"
    "Examples:\n"
    "  einexpr map \"b s h -> b s h\" gelu x.npy -o y.npy\n"
    "  einexpr map \"b s (h d) -> b h s d\" exp x.npy -o y.npy h=8\n"
    "  einexpr map \"b s h, h -> b s h\" add x.npy bias.npy -o y.npy";

/// The run commands' help beyond the registry's one-line summaries.
struct OpHelp {
  const char* name;
  const char* description;
  const char* footer;
};
const OpHelp op_help[] = {
    {"rearrange",
     "Rearrange IN.npy into OUT.npy: permute, split, merge, add or drop unit axes; concatenate several inputs along "
     "'(a + b)', or split one into several outputs",
     "Examples:\n"
     "  einexpr rearrange \"c h w -> c w h\" img.npy -o flipped.npy\n"
     "  einexpr rearrange \"b (heads hidden1) -> b heads hidden1\" x.npy -o y.npy heads=2\n"
     "  einexpr rearrange \"b s1 d, b s2 d -> b (s1 + s2) d\" x.npy y.npy -o xy.npy\n"
     "  einexpr rearrange \"b s (q + k + v) -> b s q, b s k, b s v\" qkv.npy -o q.npy -o k.npy -o v.npy q=64 k=64"},
    {"reduce", "Reduce IN.npy over the axes the output drops",
     "Examples:\n"
     "  einexpr reduce \"c (h h2) (w w2) -> c h w\" mean img.npy -o pooled.npy h2=20 w2=20\n"
     "  einexpr reduce \"batch seq hidden -> batch hidden\" sum x.npy -o y.npy\n"
     "  einexpr reduce \"... hidden -> ...\" max x.npy -o y.npy"},
    {"repeat", "Repeat IN.npy along new or enlarged axes", "Example:\n  einexpr repeat \"h w -> c h w\" grey.npy -o rgba.npy c=4"},
    {"map", "Apply an elementwise function: f(IN.npy), or f(IN.npy, IN2.npy) broadcast by name", nullptr},
    {"softmax", "softmax of IN.npy along the bracketed axes", nullptr},
    {"log_softmax", "log_softmax of IN.npy along the bracketed axes", nullptr},
    {"layer_norm", "(x - mean) / sqrt(var + eps) along the bracketed axes", nullptr},
    {"rms_norm", "x / sqrt(mean(x²) + eps) along the bracketed axes", nullptr},
    {"einsum", "Contract operands: an axis missing from the output is summed, a repeated one is a diagonal",
     "Examples:\n"
     "  einexpr einsum \"b d, d k -> b k\" x.npy w.npy -o y.npy\n"
     "  einexpr einsum \"batch seq1 hidden, batch seq2 hidden -> batch seq1 seq2\" q.npy k.npy -o scores.npy"},
    {"get_at", "Gather rows of TABLE.npy at the integer indices of IDX.npy (i64 or i32): an embedding lookup",
     "The table's indexed axis is in brackets (einx's notation). An index outside it is an error\n"
     "naming its position; nothing is written.\n"
     "Examples:\n"
     "  einexpr get_at \"[v] d, b s -> b s d\" wte.npy tokens.npy -o x.npy\n"
     "  einexpr get_at \"b [n] d, b k -> b k d\" x.npy idx.npy -o picked.npy"},
    {"add_at", "TABLE.npy plus UPDATES.npy added at the integer indices of IDX.npy (get_at's gradient)",
     "Repeated indices add up.\nExample:\n  einexpr add_at \"[v] d, b s, b s d -> [v] d\" wte.npy tokens.npy dx.npy -o wte2.npy"},
    {"cross_entropy", "The cross-entropy of LOGITS.npy against integer TARGETS.npy at every position (fused)",
     "lse(logits) - logits[target] along the bracketed classes, torch's F.cross_entropy with\n"
     "reduction='none'; --ignore-index's target gives 0.\n"
     "Example:\n  einexpr cross_entropy \"b s [v], b s -> b s\" logits.npy targets.npy -o loss.npy"},
    {"dropout", "IN.npy with each element zeroed with probability --p, the rest scaled by 1/(1-p)",
     "The mask is drawn from the 0-d i64 seed in SEED.npy alone (SplitMix64): the same on the CPU\n"
     "and the GPU, on any thread count; in a model file, 'y = dropout(x, 0.1)' (training only).\n"
     "Example:\n  einexpr dropout \"b s d, -> b s d\" x.npy seed.npy --p 0.1 -o y.npy"},
    {"pack", "Pack the IN.npy files into OUT.npy along the dims '*' stands for in each (einops.pack)",
     "The dims named around '*' must match; each file's '*' dims are flattened and joined.\n"
     "Example:\n  einexpr pack \"b * d\" x.npy y.npy -o packed.npy"},
    {"unpack", "Split PACKED.npy into one file per SHAPE: the '*' dims each output had (einops.unpack)",
     "Example (x was 2 3 4 8, y was 2 8, packed 2 13 8):\n"
     "  einexpr unpack \"b * d\" packed.npy 3,4 \"()\" -o x.npy -o y.npy"},
};

const OpHelp* help_for(std::string_view name) {
  for (const OpHelp& h : op_help)
    if (name == h.name) return &h;
  return nullptr;
}

void add_run_options(CLI::App* sub, RunOptions& run) {
  sub->add_option("--device", run.device, "Where it runs: cpu, cuda or cuda:N (cuda needs a CUDA build and a GPU)")
      ->type_name("DEV")
      ->capture_default_str();
  sub->add_option("--threads", run.threads, "CPU threads (default: OpenMP's, OMP_NUM_THREADS)")
      ->type_name("N")
      ->check(CLI::Range(1, 4096));
}

void add_op_command(Cli& cli, OpArgs& args, const OpRow& row, const std::string& description, const char* footer) {
  CLI::App* sub = cli.app.add_subcommand(std::string(row.name), description);
  args.op = std::string(row.name);
  if (footer == nullptr) footer = row.op == Op::map ? map_footer : row.op == Op::normalize ? norm_footer : "";
  positional(sub->add_option("PATTERN", args.pattern, "The einops pattern, quoted"))->required()->type_name("");
  if (row.function == FunctionArg::reduction) {
    positional(sub->add_option("REDUCTION", args.reduction,
                               "sum, mean, max, min, prod, var, std, logsumexp (any, all on bool)"))
        ->required()
        ->type_name("");
    sub->add_option("--correction", args.correction, correction_help)->type_name("N")->check(CLI::NonNegativeNumber);
  }
  if (args.op == "layer_norm" || args.op == "rms_norm")
    sub->add_option("--eps", args.eps, eps_help)->type_name("E")->check(CLI::NonNegativeNumber);
  if (row.op == Op::cross_entropy)
    sub->add_option("--ignore-index", args.ignore_index, "A target of this value has loss 0 and gradient 0 (torch's)")
        ->type_name("N")
        ->capture_default_str();
  if (row.op == Op::dropout)
    sub->add_option("--p", args.p, "The probability that an element is zeroed, in [0, 1) (torch's default 0.5)")
        ->type_name("P")
        ->capture_default_str();
  // One input file, then the lengths; several files (one per pattern operand), then the lengths.
  const bool files_and_lengths =  // a normalization takes x alone here (its affine form: C++, Python, model files)
      row.max_inputs > 1 && row.op != Op::einsum && row.op != Op::map && row.op != Op::normalize;
  if (args.op == "map") {
    positional(sub->add_option("FUNCTION", args.function, "gelu, exp, ... (one input); add, mul, ... (two)"))
        ->required()
        ->type_name("");
    positional(sub->add_option("ARGS", args.inputs, "IN.npy [IN2.npy] [NAME=LEN...]: the input files, then axis lengths"))
        ->required()
        ->type_name("");
  } else if (row.grammar == Grammar::packed) {
    positional(sub->add_option("ARGS", args.inputs,
                               row.op == Op::pack ? "IN.npy...: the tensors to pack, in order"
                                                  : "PACKED.npy SHAPE...: the packed file, then each output's '*' "
                                                    "dims (3,4; () for none; one -1 inferred), one -o per shape"))
        ->required()
        ->type_name("");
  } else if (files_and_lengths) {
    positional(sub->add_option("ARGS", args.inputs, "IN.npy [IN2.npy...] [NAME=LEN...]: the input files (one per "
                                                    "operand), then axis lengths"))
        ->required()
        ->type_name("");
  } else if (args.op == "einsum") {
    positional(sub->add_option("IN.npy", args.inputs, "One .npy file per operand"))->required()->type_name("");
  } else {
    positional(sub->add_option("IN.npy", args.input, "The input .npy file"))->required()->type_name("");
    positional(sub->add_option("LENGTHS", args.lengths, "NAME=LEN...: the axis lengths the pattern needs"))
        ->type_name("");
  }
  const bool several = row.op == Op::rearrange || row.op == Op::unpack;
  sub->add_option("-o,--output", args.outputs,
                  row.op == Op::rearrange ? "The output .npy file; a split writes one per output (-o q.npy -o k.npy)"
                  : row.op == Op::unpack  ? "One output .npy file per shape (-o a.npy -o b.npy)"
                                          : "The output .npy file (same dtype as the input)")
      ->required()
      ->type_name("OUT.npy")
      ->type_size(1)
      ->expected(1)
      ->multi_option_policy(several ? CLI::MultiOptionPolicy::TakeAll : CLI::MultiOptionPolicy::Throw)
      ->allow_extra_args(false);  // one file per -o: what follows is a positional again
  sub->add_flag("--bf16-u2", args.bf16_u2, bf16_help);
  add_run_options(sub, args.run);
  sub->footer(footer);
  cli.commands.push_back({sub, [&args] { return run_op(args); }});
}

void add_expr_positionals(CLI::App* sub, ExprArgs& expr) {
  positional(sub->add_option("OP", expr.op, op_row_names()))->required()->type_name("");
  positional(sub->add_option("PATTERN", expr.pattern, "The einops pattern, quoted"))->required()->type_name("");
  positional(sub->add_option("ARGS", expr.rest, sizes_help))->type_name("");
  sub->add_option("--dtype", expr.dtype,
                  "Element type: f64 f32 f16 bf16 f8_e4m3 f8_e5m2 i64 i32 bool (default: the .npy files', else f32)")
      ->type_name("DT");
  sub->add_option("--correction", expr.correction, correction_help)->type_name("N")->check(CLI::NonNegativeNumber);
  sub->add_option("--eps", expr.eps, eps_help)->type_name("E")->check(CLI::NonNegativeNumber);
  sub->add_option("--ignore-index", expr.ignore_index, "cross_entropy: the target that is ignored (default -100)")
      ->type_name("N");
  sub->add_option("--p", expr.p, "dropout: the probability that an element is zeroed (default 0.5)")->type_name("P");
}

void add_cost(Cli& cli) {
  CLI::App* sub = cli.app.add_subcommand(
      "cost", "FLOPs, bytes, intensity, backward FLOPs and roofline bound, from the axis sizes alone");
  add_expr_positionals(sub, cli.cost.expr);
  sub->add_option("--device", cli.cost.device, "Device-table entry of the roofline ('einexpr devices' lists them)")
      ->type_name("DEV")
      ->capture_default_str();
  sub->add_flag("--json", cli.cost.json, "One JSON object; integers are exact decimal literals, even beyond 2^64");
  sub->add_flag("--backward", cli.cost.backward, "Also list the gradient expressions and their costs");
  sub->footer(
      "Examples:\n"
      "  einexpr cost einsum \"b d, d k -> b k\" b=1024 d=256 k=64\n"
      "  einexpr cost einsum \"b d, d k -> b k\" b=16384 d=32768 k=8192 --dtype bf16 --backward\n"
      "  einexpr cost einsum \"i j, j k -> i k\" i=1024 j=1024 k=1024 --dtype bf16 --json\n"
      "  einexpr cost reduce \"c (h h2) (w w2) -> c h w\" mean c=3 h=10 h2=20 w=10 w2=20\n"
      "  einexpr cost reduce \"b s h -> b s\" var b=8 s=128 h=1024 --correction 0\n"
      "  einexpr cost map \"b s h -> b s h\" gelu b=64 s=1024 h=1024\n"
      "  einexpr cost softmax \"b h q [k]\" b=8 h=12 q=1024 k=1024\n"
      "  einexpr cost einsum \"b d, d k -> b k\" x.npy w.npy   (the shapes and dtype from the files' headers)");
  cli.commands.push_back({sub, [&cli] { return cost_command(cli.cost); }});
}

void add_explain(Cli& cli) {
  CLI::App* sub = cli.app.add_subcommand(
      "explain", "The plan step by step (views, copies, GEMMs, reductions) with each step's FLOPs and bytes");
  add_expr_positionals(sub, cli.explain);
  sub->footer(
      "Examples:\n"
      "  einexpr explain einsum \"batch seq1 hidden, batch seq2 hidden -> batch seq1 seq2\" "
      "batch=4 seq1=8 seq2=8 hidden=32\n"
      "  einexpr explain rearrange \"c h w -> c w h\" c=3 h=4 w=5");
  cli.commands.push_back({sub, [&cli] { return explain_command(cli.explain); }});
}

void add_check(Cli& cli) {
  CLI::App* sub = cli.app.add_subcommand(
      "check", "Validate a pattern: 'ok (OP)' and exit 0, or the fault under a caret and exit 1");
  positional(sub->add_option("PATTERN", cli.check.pattern, "The einops pattern, quoted"))->required()->type_name("");
  sub->add_option("--op", cli.check.op,
                  "rearrange, reduce, repeat, einsum or map (default: rearrange for one operand, else einsum)")
      ->type_name("OP");
  sub->footer(
      "Examples:\n"
      "  einexpr check \"batch seq1 hidden, batch seq2 hidden -> batch seq1 seq2\"\n"
      "  einexpr check \"c (h h2) (w w2) -> c h w\" --op reduce\n"
      "  einexpr check \"h w -> c h w\" --op repeat");
  cli.commands.push_back({sub, [&cli] { return check_command(cli.check); }});
}

void add_bench(Cli& cli) {
  BenchArgs& b = cli.bench;
  CLI::App* sub = cli.app.add_subcommand(
      "bench", "Time an expression on seeded random data: FLOP/s, bandwidth and MFU against the device table");
  add_expr_positionals(sub, b.expr);
  add_run_options(sub, b.run);
  sub->add_option("--spec", b.spec, "Device-table entry to compare with (default: cpu for CPU runs, h100 for cuda)")
      ->type_name("NAME");
  sub->add_flag("--json", b.json, "One JSON object");
  sub->add_option("--warmup", b.warmup, "Untimed runs first")->capture_default_str()->check(CLI::Range(0, 1000000));
  sub->add_option("--repeats", b.repeats, "At least this many timed runs")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  sub->add_option("--min-time", b.min_time, "...and for at least this many seconds (at most 1000000 runs)")
      ->type_name("S")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  sub->add_option("--max-time", b.max_time, "...but stop after this many")
      ->type_name("S")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  sub->add_option("--seed", b.seed, "Seed of the random inputs")->capture_default_str();
  sub->add_option("--copy", b.copy,
                  "rearrange and repeat: if_needed (a view where the strides allow), never (always a view, "
                  "else exit 1) or always (time the copy into a new tensor)")
      ->type_name("POLICY")
      ->capture_default_str()
      ->check(CLI::IsMember({"if_needed", "never", "always"}));
  sub->footer(
      "A progress line goes to stderr while a run takes longer than a second.\n"
      "Examples:\n"
      "  einexpr bench einsum \"b d, d k -> b k\" b=1024 d=256 k=64\n"
      "  einexpr bench einsum \"b d, d k -> b k\" b=16384 d=32768 k=8192 --dtype bf16 --device cuda\n"
      "  einexpr bench reduce \"c (h h2) (w w2) -> c h w\" mean c=3 h=50 h2=20 w=50 w2=20 --json\n"
      "  einexpr bench rearrange \"b h w -> b w h\" b=64 h=256 w=256 --copy always\n"
      "  einexpr bench map \"b s h -> b s h\" gelu b=64 s=1024 h=1024 --json\n"
      "  einexpr bench einsum \"b d, d k -> b k\" x.npy w.npy   (random data of the files' shapes and dtype)");
  cli.commands.push_back({sub, [&cli] { return bench_command(cli.bench); }});
}

void add_roofline(Cli& cli) {
  RooflineArgs& r = cli.roofline;
  CLI::App* sub =
      cli.app.add_subcommand("roofline", "Write an SVG roofline plot, one point per expression at its roofline bound");
  positional(sub->add_option("FILE.svg", r.svg, "The SVG file to write"))->required()->type_name("");
  positional(sub->add_option("EXPR", r.exprs,
                  "\"OP|PATTERN|NAME=LEN,NAME=LEN,...\", \"reduce|PATTERN|REDUCTION|NAME=LEN,...\" or "
                  "\"map|PATTERN|FUNCTION|NAME=LEN,...\"; the point's label is the pattern"))
      ->required()
      ->type_name("");
  sub->add_option("--device", r.device, "Device-table entry whose roofs are drawn")
      ->type_name("DEV")
      ->capture_default_str();
  sub->add_option("--dtype", r.dtype, "Element type of every expression")->type_name("DT")->capture_default_str();
  sub->footer(
      "Examples (the lecture's matrix-vector and matrix-matrix products, and a sum):\n"
      "  einexpr roofline plot.svg --dtype bf16 \"einsum|i j, j k -> i k|i=1024,j=1024,k=1024\" \\\n"
      "      \"einsum|i, i j -> j|i=1024,j=1024\" \"reduce|i j -> i|sum|i=1024,j=1024\"");
  cli.commands.push_back({sub, [&cli] { return roofline_command(cli.roofline); }});
}

void add_devices(Cli& cli) {
  CLI::App* sub =
      cli.app.add_subcommand("devices", "The device table: promised dense peaks by dtype, memory bandwidth, sources");
  sub->add_flag("--json", cli.devices.json, "A JSON list in the format $EINEXPR_DEVICES files use");
  sub->add_flag("--calibrate", cli.devices.calibrate,
                "Measure the 'cpu' device again (FMA peaks, copy bandwidth) and cache it");
  sub->add_option("--threads", cli.devices.run.threads,
                  "CPU threads the 'cpu' entry is for (default: OpenMP's, OMP_NUM_THREADS)")
      ->type_name("N")
      ->check(CLI::Range(1, 4096));
  sub->footer(
      "Devices from the JSON file named by $EINEXPR_DEVICES are added to the built-in ones.\n"
      "The 'cpu' device is measured on this machine on first use (well under a second) and\n"
      "cached in $XDG_CACHE_HOME/einexpr/cpu_device.json (~/.cache/einexpr/ without\n"
      "XDG_CACHE_HOME); --calibrate measures it again. EINEXPR_CPU_DEVICE=FILE reads a fixed\n"
      "entry from FILE instead and never measures (tests use it).\n"
      "Examples:\n"
      "  einexpr devices --calibrate\n"
      "  einexpr devices --json > mine.json   # edit, then: EINEXPR_DEVICES=mine.json einexpr devices");
  cli.commands.push_back({sub, [&cli] { return devices_command(cli.devices); }});
}

void add_program_check(Cli& cli, CLI::App* program) {
  CLI::App* sub = program->add_subcommand(
      "check", "Check a model file: its names, then every statement's shapes and dtypes in one axis environment");
  sub->add_option("FILE", cli.program_check.file, "The model file (.ein)")->required()->type_name("");
  sub->add_option("LENGTHS", cli.program_check.lengths, "NAME=LEN...: lengths that replace the file's axes lines")
      ->type_name("");
  sub->footer("Examples:\n  einexpr program check examples/models/lecture2.ein\n"
              "  einexpr program check examples/models/lecture2.ein B=64");
  cli.commands.push_back({sub, [&cli] { return program_check_command(cli.program_check); }});
}

void add_recompute_options(CLI::App* sub, RecomputeArgs& a) {
  sub->add_option("--recompute", a.mode,
                  "What the backward keeps. none: every activation it reads; checkpoints: only the model file's "
                  "checkpoint lines (or --checkpoint) and the loss, the rest made again during the backward; auto: "
                  "chosen to fit --memory-limit with the fewest FLOPs made again. Default: checkpoints when the file "
                  "has checkpoint lines, else none")
      ->type_name("none|checkpoints|auto");
  sub->add_option("--checkpoint", a.checkpoints, "Statement results kept under --recompute checkpoints (instead of the file's lines)")
      ->type_name("NAME,...")
      ->delimiter(',');
  sub->add_option("--memory-limit", a.memory_limit,
                  "--recompute auto: the most the step may hold at once (params, optimizer state, inputs, activations, "
                  "gradients, temporaries), as 1500000, 512KiB, 24MiB or 1.5GB")
      ->type_name("BYTES");
  sub->add_option("--search-budget", a.search_budget,
                  "--recompute auto: the most timelines its branch and bound plans after the greedy choice "
                  "(default 20000; 0: the greedy choice alone)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);
}

// --mesh, --shard and (cost, train) --zero: a device mesh replacing the model file's lines.
void add_mesh_options(CLI::App* sub, MeshArgs& m, bool zero) {
  sub->add_option("--mesh", m.dims,
                  "A device mesh: its named dimensions and sizes, 'dp=2@ib tp=4@nvlink' (with --shard; "
                  "replaces the file's mesh line)")
      ->type_name("DIMS");
  sub->add_option("--shard", m.shard,
                  "The axes split over the mesh's dimensions, 'B:dp H:tp F:tp' (Mesh-TensorFlow's rule; replaces "
                  "the file's shard line); the others replicated. 'S:tp@ln1+h' splits S in those statements' results "
                  "only (sequence parallelism; costed, not yet run on MPI)")
      ->type_name("RULES");
  if (zero)
    sub->add_option("--zero", m.zero,
                    "ZeRO's stage (0..3) on the mesh: the optimizer state (1), the gradients (2), the params (3) "
                    "partitioned over the data-parallel dimensions")
        ->type_name("S")
        ->check(CLI::Range(0, 3));
}

void add_program_cost(Cli& cli, CLI::App* program) {
  ProgramCostArgs& a = cli.program_cost;
  CLI::App* sub = program->add_subcommand(
      "cost", "A training step's FLOPs (forward, backward toward the params, optimizer), memory and roofline bound");
  sub->add_option("FILE", a.file, "The model file (.ein)")->required()->type_name("");
  sub->add_option("LENGTHS", a.lengths, "NAME=LEN...: lengths that replace the file's axes lines")->type_name("");
  sub->add_option("--dtype", a.dtype, "Element type of tensors declared without one")->type_name("DT")->capture_default_str();
  sub->add_option("--device", a.device, "Device-table entry of the roofline ('einexpr devices' lists them)")
      ->type_name("DEV")
      ->capture_default_str();
  sub->add_option("--optimizer", a.optimizer, "sgd, momentum, adam or adamw: its update FLOPs and f32 state")
      ->type_name("O")
      ->capture_default_str();
  sub->add_flag("--mixed-precision", a.mixed_precision, "Count f32 master weights for params narrower than f32");
  add_recompute_options(sub, a.recompute);
  sub->add_flag("--compare", a.compare,
                "The published formulas (Narayanan's params, Kaplan's forward FLOPs, Korthikanti's and Narayanan's "
                "training FLOPs, 6·N·D, Korthikanti's activations) beside the exact counts, the difference by cause");
  sub->add_option("--compare-axes", a.compare_axes,
                  "VAR=AXIS,...: the formulas' variables (l h s V a k f b) as the program's axes, a product as G*R "
                  "(default: l the block's layers, h=D s=S V=V a=H k=K f=F b=B)")
      ->type_name("VAR=AXIS")
      ->delimiter(',');
  add_mesh_options(sub, a.mesh, true);
  sub->add_flag("--search", a.search,
                "The fastest layouts on --devices N: every size of the mesh's dimensions (its links and the axes split "
                "over them as given; sizes ignored), ZeRO stage, micro-batch count and recomputation, costed exactly, "
                "ranked by step time among those that fit each device's memory");
  sub->add_option("--devices", a.devices, "--search: the devices to lay the program over")->type_name("N");
  sub->add_option("--node", a.node, "--search: the devices the nvlink dimensions may span together (one node)")
      ->type_name("N")
      ->capture_default_str();
  sub->add_option("--batch-axis", a.batch_axis, "--search: the axis micro-batches cut")->type_name("AXIS")->capture_default_str();
  sub->add_option("--recompute-bound", a.recompute_bound,
                  "--recompute auto: write its search's lower bound to FILE (JSON: an integer program whose optimum is "
                  "at most the search space's, infeasible when no choice fits; bench/recompute_ilp.py solves it), "
                  "also when the search finds no choice that fits")
      ->type_name("FILE");
  sub->add_flag("--json", a.json, "One JSON object; integers are exact decimal literals, even beyond 2^64");
  sub->footer(
      "Examples:\n"
      "  einexpr program cost examples/models/lecture2.ein\n"
      "  einexpr program cost examples/models/gpt2.ein L=96 D=12288 H=96 K=128 F=49152 S=2048 T=2048 --compare\n"
      "  einexpr program cost examples/models/llama2.ein --compare --compare-axes a=G*R\n"
      "  einexpr program cost examples/models/gpt2_block.ein B=8 --dtype bf16 --optimizer adam --mixed-precision\n"
      "  einexpr program cost examples/models/lecture2.ein B=4096 --json\n"
      "  einexpr program cost examples/models/gpt2_train.ein --optimizer adam --recompute auto --memory-limit 72KiB");
  cli.commands.push_back({sub, [&cli] { return program_cost_command(cli.program_cost); }});
}

void add_program_run(Cli& cli, CLI::App* program) {
  ProgramRunArgs& a = cli.program_run;
  CLI::App* sub = program->add_subcommand(
      "run", "Run a model file on .npy inputs with its memory planned by liveness; writes OUTDIR/NAME.npy per output");
  sub->add_option("FILE", a.file, "The model file (.ein)")->required()->type_name("");
  sub->add_option("ARGS", a.args,
                  "NAME=IN.npy for every input and param (their shapes give the axes their lengths), "
                  "NAME=LEN for other axes")
      ->type_name("");
  sub->add_option("-o,--output", a.output_dir, "The directory the outputs are written to (created if missing)")
      ->required()
      ->type_name("OUTDIR");
  add_run_options(sub, a.run);
  add_mesh_options(sub, a.mesh, false);
  sub->add_flag("--json", a.json,
                "Print the outputs and peak_bytes_predicted / peak_bytes_measured as JSON (on a mesh: each collective, "
                "predicted and as issued)");
  sub->footer(
      "Example:\n"
      "  einexpr program run examples/models/lecture2.ein x=x.npy w1=w1.npy w2=w2.npy -o out --json\n"
      "  mpirun -np 4 einexpr program run examples/models/lecture2.ein x=x.npy w1=w1.npy w2=w2.npy -o out "
      "--mesh 'dp=2 tp=2' --shard 'B:dp E:tp'");
  cli.commands.push_back({sub, [&cli] { return program_run_command(cli.program_run); }});
}

void add_program_train(Cli& cli, CLI::App* program) {
  ProgramTrainArgs& a = cli.program_train;
  CLI::App* sub = program->add_subcommand(
      "train", "Train a model file whose output is the loss: forward, backward and optimizer, planned once; "
               "writes the trained params to OUTDIR/NAME.npy");
  sub->add_option("FILE", a.file, "The model file (.ein); its one output is the loss, a 0-d float")->required()->type_name("");
  sub->add_option("ARGS", a.args,
                  "NAME=IN.npy for every input and param (params: their initial values), NAME=DIR for an input "
                  "read from a folder of .npy files (one per step, in name order), NAME=LEN for other axes")
      ->type_name("");
  sub->add_option("--steps", a.steps, "Optimizer steps to take")->required()->type_name("N");
  sub->add_option("--optimizer", a.optimizer, "sgd, momentum, adam or adamw (torch.optim's)")
      ->type_name("O")
      ->capture_default_str();
  sub->add_option("--lr", a.lr, "Learning rate")->type_name("LR")->capture_default_str();
  sub->add_option("--momentum", a.momentum, "momentum: its coefficient (torch's, dampening 0)")
      ->type_name("M")
      ->capture_default_str()
      ->each([&a](const std::string&) { a.momentum_given = true; });
  sub->add_option("--betas", a.betas, "adam, adamw: B1,B2 (default 0.9,0.999)")->type_name("B1,B2");
  sub->add_option("--eps", a.eps, "adam, adamw: the denominator's epsilon")->type_name("E")->capture_default_str();
  sub->add_option("--weight-decay", a.weight_decay, "L2 added to the gradient (adamw: decoupled, torch's)")
      ->type_name("WD")
      ->capture_default_str();
  sub->add_option("--dtype", a.dtype, "Element type of tensors declared without one (f32, f64; bf16 or f16 with --mixed-precision)")
      ->type_name("DT")
      ->capture_default_str();
  sub->add_flag("--mixed-precision", a.mixed_precision,
                "bf16 / f16 params: forward and backward in their dtype, updates on f32 master weights");
  sub->add_option("--micro-batches", a.micro_batches,
                  "Accumulate the gradients of K equal cuts of each step's inputs along --batch-axis, then update once")
      ->type_name("K")
      ->capture_default_str();
  sub->add_option("--batch-axis", a.batch_axis, "The axis micro-batches cut (the first dim of the inputs that have it)")
      ->type_name("AXIS")
      ->capture_default_str();
  sub->add_option("--seed", a.seed, "dropout's random stream: the same seed draws the same masks on any machine")
      ->type_name("N")
      ->capture_default_str();
  add_recompute_options(sub, a.recompute);
  sub->add_option("--progress", a.progress_s, "A progress line (step, loss, ms) on stderr at most every S seconds (0: each step)")
      ->type_name("S")
      ->capture_default_str();
  sub->add_option("--resume", a.resume,
                  "Continue from a checkpoint (a previous OUTDIR): its params, optimizer state and step count")
      ->type_name("DIR");
  sub->add_option("-o,--output", a.output_dir,
                  "The directory the trained params, the optimizer's state and the step count are written to "
                  "(created if missing)")
      ->required()
      ->type_name("OUTDIR");
  add_run_options(sub, a.run);
  add_mesh_options(sub, a.mesh, true);
  sub->add_flag("--json", a.json,
                "Print each step's loss and time, flops_per_step, roofline_time_s, mfu, peak_bytes_predicted and "
                "peak_bytes_measured as JSON");
  sub->footer(
      "Example:\n"
      "  einexpr program train examples/models/lecture2.ein x=x.npy w1=w1.npy w2=w2.npy --steps 20 "
      "--optimizer adam --lr 0.01 -o trained --json\n"
      "  mpirun -np 2 einexpr program train examples/models/lecture2.ein x=x.npy w1=w1.npy w2=w2.npy --steps 20 "
      "--optimizer adam --mesh dp=2 --shard B:dp --zero 1 -o trained");
  cli.commands.push_back({sub, [&cli] { return program_train_command(cli.program_train); }});
}

void add_program(Cli& cli) {
  CLI::App* program = cli.app.add_subcommand("program", "Model files: a layer or a model as named statements");
  program->require_subcommand(1);
  add_program_check(cli, program);
  add_program_cost(cli, program);
  add_program_run(cli, program);
  add_program_train(cli, program);
}

}  // namespace

std::vector<std::string> protect_patterns(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (i > 0 && a.starts_with("->")) a.insert(a.begin(), positional_mark);
    args.push_back(std::move(a));
  }
  return args;
}

std::string unprotect(std::string text) {
  std::erase(text, positional_mark);
  return text;
}

Cli::Cli() : app(tool_description, "einexpr") {}

std::unique_ptr<Cli> make_cli() {
  auto cli = std::make_unique<Cli>();
  cli->app.footer(tool_footer);
  cli->app.set_version_flag("--version", std::string("einexpr ") + version);
  cli->app.require_subcommand(1);
  // One run command per row of the op registry (parser/ops.hpp), its help from the table above.
  for (const OpRow& row : op_rows()) {
    const OpHelp* help = help_for(row.name);
    cli->ops.emplace_back();
    add_op_command(*cli, cli->ops.back(), row, help ? help->description : std::string(row.summary),
                   help ? help->footer : "");
  }
  add_cost(*cli);
  add_explain(*cli);
  add_check(*cli);
  add_bench(*cli);
  add_roofline(*cli);
  add_devices(*cli);
  add_program(*cli);
  return cli;
}

}  // namespace einexpr::cli
