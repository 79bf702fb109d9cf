#!/bin/bash
# Unpacks the service bundle (lib/service_bundle.sh) into /tmp/argus (once per
# machine), sets up its environment and runs the bundle script named first
# (with bash), passing the rest of the arguments. Runs on the GPU host. The
# binaries find their libraries through their RPATH ($ORIGIN/../lib).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export ARGUS_HOME=/tmp/argus
if [ ! -x "$ARGUS_HOME/bin/argus" ]; then
  mkdir -p "$ARGUS_HOME"
  xz -dc "$here/lib.tar.xz" | tar -C "$ARGUS_HOME" -xf -
  xz -dc "$here/argus.tar.xz" | tar -C "$ARGUS_HOME" -xf -
fi
export PATH="$ARGUS_HOME/bin:/usr/local/cuda/bin:$PATH"
export ARGUS_KB_DIR="$ARGUS_HOME/kb"
export OUT=${OUT:-/tmp/argus-out}
mkdir -p "$OUT"
script=$1
shift
case "$script" in
  /*) ;;
  *) [ -f "$here/$script" ] && script="$here/$script" || script="$ARGUS_HOME/$script" ;;
esac
exec bash "$script" "$@"
