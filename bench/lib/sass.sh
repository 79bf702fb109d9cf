#!/bin/bash
# SASS of measured cubins (on the GPU machine, after run.sh): the full text of each into
# $OUT/sass-CASE.txt and a count of the ops that show the wgmma overlap and the ping-pong.
# usage: bash sass.sh CASE...   (case directories beside this script)
cd "$(dirname "$0")" || exit 1
export OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
for c in "$@"; do
  f=$(ls "$c"/*.cubin) || continue
  cuobjdump -sass "$f" > "$OUT/sass-$c.txt" 2>&1
  n() { grep -c "$1" "$OUT/sass-$c.txt"; }
  printf '%-22s HGMMA %3s  WG.ARRIVE %3s  WG.DEPBAR %3s  BAR.SYNC %3s  BAR.ARV %3s  MUFU.EX2 %3s\n' \
    "$c" "$(n HGMMA)" "$(n WARPGROUP.ARRIVE)" "$(n WARPGROUP.DEPBAR)" "$(n BAR.SYNC)" \
    "$(n BAR.ARV)" "$(n MUFU.EX2)"
done
