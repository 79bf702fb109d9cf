#!/bin/bash
# One device call for a session's closing measurements: the tune jobs of
# bench/device_tune.sh (issue 6.7), then every example through the worker's
# own path (bench/device_worker_path.sh). Runs inside the service bundle:
#   run(command="bash .device/svc/env.sh device_final.sh", carry=[".device/svc"])
here=$(cd "$(dirname "$0")" && pwd)
# Scripts and payload lists newer than the bundle's copies win.
for f in make_payloads.py; do [ -f "$here/$f" ] && cp "$here/$f" "$ARGUS_HOME/bench/"; done
TUNE_DEADLINE_S=${TUNE_DEADLINE_S:-150} bash "$here/device_tune.sh"
bash "$here/device_worker_path.sh"
