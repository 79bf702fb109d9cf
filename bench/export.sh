#!/bin/bash
# Export suite: whether what `argus export` writes runs outside Argus, and how fast. Builds the
# GPU check (lib/export_bundle.py): the best Hopper GEMM
# (gemm_wgmma_tma_store 4096^3 and 1024^3), the ping-pong flash attention (B1 H4 S1024 D128) and the
# six-launch MoE pipeline (moe_wgmma T256 H2048 I256 E8 top-2), each exported by `argus export`
# from a tune job's result, with a C++ test program that uses only the exported argus_kernel.h.
# run.sh builds each test program on the device with its host compiler (a prebuilt one, linked
# here, where it has none), runs it and the exported launch_torch.py on the same random inputs and
# checks both against a torch reference (lib/export_check.py); the table is printed last.
usage="usage: bench/export.sh [-b BUILD_DIR] [-o OUT_DIR] [CASE,...]   (default attn,gemm,gemm1k,moe)
  then on the GPU machine: bash OUT_DIR/run.sh"
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"
bench_options export "$usage" "$@"
need_binaries argus
cases=${args[0]:-attn,gemm,gemm1k,moe}
rm -rf "$out" && mkdir -p "$out"
python3 "$BENCH_LIB/export_bundle.py" "$build/bin/argus" "$out" "$cases"
for c in ${cases//,/ }; do
  g++ -std=c++17 -O2 -Wall -Werror -I"$out/$c" -I/usr/local/cuda/include "$out/$c/driver.cc" \
    -o "$out/$c/drv.prebuilt" -L/usr/local/cuda/lib64/stubs -lcuda -static-libstdc++ -static-libgcc
done
cp "$BENCH_LIB/export_check.py" "$out/"
cat > "$out/run.sh" <<SH
#!/bin/bash
# argus export's check on the GPU machine; the table last, the log in \$OUT/check.txt
# (OUT defaults to out/ here).
cd "\$(dirname "\$0")"
export OUT=\${OUT:-\$PWD/out}
mkdir -p "\$OUT"
export PYTHONUNBUFFERED=1
cases="${cases//,/ }"
SH
cat >> "$out/run.sh" <<'SH'
cxx=$(command -v g++ || command -v c++ || true)
cuda=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")
echo "host compiler: ${cxx:-none}; nvcc: $(command -v nvcc || echo none); CUDA: $cuda"
nvidia-smi -L
for c in $cases; do
  if [ -n "$cxx" ] && $cxx -std=c++17 -O2 -Wall -I"$c" -I"$cuda/include" -I"$cuda/targets/x86_64-linux/include" "$c/driver.cc" -o "$c/drv" \
      -L"$cuda/lib64/stubs" -L"$cuda/targets/x86_64-linux/lib/stubs" -lcuda > "$c/build.log" 2>&1; then
    echo "$c: test program built here against the exported argus_kernel.h with $cxx"
  else
    echo "$c: no build here ($(tail -c 400 "$c/build.log" 2>/dev/null)); the prebuilt test program"
    cp "$c/drv.prebuilt" "$c/drv"
  fi
done
set -o pipefail
python3 export_check.py . $cases 2>&1 | tee "$OUT/check.txt"
SH
bundle_finish
