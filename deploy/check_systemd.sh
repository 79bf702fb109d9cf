#!/usr/bin/env bash
# systemd-analyze verify of deploy/systemd/*, with ExecStart pointed at the
# build's binaries (argument 1: the build's bin/). Any warning fails the check.
set -euo pipefail
bin=${1:?usage: check_systemd.sh BUILD_BIN_DIR}
if ! command -v systemd-analyze >/dev/null; then
  echo "SKIPPED: systemd-analyze is not installed (Debian package systemd)"
  exit 0
fi
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for u in "$here"/systemd/*.service; do
  name=$(basename "$u")
  sed_args=()
  for prog in argus-server argus-verifier argus-worker; do
    grep -q "/usr/local/bin/$prog" "$u" || continue
    target="$bin/$prog"
    if [ ! -x "$target" ]; then
      echo "note: $prog not built here; $name checked with /bin/true in its place"
      target=/bin/true
    fi
    sed_args+=(-e "s|/usr/local/bin/$prog|$target|g")
  done
  sed "${sed_args[@]}" "$u" >"$tmp/$name"
done
cp "$tmp/argus-worker@.service" "$tmp/argus-worker@0.service"
cp "$tmp/argus-worker@.service" "$tmp/argus-worker@7.service"
units=("$tmp/argus-server.service" "$tmp/argus-verifier.service" "$tmp/argus-worker@0.service"
       "$tmp/argus-worker@7.service")
out=$(cd "$tmp" && systemd-analyze verify "${units[@]}" 2>&1) && rc=0 || rc=$?
if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
  echo "systemd-analyze verify failed (rc $rc):"
  echo "$out"
  exit 1
fi
echo "systemd-analyze verify: ${#units[@]} units clean (argus-worker@ as instances 0 and 7)"
