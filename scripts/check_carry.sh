#!/usr/bin/env bash
# Checks, before any GPU time is spent, that what scripts/bench_cuda.sh --stage carries will
# start on the device tool's GPU machine (a bare image with the CUDA toolkit, PyTorch, cmake
# and ninja, none of Debian's libraries) and will travel (the tool's 64 MiB limit).
#
#   scripts/check_carry.sh libs CARRY BINARY...
#       every library `ldd BINARY` lists (the binary's NEEDED entries and theirs, as the
#       loader resolves them here) must be in CARRY/lib/ or CARRY/, or on the allow-list
#       below: what the GPU machine has. Exit 1 naming each other library and its binary.
#   scripts/check_carry.sh listing CARRY LABEL FILE
#       the same check on an ldd listing saved in FILE (LABEL names it in messages): the
#       logic without a binary, for tests/scripts.
#   scripts/check_carry.sh size [--limit BYTES] PATH...
#       the bytes the device tool sends: this checkout's tracked and untracked-not-ignored
#       files (`git ls-files --cached --others --exclude-standard`, each file's size; a
#       link's own size), an ignored shared/ folder (it travels too), and every file under
#       the carried PATHs (those not already counted). Exit 1 when the sum exceeds BYTES
#       (default 64 MiB = 67108864, the tool's limit). Run it in the checkout's root.
#
# The allow-list (DEVICE_CUDA_MAJOR, default 13, is the device machines' CUDA: nvcc 13.0,
# driver 580): the loader and the C and C++ runtimes (linux-vdso, ld-linux-x86-64, libc, libm,
# libdl, libpthread, librt, libstdc++, libgcc_s), GCC's OpenMP runtime libgomp (also carried
# by --stage, as a fallback), the driver's libcuda.so.1, and the toolkit's libcudart,
# libcublas and libcublasLt of that major version. Anything else (libsleef, libopenblas,
# libgfortran, libquadmath, ...) must be carried.
set -euo pipefail

me=scripts/check_carry.sh
major="${DEVICE_CUDA_MAJOR:-13}"
allowed=(
  linux-vdso.so.1 ld-linux-x86-64.so.2
  libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1
  libstdc++.so.6 libgcc_s.so.1 libgomp.so.1
  libcuda.so.1 "libcudart.so.$major" "libcublas.so.$major" "libcublasLt.so.$major"
)

usage() {
  echo "usage: $me libs CARRY BINARY... | listing CARRY LABEL FILE | size [--limit BYTES] PATH..." >&2
  exit 2
}

# The library names of an ldd listing on stdin, one a line: the first word of each line,
# without its directory (ld-linux is listed by path). ldd's notes for a static binary list
# nothing; lines starting with '#' are comments (in saved listings).
library_names() {
  awk '
    /^[ \t]*#/ || /not a dynamic executable|statically linked/ { next }
    NF > 0 { n = $1; sub(/.*\//, "", n); print n }'
}

is_allowed() {
  local name="$1" a
  for a in "${allowed[@]}"; do [ "$name" = "$a" ] && return 0; done
  return 1
}

# check_listing CARRY LABEL < listing: prints one line per library that is neither carried
# nor allowed; returns 1 if there was any.
check_listing() {
  local carry="$1" label="$2" name bad=0
  while read -r name; do
    if [ -e "$carry/lib/$name" ] || [ -e "$carry/$name" ]; then continue; fi
    if is_allowed "$name"; then continue; fi
    echo "$me: $label needs $name, which is neither in $carry/ nor on the GPU machine's allow-list (carry it, or build without it)" >&2
    bad=1
  done < <(library_names)
  return "$bad"
}

cmd="${1:-}"
shift || true
case "$cmd" in
  libs)
    (($# >= 2)) || usage
    carry="$1"
    shift
    status=0
    for binary in "$@"; do
      if [ ! -f "$binary" ]; then
        echo "$me: no $binary" >&2
        status=1
        continue
      fi
      # ldd exits 1 on a static binary ("not a dynamic executable"); its listing says so.
      listing="$(ldd "$binary" 2>&1 || true)"
      check_listing "$carry" "$binary" <<<"$listing" || status=1
    done
    if [ "$status" = 0 ]; then echo "$me: every library of $* is carried or on the allow-list"; fi
    exit "$status"
    ;;
  listing)
    (($# == 3)) || usage
    [ -f "$3" ] || { echo "$me: no $3" >&2; exit 2; }
    check_listing "$1" "$2" <"$3"
    echo "$me: every library of $2 is carried or on the allow-list"
    ;;
  size)
    limit=67108864
    if [ "${1:-}" = --limit ]; then
      (($# >= 2)) || usage
      limit="$2"
      shift 2
    fi
    git rev-parse --show-toplevel >/dev/null || exit 2
    # Files as git would send them; a deleted tracked file is listed but absent: skipped.
    tree="$(git ls-files -z --cached --others --exclude-standard |
      { xargs -0 -r stat -c %s -- 2>/dev/null || true; } | awk '{ s += $1 } END { print s + 0 }')"
    shared=0
    if [ -d shared ] && git check-ignore -q shared; then
      shared="$(find shared -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')"
    fi
    carried=0
    for path in "$@"; do
      [ -e "$path" ] || { echo "$me: no $path to carry" >&2; exit 1; }
      # Only what git does not already count (an ignored path, as carry is meant for).
      n="$(find "$path" -type f -print0 |
        { git check-ignore -z --stdin || true; } |
        { xargs -0 -r stat -c %s -- || true; } | awk '{ s += $1 } END { print s + 0 }')"
      carried=$((carried + n))
    done
    total=$((tree + shared + carried))
    mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
    echo "$me: the tree $(mib "$tree") ($tree bytes), shared/ $(mib "$shared"), carried $(mib "$carried") ($carried bytes): $(mib "$total") ($total bytes) of $(mib "$limit") ($limit bytes)"
    if ((total > limit)); then
      echo "$me: what would travel ($total bytes) exceeds the device tool's limit ($limit bytes): stage less, or ignore large untracked files" >&2
      exit 1
    fi
    ;;
  *) usage ;;
esac
