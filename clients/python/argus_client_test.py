#!/usr/bin/env python3
"""Installs clients/python with pip into a fresh virtual environment (over
Debian's python3-grpcio) and drives a real argus-server and interpreter
worker through the installed library: probe, tune, watch (across a server
restart), result, list, batch, cancel, export, tokens, and its command line."""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
# The source package sits beside this file: keep it off the path so that only the
# installed package can be imported.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
sys.path.insert(0, os.path.join(ROOT, "tests", "browser"))
from argus_procs import Cluster, check  # noqa: E402

TOKEN = "c" * 32
WORKER_TOKEN = "w" * 32


def install(venv_root):
    """pip install of a copy of clients/python (so the build leaves the checkout clean)."""
    venv = os.path.join(venv_root, "venv")
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv], check=True)
    pkg = os.path.join(venv_root, "pkg")
    shutil.copytree(HERE, pkg, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    env = dict(os.environ, ARGUS_PROTO_DIR=os.path.abspath(os.path.join(ROOT, "proto")))
    r = subprocess.run([os.path.join(venv, "bin", "pip"), "install", "--no-build-isolation", "--no-index",
                        pkg], capture_output=True, text=True, env=env)
    check(r.returncode == 0, "pip install clients/python: " + (r.stdout + r.stderr)[-2000:])
    return venv


def library_checks(c, argus):
    import argus_client
    from argus_client import ArgusError, Client
    check("site-packages" in argus_client.__file__, "the installed package is imported (%s)" % argus_client.__file__)
    import argus.v1.jobs_pb2 as jobs_pb2
    check("site-packages" in jobs_pb2.__file__, "with its generated stubs (%s)" % jobs_pb2.__file__)

    client = Client(c.grpc)
    res = client.probe()
    check(res.ok and res.raw["tasks"][0]["result"]["devices"], "probe: every worker's inventory")

    events = []
    res = client.tune("gemm", {"M": 64, "N": 64, "K": 64}, dtype="f32", target="interp", max_candidates=2,
                      on_progress=events.append)
    check(res.ok and res.kernel, "tune gemm 64^3 on the interpreter: %s, best %s" % (res.state, res.kernel))
    check(events and events[-1].done and any(e.tried for e in events),
          "tune reports progress while it runs (%d events)" % len(events))
    check(res.correctness_only and res.speedup is None, "an interpreter job claims no speed-up")
    tuned = res.job_id

    try:
        client.result("j-doesnotexist")
        check(False, "an unknown job raises")
    except ArgusError as e:
        check(e.code == "NOT_FOUND", "unknown job: ArgusError NOT_FOUND (%s)" % e)
    try:
        client.submit_tune("gem", "M=64,N=64,K=64", dtype="f32", target="interp")
        check(False, "an unknown problem raises")
    except ArgusError as e:
        check(e.code == "INVALID_ARGUMENT", "unknown problem: INVALID_ARGUMENT (%s)" % e)

    results = client.batch([
        {"problem": "gemm", "shape": "M=32,N=64,K=128", "dtype": "f32", "target": "interp", "max_candidates": 1},
        {"problem": "rmsnorm", "shape": {"R": 8, "N": 512}, "dtype": "f32", "target": "interp",
         "max_candidates": 1}])
    check([r.ok for r in results] == [True, True], "batch: both problems tuned (%s)" % [r.state for r in results])

    jobs = client.list()
    ids = [j.job_id for j in jobs]
    check(tuned in ids and all(r.job_id in ids for r in results), "list shows the jobs (%d)" % len(jobs))
    row = next(j for j in jobs if j.job_id == tuned)
    check(row.family == "gemm" and row.shape == {"M": 64, "N": 64, "K": 64} and row.target == "interp",
          "list rows carry family, shape and target")
    check(all(j.state == "JOB_STATE_SUCCEEDED" for j in client.list(state="succeeded")), "list filters by state")

    out = os.path.join(c.dir, "export")
    files = [os.path.basename(f) for f in client.export(tuned, out, argus=argus)]
    check("launch_torch.py" in files and "argus_kernel.h" in files, "export writes the launchers: %s" % files)

    worker = c.procs[1]
    os.kill(worker.pid, signal.SIGSTOP)  # nothing runs: the job stays open
    try:
        job = client.submit_tune("gemm", "M=64,N=64,K=64", dtype="f32", target="interp", max_candidates=8)
        check(client.cancel(job) == "JOB_STATE_CANCELLED", "cancel ends a job")
        check(client.result(job).state == "JOB_STATE_CANCELLED", "and result says so")

        # The server restarts while a watch is open: the watch reconnects and sees the end.
        job = client.submit_probe()
        seen, errors = [], []

        def follow():
            try:
                for ev in client.watch(job, reconnect_for=30):
                    seen.append(ev.state)
            except Exception as e:  # noqa: BLE001
                errors.append(e)
        t = threading.Thread(target=follow)
        t.start()
        time.sleep(0.5)
        c.kill_server()
        time.sleep(0.5)
        c.start_server(http=False, listen=c.grpc)
    finally:
        os.kill(worker.pid, signal.SIGCONT)
    t.join(60)
    check(not t.is_alive() and not errors, "watch survived the server restart: %s" % errors)
    check(seen and seen[-1] == "JOB_STATE_SUCCEEDED", "and saw the job finish: %s" % seen[-3:])
    return tuned


def cli_checks(c, venv, tuned):
    exe = os.path.join(venv, "bin", "argus-client")
    r = subprocess.run([exe, "--server", c.grpc, "result", tuned], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and '"correctness_only": true' in r.stdout, "argus-client result: exit 0, JSON")
    r = subprocess.run([exe, "--server", c.grpc, "result", "j-doesnotexist"], capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 4 and "NOT_FOUND" in r.stderr, "argus-client: exit 4 for an unknown job")


def token_checks(bin_dir):
    from argus_client import ArgusError, Client
    with Cluster(bin_dir) as c:
        tokens = os.path.join(c.dir, "client.tokens")
        workers = os.path.join(c.dir, "worker.tokens")
        with open(tokens, "w") as f:
            f.write("alice %s\n" % TOKEN)
        with open(workers, "w") as f:
            f.write(WORKER_TOKEN + "\n")
        c.start_server(http=False, extra=["--token_file", tokens, "--worker_token_file", workers])
        try:
            Client(c.grpc).list()
            check(False, "no token is refused")
        except ArgusError as e:
            check(e.code == "UNAUTHENTICATED", "without a token: UNAUTHENTICATED (%s)" % e)
        token_file = os.path.join(c.dir, "alice.token")
        with open(token_file, "w") as f:
            f.write(TOKEN + "\n")
        check(Client(c.grpc, token_file=token_file).list() == [], "with token_file: the call goes through")
        check(Client(c.grpc, token=TOKEN).list() == [], "with token=: the call goes through")


def inside(bin_dir, venv):
    with Cluster(bin_dir) as c:
        try:
            c.start_server(http=False)
            c.start_worker()
            c.wait_workers(1)
            tuned = library_checks(c, os.path.join(bin_dir, "argus"))
            cli_checks(c, venv, tuned)
        except Exception:  # noqa: BLE001
            c.report_failure()
            return 1
    token_checks(bin_dir)
    print("PASS")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--inside", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.inside:
        return inside(a.bin, a.inside)
    root = tempfile.mkdtemp(prefix="argus-pyclient-")
    try:
        venv = install(root)
        # Run from outside the checkout so that only the installed package can be imported.
        return subprocess.run([os.path.join(venv, "bin", "python"), os.path.abspath(__file__), "--bin",
                               os.path.abspath(a.bin), "--inside", venv], cwd=root).returncode
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
