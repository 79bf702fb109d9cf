#!/bin/bash
# What the case bundles for the device (bench/{hopper,attention,moe}_bundle.sh) share, sourced by
# them: a fresh OUT_DIR holding the stripped static argus-runner (and the helper files it needs
# beside it), then one directory per case of a payload script, each with the cubin + spec.json
# made by the worker's own PrepareGpuRun (argus-candidate --prepare). Nothing is built on the
# device.

# bundle_start BUILD_DIR OUT_DIR [FILE_IN_BUILD_BIN...]: a fresh OUT_DIR with the runner and the
# named files of BUILD_DIR/bin.
bundle_start() {
  local build=$1 out=$2 f
  shift 2
  rm -rf "$out" && mkdir -p "$out"
  cp "$build/bin/argus-runner" "$out/"
  strip "$out/argus-runner" || true
  for f in "$@"; do cp "$build/bin/$f" "$out/"; done
}

# bundle_prepare BUILD_DIR OUT_DIR PAYLOAD_SCRIPT [CASE,CASE...]: the script writes one payload per
# case into OUT_DIR/payloads (left there for the caller, which removes it); each is prepared into
# OUT_DIR/CASE.
bundle_prepare() {
  local build=$1 out=$2 script=$3 only=${4:-} p
  # shellcheck disable=SC2086
  python3 "$script" "$out/payloads" $only
  for p in "$out/payloads"/*.json; do
    "$build/bin/argus-candidate" --payload "$p" --backend gpu --prepare \
      "$out/$(basename "$p" .json)" >/dev/null
  done
}
