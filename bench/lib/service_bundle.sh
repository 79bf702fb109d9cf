#!/bin/bash
# Packs the whole service (argus, argus-server, argus-worker, argus-verifier,
# argus-candidate, the static argus-runner and its Python baselines) with the shared
# libraries they need beyond glibc (LLVM, Z3, gRPC, protobuf, Abseil, SQLite,
# spdlog, libstdc++ ...), the KB, the examples and the bench case scripts into one
# directory (< 64 MiB: the libraries travel xz-compressed), so that the real
# worker path — compile with LLVM on the GPU host, run under the watchdog, report
# to a real server — runs on a machine that has none of our Debian packages.
# Used by bench/planner.sh and bench/examples.sh --worker-path.
#
# usage: lib/service_bundle.sh BUILD_DIR OUT_DIR DEFAULT_SCRIPT
# then, on the GPU machine: bash OUT_DIR/run.sh [SCRIPT [ARGS]]
#   run.sh runs env.sh, which unpacks into /tmp/argus, sets PATH/ARGUS_KB_DIR/OUT
#   and runs SCRIPT (tune.sh or worker_path.sh, beside it; default DEFAULT_SCRIPT).
set -euo pipefail
build=$(cd "$1" && pwd)
out=$2
default_script=$3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
reuse_libs=$(mktemp)
if [ -f "$out/lib.tar.xz" ]; then cp "$out/lib.tar.xz" "$reuse_libs"; fi
rm -rf "$out" && mkdir -p "$out"
stage=$(mktemp -d)
trap 'rm -rf "$stage" "$reuse_libs"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
bins=(argus argus-server argus-worker argus-verifier argus-candidate argus-runner)
for b in "${bins[@]}"; do
  cp "$build/bin/$b" "$stage/bin/"
  strip --strip-unneeded "$stage/bin/$b" 2>/dev/null || true
done
cp "$build/bin/"*.py "$stage/bin/"
# The shared-library closure, less glibc's own libraries (the host's glibc is
# newer than Debian 12's and backward compatible; mixing two would not work).
for b in "${bins[@]}"; do ldd "$build/bin/$b"; done |
  awk '/=> \// {print $3}' | sort -u |
  grep -Ev '/(libc|libm|libpthread|libdl|librt|libresolv|libutil|ld-linux-x86-64)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
# DT_RPATH (not RUNPATH: it also serves the libraries' own dependencies) points
# the binaries at lib/, so no LD_LIBRARY_PATH leaks into the children they start
# (the runner's PyTorch baselines must load the host's own libstdc++ and zlib).
for b in "${bins[@]}"; do
  [ "$b" = argus-runner ] && continue  # glibc only, nothing to find
  patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$stage/bin/$b"
done
for l in "$stage/lib/"*; do patchelf --force-rpath --set-rpath '$ORIGIN' "$l"; done
cp -r "$root/kb" "$stage/kb"
rm -f "$stage/kb/"*.cc "$stage/kb/"*.h "$stage/kb/CMakeLists.txt"
cp -r "$root/examples" "$stage/examples"
mkdir -p "$stage/bench/lib"
cp "$root/bench/lib/"*.py "$stage/bench/lib/"
cp -r "$root/bench/kernels" "$root/bench/bad_kernels.py" "$stage/bench/"
# Two archives: the libraries change only with the Debian packages, so a
# rebuild with ARGUS_REUSE_LIBS=1 keeps lib.tar.xz (xz of ~45 MB of libraries
# takes minutes on 2 cores) and packs only the binaries and data again.
if [ "${ARGUS_REUSE_LIBS:-0}" = 1 ] && [ -f "$reuse_libs" ]; then
  cp "$reuse_libs" "$out/lib.tar.xz"
else
  tar -C "$stage" -cf - lib | xz -T2 -6 > "$out/lib.tar.xz"
fi
tar -C "$stage" --exclude=./lib -cf - . | xz -T2 -6 > "$out/argus.tar.xz"
cp "$here/service_env.sh" "$out/env.sh"
cp "$here/tune.sh" "$here/worker_path.sh" "$out/"
cat > "$out/run.sh" <<SH
#!/bin/bash
# Runs SCRIPT (default $default_script) of this bundle in its environment (env.sh); results in
# \$OUT (default /tmp/argus-out). usage: bash run.sh [SCRIPT [ARGS]]
exec bash "\$(dirname "\$0")/env.sh" "\${1:-$default_script}" "\${@:2}"
SH
