// The .npy header: a recursive-descent parser for the Python literals a header may hold
// (a dict of strings, True / False / None, integers, tuples and lists, nested at most 32
// deep), the descr table, and numpy's header layout for writing.
#include "npy_header.hpp"

#include <bit>
#include <cstdint>
#include <cstdio>
#include <tuple>
#include <vector>

#include "einexpr/runtime/error.hpp"

namespace einexpr::npy {

namespace {

// One Python literal.
struct Value {
  enum class Kind { string, boolean, none, integer, tuple, list } kind = Kind::none;
  std::string text;           // a string's contents, or an integer's digits (with its sign)
  bool flag = false;          // a boolean's value
  std::vector<Value> items;   // a tuple's or a list's elements
};

class Parser {
 public:
  Parser(std::string_view text, const std::string& name) : s_(text), name_(name) {}

  // dict := '{' [entry (',' entry)* [',']] '}' ; entry := string ':' value
  std::vector<std::pair<std::string, Value>> dict() {
    skip_space();
    expect('{', "the header must be a dict, starting with '{'");
    std::vector<std::pair<std::string, Value>> entries;
    skip_space();
    while (peek() != '}') {
      if (peek() != '\'' && peek() != '"') fail("expected a quoted key or '}'");
      std::string key = string();
      skip_space();
      expect(':', "expected ':' after the key " + quoted(key));
      entries.emplace_back(std::move(key), value(0));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != '}') {
        fail("expected ',' or '}' after the value of " + quoted(entries.back().first));
      }
    }
    ++pos_;
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the dict");
    return entries;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(name_ + ": bad .npy header at character " + std::to_string(pos_) + ": " + what +
                " (the header is " + quoted(s_, '"') + ")");
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  void expect(char c, const std::string& what) {
    if (peek() != c || pos_ >= s_.size()) fail(what);
    ++pos_;
  }

  Value value(int depth) {
    if (depth > 32) fail("values nested more than 32 deep");
    skip_space();
    const char c = peek();
    if (c == '\'' || c == '"') return Value{Value::Kind::string, string(), false, {}};
    if (c == '(' || c == '[') return sequence(depth);
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) return integer();
    for (auto [word, kind, flag] : {std::tuple{"True", Value::Kind::boolean, true},
                                    std::tuple{"False", Value::Kind::boolean, false},
                                    std::tuple{"None", Value::Kind::none, false}}) {
      const std::string_view w(word);
      if (s_.substr(pos_, w.size()) == w && !is_name_char(pos_ + w.size())) {
        pos_ += w.size();
        return Value{kind, {}, flag, {}};
      }
    }
    if (c == '{') fail("nested dicts are not supported");
    fail(pos_ >= s_.size() ? "the header ends where a value should be" : "expected a value");
  }

  bool is_name_char(std::size_t i) const {
    if (i >= s_.size()) return false;
    const char c = s_[i];
    return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }

  std::string string() {
    const char quote = s_[pos_++];
    const std::size_t begin = pos_;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\') fail("escape sequences in strings are not supported");
      if (s_[pos_] == '\n') fail("a string runs past the end of its line");
      ++pos_;
    }
    if (pos_ >= s_.size()) fail("a string is not closed");
    return std::string(s_.substr(begin, pos_++ - begin));
  }

  Value integer() {
    Value v{Value::Kind::integer, {}, false, {}};
    if (peek() == '-' || peek() == '+') {
      if (peek() == '-') v.text += '-';
      ++pos_;
      skip_space();
    }
    const std::size_t begin = pos_;
    while (peek() >= '0' && peek() <= '9' && pos_ < s_.size()) ++pos_;
    if (pos_ == begin) fail("expected digits");
    if (s_[begin] == '0' && pos_ - begin > 1) fail("an integer with leading zeros is not Python");
    if (is_name_char(pos_) || peek() == '.') fail("expected an integer");
    v.text += s_.substr(begin, pos_ - begin);
    return v;
  }

  // '(' ')' | '(' value ',' ')' | '(' value (',' value)+ [','] ')' ; lists alike with '[' ']'.
  // A parenthesized single value without a comma is that value, as in Python.
  Value sequence(int depth) {
    const char open = s_[pos_++], close = open == '(' ? ')' : ']';
    Value v{open == '(' ? Value::Kind::tuple : Value::Kind::list, {}, false, {}};
    bool comma = false;
    skip_space();
    while (peek() != close) {
      v.items.push_back(value(depth + 1));
      skip_space();
      if (peek() == ',') {
        comma = true;
        ++pos_;
        skip_space();
      } else if (peek() != close) {
        fail(std::string("expected ',' or '") + close + "'");
      }
    }
    ++pos_;
    if (open == '(' && v.items.size() == 1 && !comma) return v.items[0];
    return v;
  }

  std::string_view s_;
  const std::string& name_;
  std::size_t pos_ = 0;
};

std::string shape_repr(const Shape& shape) {  // Python's repr of the tuple
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

Shape shape_of(const Value& v, const std::string& name) {
  if (v.kind != Value::Kind::tuple)
    throw Error(name + ": 'shape' in the .npy header must be a tuple of integers");
  Shape shape;
  for (const Value& item : v.items) {
    if (item.kind != Value::Kind::integer)
      throw Error(name + ": 'shape' in the .npy header must be a tuple of integers");
    if (item.text[0] == '-' && item.text != "-0")
      throw ShapeError(name + ": the .npy header's shape has a negative length " + item.text);
    const std::string digits = item.text[0] == '-' ? item.text.substr(1) : item.text;
    std::int64_t n = 0;
    for (char c : digits)
      if (__builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, c - '0', &n))
        throw ShapeError(name + ": the .npy header's shape has a length " + digits + " beyond 64 bits");
    shape.push_back(n);
  }
  return shape;
}

}  // namespace

std::string quoted(std::string_view s, char quote, std::size_t limit) {
  std::string out(1, quote);
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i == limit) return out + quote + "...";
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == static_cast<unsigned char>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + quote;
}

Header parse_header(std::string_view text, const std::string& name) {
  Parser parser(text, name);
  Header h;
  bool seen[3] = {false, false, false};
  const char* keys[3] = {"descr", "fortran_order", "shape"};
  for (auto& [key, value] : parser.dict()) {
    int k = 0;
    while (k < 3 && key != keys[k]) ++k;
    if (k == 3)
      throw Error(name + ": the .npy header has the unexpected key " + quoted(key) +
                  " (expected exactly 'descr', 'fortran_order' and 'shape')");
    if (seen[k]) throw Error(name + ": the .npy header repeats the key " + quoted(key));
    seen[k] = true;
    if (k == 0) {
      if (value.kind != Value::Kind::string)
        throw DTypeError(name + ": 'descr' in the .npy header must be a string "
                         "(structured and subarray dtypes are not supported)");
      h.descr = value.text;
    } else if (k == 1) {
      if (value.kind != Value::Kind::boolean)
        throw Error(name + ": 'fortran_order' in the .npy header must be True or False");
      h.fortran_order = value.flag;
    } else {
      h.shape = shape_of(value, name);
    }
  }
  for (int k = 0; k < 3; ++k)
    if (!seen[k]) throw Error(name + ": the .npy header lacks the key '" + keys[k] + "'");
  return h;
}

Descr parse_descr(const std::string& descr, const NpyReadOptions& options, const std::string& name) {
  // ml_dtypes' names, as str(dtype) gives them (np.save itself writes '<V2' and '|V1').
  if (descr == "bfloat16") return {DType::bf16, false};
  if (descr == "float8_e4m3fn") return {DType::f8_e4m3, false};
  if (descr == "float8_e5m2") return {DType::f8_e5m2, false};
  const bool little_host = std::endian::native == std::endian::little;
  char order = '=';
  std::string code = descr;
  if (!code.empty() && (code[0] == '<' || code[0] == '>' || code[0] == '|' || code[0] == '=')) {
    order = code[0];
    code = code.substr(1);
  }
  const bool swap = (order == '<' && !little_host) || (order == '>' && little_host);
  struct Entry { const char* code; DType dtype; };
  static constexpr Entry table[] = {
      {"f8", DType::f64}, {"f4", DType::f32}, {"f2", DType::f16}, {"i8", DType::i64},
      {"i4", DType::i32}, {"b1", DType::boolean}, {"?", DType::boolean},
  };
  for (const Entry& e : table)
    if (code == e.code) return {e.dtype, swap && element_size(e.dtype) > 1};
  if (code == "u2" && options.u2_as_bf16) return {DType::bf16, swap};
  if (descr == "<V2") return {DType::bf16, false};  // ml_dtypes' bfloat16 as np.save writes it
  if (code == "u2")
    throw DTypeError(name + ": descr " + quoted(descr) + " is uint16, which einexpr does not have; set "
                     "NpyReadOptions::u2_as_bf16 to read it as bf16 bit patterns");
  if (code == "V1" || code == "f1")
    throw DTypeError(name + ": descr " + quoted(descr) + " is how np.save writes ml_dtypes' fp8 formats, "
                     "which cannot tell float8_e4m3fn from float8_e5m2; write the descr as 'float8_e4m3fn' "
                     "or 'float8_e5m2', or save the data as f16");
  throw DTypeError(name + ": unsupported dtype descr " + quoted(descr) +
                   " (einexpr reads <f8 <f4 <f2 <i8 <i4 |b1 in either byte order, bf16 as '<V2' or "
                   "'bfloat16', 'float8_e4m3fn', 'float8_e5m2', and <u2 as bf16 with "
                   "NpyReadOptions::u2_as_bf16)");
}

std::string descr_for(DType dtype, const NpyWriteOptions& options) {
  switch (dtype) {
    case DType::f64: return "<f8";
    case DType::f32: return "<f4";
    case DType::f16: return "<f2";
    case DType::bf16: return options.bf16_as_u2 ? "<u2" : "<V2";
    case DType::i64: return "<i8";
    case DType::i32: return "<i4";
    case DType::boolean: return "|b1";
    case DType::f8_e4m3:
    case DType::f8_e5m2: break;
  }
  throw DTypeError(std::string(name(dtype)) + " cannot be stored unambiguously in a .npy file: ml_dtypes "
                   "writes every fp8 format as a 1-byte void ('|V1'), so no reader can tell E4M3 from "
                   "E5M2; convert it first, e.g. .to(DType::f16), which holds every fp8 value exactly");
}

std::string header_bytes(const std::string& descr, bool fortran_order, const Shape& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran_order ? "True" : "False") +
                     ", 'shape': " + shape_repr(shape) + ", }";
  // numpy's spare room to grow the first (C) or last (Fortran) axis in place.
  constexpr std::size_t growth_axis_max_digits = 21;
  if (!shape.empty())
    dict += std::string(growth_axis_max_digits - std::to_string(fortran_order ? shape.back() : shape.front()).size(), ' ');
  // numpy's _wrap_header: pad magic (8) + length (2 or 4) + dict + '\n' to a multiple of 64,
  // with 64 - (n % 64) spaces (a whole 64 when n is already a multiple).
  const std::size_t hlen = dict.size() + 1;
  std::size_t prefix = 10;
  std::size_t pad = 64 - (prefix + hlen) % 64;
  const bool v2 = hlen + pad > 65535;
  if (v2) {
    prefix = 12;
    pad = 64 - (prefix + hlen) % 64;
  }
  const std::size_t len = hlen + pad;
  std::string out = "\x93NUMPY";
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  for (std::size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((len >> (8 * i)) & 0xFF);
  return out + dict + std::string(pad, ' ') + '\n';
}

}  // namespace einexpr::npy
