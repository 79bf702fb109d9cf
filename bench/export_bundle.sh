#!/bin/bash
# Builds the H200 check of `argus export` (bench/export_bundle.py): the best Hopper GEMM
# (gemm_wgmma_tma_store 4096^3 and 1024^3), the ping-pong flash attention (B1 H4 S1024 D128) and the
# six-launch MoE pipeline (moe_wgmma T256 H2048 I256 E8 top-2), each exported by `argus export`
# from a tune job's result, with a C++ test program that uses only the exported argus_kernel.h.
# run.sh builds each test program on the device with its host compiler (a prebuilt one, linked
# here, where it has none), runs it and the exported launch_torch.py on the same random inputs and
# checks both against a torch reference (bench/export_check.py); the table is printed last.
# usage: bench/export_bundle.sh BUILD_DIR OUT_DIR [CASE,...]
#   then run(command="bash OUT_DIR/run.sh", carry=[OUT_DIR])
set -euo pipefail
build=$1
out=$2
cases=${3:-attn,gemm,gemm1k,moe}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out" && mkdir -p "$out"
python3 "$here/export_bundle.py" "$build/bin/argus" "$out" "$cases"
for c in ${cases//,/ }; do
  g++ -std=c++17 -O2 -Wall -Werror -I"$out/$c" -I/usr/local/cuda/include "$out/$c/driver.cc" \
    -o "$out/$c/drv.prebuilt" -L/usr/local/cuda/lib64/stubs -lcuda -static-libstdc++ -static-libgcc
done
cp "$here/export_check.py" "$out/"
cat > "$out/run.sh" <<SH
#!/bin/bash
# argus export's device check; the table last, the log in \$OUT/check.txt.
cd "\$(dirname "\$0")"
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
chmod +x "$out/run.sh"
du -sh "$out"
