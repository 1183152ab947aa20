#pragma once
// fuzz_model's second half (model_run.cpp): a program that parsed is planned in its axis
// environment (lengths above 8 folded to 1..8, so that every program is small), costed, and,
// when its buffers are small, compiled and run on random inputs.
#include <string_view>

#include "einexpr/parser/program.hpp"

namespace fuzz {

/// Invariants (a violation aborts):
///   - plan_program and cost throw nothing but einexpr::Error, never InternalError; a
///     ProgramError's place lies in the text (`check_place` checks line:col);
///   - the cost adds up: the statements' forward FLOPs are forward_flops, their backward FLOPs
///     plus accumulation are backward_flops, the 6·N·P parts sum to the rule and the exact
///     count, the peak holds the params, inputs and optimizer state, and the activations;
///   - a run's measured peak never exceeds its predicted peak, and the arena is never more
///     than its buffers without reuse;
///   - a program whose output is a 0-d float loss is trained one sgd step: the step's loss is
///     the run's bit for bit, the step allocates nothing, the trainer no more than predicted.
void plan_cost_run(const einexpr::ast::Program& program, std::string_view text,
                   void (*check_place)(const einexpr::ProgramError&, std::string_view));

}  // namespace fuzz
