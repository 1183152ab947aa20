#pragma once
// The pattern grammar as PEGTL rules: private to parser/ (no PEGTL type leaves it).
//
// EBNF (ws = { " " | "\t" | "\r" | "\n" }; whitespace is free between tokens):
//
//   pattern   = ws inputs "->" ws outputs EOF
//   inputs    = operand { "," ws operand }      an empty operand is a 0-d tensor (numpy's
//                                               "i, -> i"); the checks say which ops take it
//   outputs   = output { "," ws output }        several: a split ("a (b + c) -> a b, a c");
//                                               check() says which ops take them
//   output    = operand                         may be empty: a scalar
//   operand   = { term ws }
//   term      = ellipsis | group | number | name
//   group     = "(" ws { ( atom | "+" ) ws } ")"  "()" is a unit axis; groups never nest;
//                                               "(a + b)" a concatenation (the actions check
//                                               that parts and "+" alternate)
//   atom      = ellipsis | number | name
//   ellipsis  = "..."                           exactly three dots
//   number    = digit { digit }                 1 .. 2^63-1 (checked by the action)
//   name      = ( letter | "_" ) { letter | digit | "_" }
//   A name, number or ellipsis ends at whitespace, "(", ")", ",", "-" or the end.
//
//   pack      = ws { ( "*" | name ) ws } EOF    einops' pack / unpack: "i j * k"
//   dims      = ws operand EOF                 a normalization's dims, its brackets blanked
//                                               first by parse_bracketed: "b h q [k]"
//
// Rules that only detect a mistake are named for the mistake and used as reject<Mistake>:
// at the first byte of the mistake it raises error_message<Mistake> (messages.hpp). So
// every failure has its own message and position, and a rule never backtracks over an
// action that already ran.
#include <tao/pegtl.hpp>

namespace einexpr::grammar {

namespace pegtl = tao::pegtl;

// ---- building blocks ---------------------------------------------------------------
struct blank : pegtl::one<' ', '\t', '\r', '\n'> {};  // one whitespace byte
struct ws : pegtl::star<blank> {};                     // whitespace, maybe none
struct arrow : pegtl::string<'-', '>'> {};             // "->" between inputs and output
struct comma : pegtl::one<','> {};                     // "," between einsum inputs
struct open_paren : pegtl::one<'('> {};                // starts a group or a unit axis
struct close_paren : pegtl::one<')'> {};               // ends a group or a unit axis

/// Raises Mistake's message at the first byte of Mistake; fails (consuming nothing) where
/// Mistake does not match.
template <typename Mistake>
struct reject : pegtl::seq<pegtl::at<Mistake>, pegtl::raise<Mistake>> {};

// ---- tokens ------------------------------------------------------------------------
struct ellipsis  // "...", exactly three dots
    : pegtl::seq<pegtl::string<'.', '.', '.'>, pegtl::not_at<pegtl::one<'.'>>> {};
struct number : pegtl::plus<pegtl::digit> {};  // an anonymous axis, by its length
struct name : pegtl::identifier {};            // an axis name
struct separated  // a name, number or ellipsis ends here
    : pegtl::not_at<pegtl::sor<pegtl::identifier_other, pegtl::one<'.'>>> {};
struct ellipsis_token : pegtl::seq<ellipsis, pegtl::must<separated>> {};  // "..." then a separator
struct number_token : pegtl::seq<number, pegtl::must<separated>> {};      // "3" then a separator
struct name_token : pegtl::seq<name, pegtl::must<separated>> {};          // "b" then a separator

// ---- mistakes (each used as reject<mistake>) -----------------------------------------
struct bad_dots : pegtl::one<'.'> {};  // a '.' that is not part of exactly "..."
struct digit_name : pegtl::seq<pegtl::plus<pegtl::digit>, pegtl::identifier_first> {};  // "2b"
struct unclosed_paren  // "(" with no ")" before the next "->" or the end
    : pegtl::seq<pegtl::one<'('>, pegtl::star<pegtl::not_at<arrow>, pegtl::not_one<')'>>,
                 pegtl::not_at<pegtl::one<')'>>> {};
struct nested_paren : pegtl::one<'('> {};    // "(" inside a group
struct stray_paren : pegtl::one<')'> {};     // ")" with no "(" before it
struct comma_in_group : pegtl::one<','> {};  // "," inside a group
struct lone_dash : pegtl::seq<pegtl::one<'-'>, pegtl::not_at<pegtl::one<'>'>>> {};  // "-" not "->"
struct non_ascii : pegtl::seq<pegtl::not_at<pegtl::print>, pegtl::any> {};  // control or >= 0x80
struct unexpected_char  // any other character, such as "#"
    : pegtl::seq<pegtl::not_at<pegtl::one<',', '-', ')'>>, pegtl::any> {};
struct second_arrow : pegtl::string<'-', '>'> {};                 // "->" in the output
struct output_comma : pegtl::one<','> {};                         // "," between outputs
struct plus : pegtl::one<'+'> {};                                 // "+" between concatenated parts
struct stray_plus : pegtl::one<'+'> {};                           // "+" outside parentheses

// ---- terms ---------------------------------------------------------------------------
struct atom  // one axis inside a group
    : pegtl::sor<ellipsis_token, reject<bad_dots>, reject<digit_name>, number_token, name_token,
                 reject<nested_paren>, reject<comma_in_group>, reject<lone_dash>,
                 reject<non_ascii>, reject<unexpected_char>> {};
struct group  // "(h d)", "(a + b)" or "()"; reject<unclosed_paren> runs first, so ")" is there
    : pegtl::seq<open_paren, ws, pegtl::star<pegtl::sor<plus, atom>, ws>, pegtl::must<close_paren>> {};
struct term  // one axis of an operand
    : pegtl::sor<ellipsis_token, reject<bad_dots>, reject<unclosed_paren>, group,
                 reject<digit_name>, number_token, name_token, reject<stray_paren>,
                 reject<stray_plus>, reject<lone_dash>, reject<non_ascii>, reject<unexpected_char>> {};

// ---- operands and the pattern ----------------------------------------------------------
struct operand : pegtl::star<term, ws> {};  // one input: its terms, maybe none
struct output : pegtl::star<term, ws> {};   // right of "->": its terms, maybe none
struct next_operand  // ", operand" (maybe empty: a 0-d operand)
    : pegtl::seq<comma, ws, operand> {};
struct inputs  // left of "->"
    : pegtl::seq<operand, pegtl::star<next_operand>> {};
struct next_output  // ", output": a split's further outputs
    : pegtl::seq<output_comma, ws, output> {};
struct outputs  // right of "->"
    : pegtl::seq<output, pegtl::star<next_output>> {};
struct output_end  // after the outputs: only the end
    : pegtl::sor<reject<second_arrow>, pegtl::eof> {};
struct pattern  // the whole pattern
    : pegtl::seq<ws, inputs, pegtl::must<arrow>, ws, outputs, pegtl::must<output_end>> {};

// ---- a normalization's dims ------------------------------------------------------------
struct dims_arrow : pegtl::string<'-', '>'> {};  // "->" in a normalization's pattern
struct dims_comma : pegtl::one<','> {};          // "," in a normalization's pattern
struct dims_end                                  // after the dims: only the end
    : pegtl::sor<reject<dims_arrow>, reject<dims_comma>, pegtl::eof> {};
struct dims : pegtl::seq<ws, operand, pegtl::must<dims_end>> {};  // the whole pattern

// ---- pack patterns ---------------------------------------------------------------------
struct pack_star : pegtl::one<'*'> {};                             // where packed axes go
struct pack_separated  // "*" or a name ends
    : pegtl::not_at<pegtl::sor<pegtl::identifier_other, pegtl::one<'*'>>> {};
struct pack_paren : pegtl::one<'(', ')'> {};                       // no groups in pack
struct pack_ellipsis : pegtl::one<'.'> {};                         // no "..." in pack
struct pack_number : pegtl::digit {};                              // no anonymous axes
struct pack_unexpected : pegtl::any {};                            // anything else
struct pack_item  // "*" or a name
    : pegtl::sor<pegtl::seq<pack_star, pegtl::must<pack_separated>>,
                 pegtl::seq<name, pegtl::must<pack_separated>>, reject<pack_paren>,
                 reject<pack_ellipsis>, reject<pack_number>, reject<non_ascii>,
                 reject<pack_unexpected>> {};
struct pack_end : pegtl::eof {};  // nothing after the last item
struct pack : pegtl::seq<ws, pegtl::star<pack_item, ws>, pegtl::must<pack_end>> {};  // all

}  // namespace einexpr::grammar
