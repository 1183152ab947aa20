#pragma once
// The model-program grammar as PEGTL rules: private to parser/ (no PEGTL type leaves it).
// The language is described in include/einexpr/parser/program.hpp.
//
// EBNF (sp = { " " | "\t" }: blanks within a line; a declaration or statement is one line):
//
//   program     = line { newline line } EOF
//   newline     = "\n" | "\r\n"
//   line        = sp [ item ] sp [ comment ]           then a newline or the end
//   comment     = "#" { any byte but "\n" }
//   item        = axes_decl | input_decl | param_decl | output_decl | checkpoint_decl
//               | block_decl | end_decl | statement
//   axes_decl   = "axes" sp axis_def { sp axis_def }
//   axis_def    = name sp "=" sp length                the name is no dtype name
//   input_decl  = "input" sp name sp ":" sp dims
//   param_decl  = "param" sp name sp ":" sp dims
//   dims        = { dim sp } [ dtype ]                 no dim: a scalar
//   dim         = "(" sp name { sp name } sp ")" | name    the name is no dtype name
//   dtype       = "f64" | "f32" | "f16" | "bf16" | "f8_e4m3" | "f8_e5m2" | "i64" | "i32" | "bool"
//   output_decl = "output" sp name { sp name }
//   checkpoint_decl = "checkpoint" sp name { sp [ "," sp ] name }   kept for the backward
//   block_decl  = "block" sp name sp "(" sp name { sp "," sp name } sp ")" sp "over" sp name
//                                                      opens a block: the lines up to "end"
//                                                      are its body (statements, checkpoints)
//   end_decl    = "end"                                closes it
//   mesh_decl   = "mesh" sp mesh_dim { sp mesh_dim }   the device mesh: "mesh dp=64@ib tp=8@nvlink"
//   mesh_dim    = name "=" length [ "@" name ]         a dimension, its size and its link
//   shard_decl  = "shard" sp rule { sp rule }          "shard B:dp H:tp": axes split over the mesh
//   rule        = name ":" name                        (mesh and shard are keywords only where a
//                                                      name follows them: "mesh = ..." is a statement)
//   statement   = name { sp "," sp name } sp "=" sp op sp "(" sp [ argument { sp "," sp argument } ] sp ")"
//                                                      several names: a split's outputs
//   op          = name                                 looked up in the op table, or a block
//                                                      defined above (a call: tensors only)
//   argument    = string | axis_def | number | name    the pattern, a function, a length, a
//                                                      number (a 0-d operand), a tensor
//   number      = [ "-" ] digit { digit } [ "." { digit } ] [ ( "e" | "E" ) [ "+" | "-" ] digit { digit } ]
//   string      = '"' { any byte but '"', "\r", "\n" } '"'
//   name        = ( letter | "_" ) { letter | digit | "_" }
//   length      = digit { digit }                      1 .. 2^63-1 (checked by the action)
//
// Keywords (axes input param output checkpoint block end) and dtype names are whole words. A line that starts
// with a keyword is that declaration, so a keyword names no tensor. The order of a call's
// arguments (tensors, the pattern, a function, lengths) is checked by the actions, which see
// each argument's position. As in grammar.hpp, a mistake is a rule used as reject<Mistake>
// that raises its own message (program_messages.hpp) at its first byte, and no rule
// backtracks over an action that already ran.
#include <tao/pegtl.hpp>

#include "grammar.hpp"

namespace einexpr::grammar::model {

namespace pegtl = tao::pegtl;
using grammar::reject;

// ---- layout -------------------------------------------------------------------------------
struct sp : pegtl::star<pegtl::one<' ', '\t'>> {};                     // blanks, maybe none
struct newline : pegtl::sor<pegtl::one<'\n'>, pegtl::string<'\r', '\n'>> {};  // ends a line
struct comment : pegtl::seq<pegtl::one<'#'>, pegtl::star<pegtl::not_one<'\n'>>> {};  // "# ..."
struct line_end : pegtl::sor<pegtl::at<newline>, pegtl::eof> {};      // nothing else on the line

// ---- words --------------------------------------------------------------------------------
struct word_end : pegtl::not_at<pegtl::identifier_other> {};  // a name or number ends here
template <char... Cs>
struct word : pegtl::seq<pegtl::string<Cs...>, word_end> {};   // a whole word, not a prefix
struct kw_axes : word<'a', 'x', 'e', 's'> {};                  // starts an axes line
struct kw_input : word<'i', 'n', 'p', 'u', 't'> {};            // starts an input declaration
struct kw_param : word<'p', 'a', 'r', 'a', 'm'> {};            // starts a param declaration
struct kw_output : word<'o', 'u', 't', 'p', 'u', 't'> {};      // starts an output line
struct kw_checkpoint                                           // starts a checkpoint line
    : word<'c', 'h', 'e', 'c', 'k', 'p', 'o', 'i', 'n', 't'> {};
struct kw_block : word<'b', 'l', 'o', 'c', 'k'> {};           // opens a block
struct kw_end : word<'e', 'n', 'd'> {};                        // closes it
struct kw_over : word<'o', 'v', 'e', 'r'> {};                  // before a block's layer axis
struct kw_mesh : word<'m', 'e', 's', 'h'> {};                  // starts a mesh line
struct kw_shard : word<'s', 'h', 'a', 'r', 'd'> {};            // starts a shard line
struct keyword                                                 // any of the seven
    : pegtl::sor<kw_axes, kw_input, kw_param, kw_output, kw_checkpoint, kw_block, kw_end> {};
struct dtype                                                   // a dtype name
    : pegtl::sor<word<'f', '6', '4'>, word<'f', '3', '2'>, word<'f', '1', '6'>,
                 word<'b', 'f', '1', '6'>, word<'f', '8', '_', 'e', '4', 'm', '3'>,
                 word<'f', '8', '_', 'e', '5', 'm', '2'>, word<'i', '6', '4'>,
                 word<'i', '3', '2'>, word<'b', 'o', 'o', 'l'>> {};
struct name : pegtl::identifier {};          // a name (the rules below say of what)
struct tensor_name : name {};                // the tensor a declaration or statement defines
struct more_name : name {};                  // a split statement's further tensors
struct axis_name : name {};                  // the axis an axis_def defines
struct dim_axis : name {};                   // an axis of a declared dim
struct output_name : name {};                // a tensor an output line names
struct checkpoint_name : name {};            // a tensor a checkpoint line names
struct op_name : name {};                    // the op (or block) a statement calls
struct block_name : name {};                 // the block a block line defines
struct block_param : name {};                // one of its parameters
struct block_axis : name {};                 // its layer axis
struct arg_tensor : name {};                 // a tensor argument
struct length : pegtl::plus<pegtl::digit> {};                    // an axis length
struct length_end : word_end {};                                 // after a length
struct length_token : pegtl::seq<length, pegtl::must<length_end>> {};  // "1024", no letter after
struct equals : pegtl::one<'='> {};          // in NAME=LEN
struct assign : pegtl::one<'='> {};          // after a statement's name
struct colon : pegtl::one<':'> {};           // between a declared tensor and its dims
struct group_open : pegtl::one<'('> {};      // opens a composition
struct group_close : pegtl::one<')'> {};     // closes a composition
struct call_open : pegtl::one<'('> {};       // opens a call
struct call_close : pegtl::one<')'> {};      // closes a call
struct comma : pegtl::one<','> {};           // between arguments
struct block_open : pegtl::one<'('> {};      // opens a block's parameters
struct block_close : pegtl::one<')'> {};     // closes them
struct quote : pegtl::one<'"'> {};           // around a string
struct string_body : pegtl::star<pegtl::not_one<'"', '\r', '\n'>> {};  // a string's contents
struct string_arg : pegtl::seq<quote, string_body, quote> {};          // "..." on one line

// ---- mistakes (each used as reject<mistake>) ----------------------------------------------
struct keyword_as_name : pegtl::seq<keyword, sp, equals> {};  // "input = ...": a keyword
struct bad_line_start  // a line that starts with neither a keyword, a name nor '#'
    : pegtl::seq<pegtl::not_at<pegtl::sor<newline, pegtl::one<'#'>, pegtl::eof>>, pegtl::any> {};
struct dtype_as_axis : dtype {};                             // "axes f32=3"
struct axes_comma : pegtl::one<','> {};                      // "axes B=1, D=2"
struct dim_number : pegtl::digit {};                         // "input x: B 3"
struct after_dtype : pegtl::sor<name, group_open> {};        // "input x: f32 B"
struct nested_paren : pegtl::one<'('> {};                    // "((h d))"
struct unterminated_string  // '"' with no '"' before the end of its line
    : pegtl::seq<quote, string_body, pegtl::not_at<quote>> {};
struct number_arg : pegtl::digit {};                         // "f(x, 3d)": a number run into letters
struct name_comma : pegtl::one<','> {};                      // between a split statement's names
struct scalar_arg  // a number in place of a tensor: a 0-d operand, "0.125", "-1", "1e-5"
    : pegtl::seq<pegtl::opt<pegtl::one<'-'>>, pegtl::plus<pegtl::digit>,
                 pegtl::opt<pegtl::one<'.'>, pegtl::star<pegtl::digit>>,
                 pegtl::opt<pegtl::one<'e', 'E'>, pegtl::opt<pegtl::one<'+', '-'>>, pegtl::plus<pegtl::digit>>,
                 pegtl::not_at<pegtl::sor<pegtl::identifier_other, pegtl::one<'.'>>>> {};

// ---- axes and declarations -----------------------------------------------------------------
struct axis_def  // "B=1024"
    : pegtl::seq<pegtl::opt<reject<dtype_as_axis>>, axis_name, sp, pegtl::must<equals>, sp,
                 pegtl::must<length_token>> {};
struct axes_decl  // "axes B=1024 D=256"
    : pegtl::seq<kw_axes, sp, pegtl::must<axis_def>,
                 pegtl::star<sp, pegtl::sor<axis_def, reject<axes_comma>>>> {};
struct group_axis : pegtl::sor<dim_axis, reject<nested_paren>> {};  // a name in "(h d)"
struct dim_group  // "(H K)": a dim of length H·K
    : pegtl::seq<group_open, sp, pegtl::must<group_axis>, pegtl::star<sp, group_axis>, sp,
                 pegtl::must<group_close>> {};
struct dim  // "D" or "(H K)"
    : pegtl::sor<dim_group, pegtl::seq<pegtl::not_at<dtype>, dim_axis>, reject<dim_number>> {};
struct dims  // "B D bf16": the dims, then maybe the dtype
    : pegtl::seq<pegtl::star<dim, sp>, pegtl::opt<dtype, sp, pegtl::opt<reject<after_dtype>>>> {};
struct input_decl  // "input x: B D"
    : pegtl::seq<kw_input, sp, pegtl::must<tensor_name>, sp, pegtl::must<colon>, sp, dims> {};
struct param_decl  // "param w: D E"
    : pegtl::seq<kw_param, sp, pegtl::must<tensor_name>, sp, pegtl::must<colon>, sp, dims> {};
struct output_decl  // "output loss h2"
    : pegtl::seq<kw_output, sp, pegtl::must<output_name>, pegtl::star<sp, output_name>> {};
struct checkpoint_comma : pegtl::one<','> {};  // between a checkpoint line's names (or blanks)
struct checkpoint_decl  // "checkpoint h, y": what the backward keeps under recomputation
    : pegtl::seq<kw_checkpoint, sp, pegtl::must<checkpoint_name>,
                 pegtl::star<sp, pegtl::sor<pegtl::seq<checkpoint_comma, sp, pegtl::must<checkpoint_name>>,
                                            checkpoint_name>>> {};

// ---- blocks ---------------------------------------------------------------------------------
struct block_decl  // "block layer(x, mask) over L"
    : pegtl::seq<kw_block, sp, pegtl::must<block_name>, sp, pegtl::must<block_open>, sp, pegtl::must<block_param>,
                 pegtl::star<sp, comma, sp, pegtl::must<block_param>>, sp, pegtl::must<block_close>, sp,
                 pegtl::must<kw_over>, sp, pegtl::must<block_axis>> {};
struct end_decl : kw_end {};  // "end": closes the block

// ---- the device mesh ------------------------------------------------------------------------
struct mesh_dim_name : name {};                                   // "tp"
struct mesh_equals : pegtl::one<'='> {};                          // in tp=8
struct mesh_size : pegtl::plus<pegtl::digit> {};                  // its size
struct mesh_size_token : pegtl::seq<mesh_size, pegtl::must<length_end>> {};
struct mesh_at : pegtl::one<'@'> {};                              // before the link
struct mesh_link : name {};                                       // "nvlink"
struct mesh_dim_def  // "tp=8@nvlink"
    : pegtl::seq<mesh_dim_name, pegtl::must<mesh_equals>, pegtl::must<mesh_size_token>,
                 pegtl::opt<mesh_at, pegtl::must<mesh_link>>> {};
struct mesh_decl  // "mesh dp=64@ib tp=8@nvlink"
    : pegtl::seq<kw_mesh, sp, pegtl::at<name>, pegtl::must<mesh_dim_def>, pegtl::star<sp, mesh_dim_def>> {};
struct shard_axis : name {};                                      // "H"
struct shard_colon : pegtl::one<':'> {};                          // in H:tp
struct shard_dim : name {};                                       // "tp"
struct shard_at : pegtl::one<'@'> {};                             // before the statements
struct shard_plus : pegtl::one<'+'> {};                           // between them
struct shard_statement : name {};                                 // "ln1"
struct shard_rule  // "H:tp", "S:tp@ln1+h"
    : pegtl::seq<shard_axis, pegtl::must<shard_colon>, pegtl::must<shard_dim>,
                 pegtl::opt<shard_at, pegtl::must<shard_statement>, pegtl::star<shard_plus, pegtl::must<shard_statement>>>> {};
struct shard_decl  // "shard B:dp H:tp"
    : pegtl::seq<kw_shard, sp, pegtl::at<name>, pegtl::must<shard_rule>, pegtl::star<sp, shard_rule>> {};

// ---- statements ----------------------------------------------------------------------------
struct length_arg  // "c=4" in a call
    : pegtl::seq<pegtl::at<name, sp, equals>, axis_def> {};
struct argument  // one argument of a call
    : pegtl::sor<reject<unterminated_string>, string_arg, length_arg, scalar_arg, arg_tensor,
                 reject<number_arg>> {};
struct next_argument : pegtl::seq<comma, sp, pegtl::must<argument>> {};  // ", argument"
struct arguments  // the arguments, maybe none
    : pegtl::sor<pegtl::at<call_close>,
                 pegtl::seq<pegtl::must<argument>, pegtl::star<sp, next_argument>>> {};
struct statement  // "h = einsum(x, w, \"b d, d e -> b e\")"; "q, k = rearrange(...)"
    : pegtl::seq<tensor_name, pegtl::star<sp, name_comma, sp, pegtl::must<more_name>>, sp, pegtl::must<assign>, sp,
                 pegtl::must<op_name>, sp,
                 pegtl::must<call_open>, sp, arguments, sp, pegtl::must<call_close>> {};

// ---- lines and the program -----------------------------------------------------------------
struct item  // one declaration or statement
    : pegtl::sor<reject<keyword_as_name>, axes_decl, input_decl, param_decl, output_decl,
                 checkpoint_decl, block_decl, end_decl, mesh_decl, shard_decl, statement, reject<bad_line_start>> {};
struct line  // one line, maybe blank, maybe a comment
    : pegtl::seq<sp, pegtl::opt<item>, sp, pegtl::opt<comment>, pegtl::must<line_end>> {};
struct program : pegtl::seq<line, pegtl::star<newline, line>, pegtl::eof> {};  // the file

}  // namespace einexpr::grammar::model
