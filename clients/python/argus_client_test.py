#!/usr/bin/env python3
"""Runs the Python example client against a real argus-server and worker:
submit a probe, watch it across a server restart, fetch the result, and
check the error for an unknown job."""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "browser"))
from argus_client import ArgusClient, ArgusError  # noqa: E402
from argus_procs import Cluster  # noqa: E402


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print("ok:", what)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--stubs", required=True)
    a = ap.parse_args()
    with Cluster(a.bin) as c:
        try:
            c.start_server(http=False)
            c.start_worker()
            c.wait_workers(1)
            # The command-line example, end to end.
            r = subprocess.run([sys.executable, os.path.join(HERE, "argus_client.py"), "--server", c.grpc,
                                "--stubs", a.stubs, "probe"], capture_output=True, text=True, timeout=60)
            check(r.returncode == 0, "argus_client.py probe exits 0: " + r.stderr[-500:])
            out = json.loads(r.stdout)
            check(out["state"] == "JOB_STATE_SUCCEEDED", "the probe job succeeded")
            check(out["result"]["tasks"][0]["result"]["devices"], "the result holds the worker inventory")

            client = ArgusClient(c.grpc, a.stubs)
            job = client.submit_probe()
            states = [client.pb.JobState.Name(ev.state) for ev in client.watch(job.id)]
            check(states and states[-1] == "JOB_STATE_SUCCEEDED", "watch streams to the end: %s" % states)
            got = client.get(job.id)
            check(got.id == job.id and json.loads(got.result_json)["tasks"], "get fetches the result")
            try:
                client.get("j-doesnotexist")
                check(False, "unknown job raises")
            except ArgusError as e:
                check("NOT_FOUND" in str(e), "unknown job: NOT_FOUND (%s)" % e)
            # The server goes away mid-watch: the watch reconnects and resumes.
            import signal
            import threading
            worker = c.procs[1]
            os.kill(worker.pid, signal.SIGSTOP)  # holds the job open
            job = client.submit_probe()
            seen = []
            errors = []

            def follow():
                try:
                    for ev in client.watch(job.id, reconnect_for=30):
                        seen.append(client.pb.JobState.Name(ev.state))
                except Exception as e:  # noqa: BLE001
                    errors.append(e)
            t = threading.Thread(target=follow)
            t.start()
            time.sleep(0.5)
            c.kill_server()
            time.sleep(0.5)
            c.start_server(http=False, listen=c.grpc)
            os.kill(worker.pid, signal.SIGCONT)
            t.join(60)
            check(not t.is_alive() and not errors, "watch survived the server restart: %s" % errors)
            check(seen and seen[-1] == "JOB_STATE_SUCCEEDED", "and saw the job finish: %s" % seen)
            r = subprocess.run([sys.executable, os.path.join(HERE, "argus_client.py"), "--server", c.grpc,
                                "--stubs", a.stubs, "get", "j-doesnotexist"], capture_output=True, text=True,
                               timeout=30)
            check(r.returncode == 4 and "NOT_FOUND" in r.stderr,
                  "CLI example: exit 4 for an unknown job (%d: %s)" % (r.returncode, r.stderr.strip()))
        except Exception:  # noqa: BLE001
            c.report_failure()
            return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
