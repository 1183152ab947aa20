#!/usr/bin/env bash
# Lists the project files whose code the first einsum call of a process runs (callgrind,
# collecting only inside einexpr::einsum and detail::einsum_refs), for lib/README.md's walk,
# and on stderr the instructions it runs. Needs valgrind.
#   scripts/first_call_walk.sh [BUILD_DIR]      (default build-nocuda/, a build without CUDA)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
build="${1:-build-nocuda}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/first.cpp" <<'CPP'
#include <einexpr/einexpr.hpp>
#include <iostream>
int main() {
  using namespace einexpr;
  const Tensor x = Tensor::randn({8, 16}, DType::f32, 1);
  const Tensor y = Tensor::randn({16, 4}, DType::f32, 2);
  std::cout << einsum(x, y, "b d, d k -> b k").numel() << '\n';
}
CPP
libs=("$build/lib/libeinexpr.a" "$build/codegen/libeinexpr_codegen.a" "$build/parser/libeinexpr_parser.a"
      "$build/runtime/libeinexpr_runtime.a")
blas=(-lopenblas)
extra=(-lsleef)  # codegen's vector math (libsleef-dev)
grep -q 'EINEXPR_BLAS:STRING=eigen' "$build/CMakeCache.txt" && blas=()
g++ -std=c++20 -g -O1 "$work/first.cpp" -I runtime/include -I parser/include -I codegen/include -I lib/include \
  -I "$build/generated" "${libs[@]}" -fopenmp "${blas[@]}" "${extra[@]}" -o "$work/first"
# einsum(x, y, pattern) is an inline template over detail::einsum_refs: collect inside either.
valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" --toggle-collect='einexpr::einsum*' \
  --toggle-collect='einexpr::detail::einsum_refs*' "$work/first" \
  >/dev/null 2>&1
(cd "$work" && callgrind_annotate --inclusive=yes --threshold=100 cg.out 2>/dev/null) | grep -o "$root/[^:]*" |
  sed "s|$root/||" | grep -v '^build' | sort -u
# The instructions collected (inside einexpr::einsum), on stderr.
(cd "$work" && callgrind_annotate cg.out 2>/dev/null) | grep -m1 'PROGRAM TOTALS' | sed 's/^/instructions in einsum: /' >&2
