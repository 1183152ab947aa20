#!/usr/bin/env bash
# scripts/check_carry.sh, which scripts/bench_cuda.sh --stage runs before any GPU time is
# spent: its library check on saved ldd listings (data/) and on real binaries, and its size
# measurement on a scratch git repository with files of known sizes.
#   tests/scripts/test_check_carry.sh ROOT [OPENBLAS_BINARY]
# ROOT: the source tree; OPENBLAS_BINARY: a binary of this build that links OpenBLAS
# (einexpr's CLI where EINEXPR_BLAS=openblas), which the check must reject.
set -uo pipefail
root="$1"
openblas_binary="${2:-}"
check="$root/scripts/check_carry.sh"
data="$root/tests/scripts/data"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failures=0

# expect STATUS PATTERN DESCRIPTION -- COMMAND...: COMMAND exits STATUS and its output (stdout
# and stderr) matches the extended regex PATTERN ('' to skip that part).
expect() {
  local want="$1" pattern="$2" what="$3" out status
  shift 4
  out="$("$@" 2>&1)"
  status=$?
  if [ "$status" != "$want" ]; then
    echo "FAIL: $what: exit status $status, expected $want; output:"; echo "$out"
    failures=$((failures + 1))
  elif [ -n "$pattern" ] && ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL: $what: output does not match /$pattern/:"; echo "$out"
    failures=$((failures + 1))
  else
    echo "ok: $what"
  fi
}
# expect_not PATTERN DESCRIPTION -- COMMAND...: the output does not match PATTERN.
expect_not() {
  local pattern="$1" what="$2" out
  shift 3
  out="$("$@" 2>&1)"
  if grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL: $what: output matches /$pattern/:"; echo "$out"
    failures=$((failures + 1))
  else
    echo "ok: $what"
  fi
}

empty="$scratch/empty-carry"
carry="$scratch/carry"
mkdir -p "$empty" "$carry/lib"
: >"$carry/lib/libsleef.so.3"
: >"$carry/lib/libgomp.so.1"

# ---- listings ----
expect 1 'openblas-build needs libopenblas\.so\.0' "a listing with OpenBLAS is rejected, naming it" -- \
  "$check" listing "$carry" openblas-build "$data/ldd_openblas.txt"
for lib in libgfortran.so.5 libquadmath.so.0; do
  expect 1 "needs $lib" "... and naming OpenBLAS's $lib" -- \
    "$check" listing "$carry" openblas-build "$data/ldd_openblas.txt"
done
expect_not 'needs (libsleef|libcudart|libcublas|libc\.so|ld-linux|linux-vdso)' \
  "... but not the carried or allowed libraries" -- \
  "$check" listing "$carry" openblas-build "$data/ldd_openblas.txt"
expect 0 'every library of staged is carried or on the allow-list' \
  "the staged binaries' listing is accepted with Sleef carried" -- \
  "$check" listing "$carry" staged "$data/ldd_staged.txt"
expect 1 'staged needs libsleef\.so\.3' "the same listing without Sleef in the carry is rejected" -- \
  "$check" listing "$empty" staged "$data/ldd_staged.txt"
expect 1 'needs libopenblas\.so\.0' "a library 'not found' here is checked too" -- \
  "$check" listing "$carry" not-found "$data/ldd_not_found.txt"
expect_not 'needs libsleef' "... and passes when carried" -- \
  "$check" listing "$carry" not-found "$data/ldd_not_found.txt"
expect 0 '' "a static binary's listing has nothing to check" -- \
  "$check" listing "$empty" static "$data/ldd_static.txt"
expect 1 'needs libcudart\.so\.13' \
  "CUDA 13's runtime is rejected where the device has CUDA 12 (DEVICE_CUDA_MAJOR)" -- \
  env DEVICE_CUDA_MAJOR=12 "$check" listing "$carry" staged "$data/ldd_staged.txt"
expect 2 'usage' "a bad call is an error" -- "$check" listing "$carry"

# ---- real binaries, through ldd ----
true_binary="$(command -v true)"
case "$true_binary" in /*) ;; *) true_binary=/bin/true ;; esac
expect 0 'every library of' "$true_binary (libc only) is accepted" -- "$check" libs "$empty" "$true_binary"
expect 1 "no $scratch/missing" "a missing binary is an error" -- "$check" libs "$empty" "$scratch/missing"
if [ -n "$openblas_binary" ]; then
  expect 1 "$openblas_binary needs libopenblas\.so\.0" "$openblas_binary (OpenBLAS build) is rejected" -- \
    "$check" libs "$carry" "$openblas_binary"
fi

# ---- size: a scratch repository with files of known sizes ----
repo="$scratch/repo"
mkdir -p "$repo/big" "$repo/.device-carry/lib"
(
  cd "$repo" || exit 1
  git init -q .
  printf '/ignored.bin\n/.device-carry/\n' >.gitignore          # 29 bytes
  head -c 2000 /dev/zero >tracked.bin
  git add .gitignore tracked.bin
  head -c 1000 /dev/zero >big/untracked.bin                      # untracked, not ignored: sent
  head -c 5000 /dev/zero >ignored.bin                            # ignored: not sent
  head -c 3000 /dev/zero >.device-carry/lib/libx.so              # carried
  head -c 500 /dev/zero >.device-carry/bench
)
in_repo() { (cd "$repo" && "$@"); }
tree=$((29 + 2000 + 1000))
total=$((tree + 3500))
expect 0 "the tree 0\.0 MiB \($tree bytes\).*carried 0\.0 MiB \(3500 bytes\).*\($total bytes\) of" \
  "the tree (tracked + untracked-not-ignored) and the carry are measured to the byte" -- \
  in_repo "$check" size .device-carry
expect 0 "\($total bytes\) of 0\.0 MiB \($total bytes\)" "a total equal to the limit passes" -- \
  in_repo "$check" size --limit "$total" .device-carry
expect 1 "exceeds the device tool's limit \($((total - 1)) bytes\)" "one byte over the limit fails" -- \
  in_repo "$check" size --limit "$((total - 1))" .device-carry
expect 1 "no nothing-here to carry" "a carried path that does not exist fails" -- \
  in_repo "$check" size nothing-here

if ((failures)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "every check passed"
