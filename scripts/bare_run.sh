#!/usr/bin/env bash
# Runs a command where the system's shared libraries are only those the device tool's GPU
# machine has (scripts/check_carry.sh's allow-list): it proves that a staged binary starts
# from its carry alone, which ldd here cannot, since this machine has Debian's libraries.
#
#   scripts/bare_run.sh COMMAND [ARGS...]
#
# In a private mount namespace (unshare -m: root or CAP_SYS_ADMIN; nothing outside the
# command sees it, and it ends with the command), the folder of Debian's libraries
# (/usr/lib/x86_64-linux-gnu, also /lib/...) is replaced by a tmpfs holding only the
# allow-listed C and C++ runtime (ld-linux, libc, libm, libdl, libpthread, librt, libstdc++,
# libgcc_s; not libgomp: the carry has it), and the CUDA toolkit's library folder by one
# holding only libcudart, libcublas and libcublasLt. libsleef, libopenblas, libgfortran and
# the rest are then nowhere; /etc/ld.so.cache still names them, and the loader, finding
# them absent, goes on to the next folder. The command itself must need nothing else (run
# the binary directly, not through a shell script). Exit 2 where unshare is not allowed.
set -euo pipefail
(($#)) || { echo "usage: scripts/bare_run.sh COMMAND [ARGS...]" >&2; exit 2; }
if ! unshare -m --propagation private true 2>/dev/null; then
  echo "scripts/bare_run.sh: unshare -m is not allowed here (needs root or CAP_SYS_ADMIN)" >&2
  exit 2
fi
major="${DEVICE_CUDA_MAJOR:-13}"
cuda_lib="$(readlink -f "${CUDA_LIB_DIR:-/usr/local/cuda/lib}")"
system_libs="ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 libstdc++.so.6 libgcc_s.so.1"
cuda_libs="libcudart.so.$major libcublas.so.$major libcublasLt.so.$major"
side="$(mktemp -d)"
trap 'rmdir "$side"/* "$side" 2>/dev/null || true' EXIT
mkdir "$side/sys" "$side/cuda"
# Inside the namespace, once the tmpfs hides the libraries, every further tool runs through
# the real loader and libraries, reached through a bind mount of the original folder.
# shellcheck disable=SC2016 # expanded by the inner bash
unshare -m --propagation private bash -c '
  set -euo pipefail
  side="$1" cuda_lib="$2" system_libs="$3" cuda_libs="$4"
  shift 4
  sys=/usr/lib/x86_64-linux-gnu
  mount --bind "$sys" "$side/sys"
  mount --bind "$cuda_lib" "$side/cuda"
  tool() { "$side/sys/ld-linux-x86-64.so.2" --library-path "$side/sys" "$@"; }
  tool /usr/bin/mount -t tmpfs bare "$sys"
  for l in $system_libs; do
    tool /usr/bin/touch "$sys/$l"
    tool /usr/bin/mount --bind "$side/sys/$l" "$sys/$l"
  done
  tool /usr/bin/mount -t tmpfs bare "$cuda_lib"
  for l in $cuda_libs; do
    tool /usr/bin/touch "$cuda_lib/$l"
    tool /usr/bin/mount --bind "$side/cuda/$l" "$cuda_lib/$l"
  done
  exec "$@"
' bare_run "$side" "$cuda_lib" "$system_libs" "$cuda_libs" "$@"
