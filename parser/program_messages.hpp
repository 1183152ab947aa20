#pragma once
// The error messages of the model-program grammar: error_message<Rule> for every rule of
// program_grammar.hpp that a must<> or reject<> can raise (the control class and the "{}"
// convention are messages.hpp's), and the errors the actions raise.
#include "messages.hpp"
#include "program_grammar.hpp"

namespace einexpr::grammar {

// clang-format off
// ---- lines ----
template <> inline constexpr const char* error_message<model::line_end> =
    "unexpected {}: expected the end of the line (or a '#' comment)";
template <> inline constexpr const char* error_message<model::bad_line_start> =
    "unexpected {}: a line is a declaration (axes, input, param, output, checkpoint), a block "
    "(block, end), a statement 'name = op(...)' or a '#' comment";
template <> inline constexpr const char* error_message<model::keyword_as_name> =
    "a keyword (axes, input, param, output, checkpoint, block, end) cannot name a tensor";
// ---- axes ----
template <> inline constexpr const char* error_message<model::axis_def> =
    "expected NAME=LEN after 'axes': 'axes B=1024 D=256'";
template <> inline constexpr const char* error_message<model::equals> =
    "expected '=' after the axis name: NAME=LEN";
template <> inline constexpr const char* error_message<model::length_token> =
    "expected the axis length, a positive integer: NAME=LEN";
template <> inline constexpr const char* error_message<model::length_end> =
    "expected a space after the length: axis definitions are separated by spaces";
template <> inline constexpr const char* error_message<model::axes_comma> =
    "',' between axis definitions: they are separated by spaces, 'axes B=1024 D=256'";
template <> inline constexpr const char* error_message<model::dtype_as_axis> =
    "a dtype name (f64 f32 f16 bf16 f8_e4m3 f8_e5m2 i64 i32 bool) cannot name an axis";
// ---- declarations ----
template <> inline constexpr const char* error_message<model::tensor_name> =
    "expected a tensor name: 'input x: B D', 'param w: D E'";
template <> inline constexpr const char* error_message<model::colon> =
    "expected ':' after the tensor name: 'input x: B D'";
template <> inline constexpr const char* error_message<model::group_axis> =
    "expected an axis name in the composition: '(h d)'";
template <> inline constexpr const char* error_message<model::group_close> =
    "expected ')' to close the composition: '(h d)'";
template <> inline constexpr const char* error_message<model::nested_paren> =
    "nested parenthesis: a composition is one level deep, '(h d)'";
template <> inline constexpr const char* error_message<model::dim_number> =
    "a declared dim is an axis name, not a number: give it a name and a length on the axes line";
template <> inline constexpr const char* error_message<model::after_dtype> =
    "the dtype comes last: 'input x: B D bf16'";
template <> inline constexpr const char* error_message<model::output_name> =
    "expected a tensor name after 'output'";
template <> inline constexpr const char* error_message<model::checkpoint_name> =
    "expected a statement's result after 'checkpoint' (names separated by ',')";
// ---- blocks ----
template <> inline constexpr const char* error_message<model::block_name> =
    "expected the block's name after 'block': 'block layer(x) over L'";
template <> inline constexpr const char* error_message<model::block_open> =
    "expected '(' and the block's parameters after its name: 'block layer(x) over L'";
template <> inline constexpr const char* error_message<model::block_param> =
    "expected a parameter name: 'block layer(x, mask) over L'";
template <> inline constexpr const char* error_message<model::block_close> =
    "expected ',' or ')' after the parameter: 'block layer(x, mask) over L'";
template <> inline constexpr const char* error_message<model::mesh_dim_def> =
    "expected NAME=SIZE after 'mesh': 'mesh dp=64@ib tp=8@nvlink'";
template <> inline constexpr const char* error_message<model::mesh_equals> =
    "expected '=' after the mesh dimension's name: NAME=SIZE, 'tp=8'";
template <> inline constexpr const char* error_message<model::mesh_size_token> =
    "expected the mesh dimension's size, a positive integer: NAME=SIZE, 'tp=8'";
template <> inline constexpr const char* error_message<model::mesh_link> =
    "expected the link's name after '@': 'tp=8@nvlink', 'dp=64@ib'";
template <> inline constexpr const char* error_message<model::shard_rule> =
    "expected AXIS:MESHDIM after 'shard': 'shard B:dp H:tp'";
template <> inline constexpr const char* error_message<model::shard_colon> =
    "expected ':' after the axis: AXIS:MESHDIM, 'H:tp'";
template <> inline constexpr const char* error_message<model::shard_statement> =
    "expected a statement's name after '@' (or '+'): AXIS:MESHDIM@NAME+NAME, 'S:tp@ln1+h'";
template <> inline constexpr const char* error_message<model::shard_dim> =
    "expected the mesh dimension after ':': AXIS:MESHDIM, 'H:tp'";
template <> inline constexpr const char* error_message<model::kw_over> =
    "expected 'over' and the layer axis after the parameters: 'block layer(x) over L'";
template <> inline constexpr const char* error_message<model::block_axis> =
    "expected the layer axis after 'over': 'block layer(x) over L'";
// ---- statements ----
template <> inline constexpr const char* error_message<model::assign> =
    "expected '=' after the tensor name: 'name = op(...)'";
template <> inline constexpr const char* error_message<model::op_name> =
    "expected an op after '=': 'name = einsum(...)'";
template <> inline constexpr const char* error_message<model::call_open> =
    "expected '(' after the op";
template <> inline constexpr const char* error_message<model::argument> =
    "expected an argument: a tensor name, a number, a \"string\" or axis=length";
template <> inline constexpr const char* error_message<model::call_close> =
    "expected ',' or ')' after the argument";
template <> inline constexpr const char* error_message<model::unterminated_string> =
    "unterminated string: '\"' is not closed on its line";
template <> inline constexpr const char* error_message<model::number_arg> =
    "a number runs into letters: a number (0.125, -1, 1e-5) stands alone, an axis length is axis=length";
template <> inline constexpr const char* error_message<model::more_name> =
    "expected a tensor name after ',': 'q, k = rearrange(x, \"b (q + k) -> b q, b k\")'";
// clang-format on

}  // namespace einexpr::grammar
