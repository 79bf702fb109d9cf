#!/usr/bin/env python3
"""`argus batch` with tune jobs end to end: a manifest of GEMM shapes, an
attention and an rmsnorm problem, run by a real argus-server (its planner)
and two real worker processes on the reference interpreter. The server
admits two unfinished jobs per client, so the batch submits in rounds; the
CLI is SIGKILLed mid-batch and `--resume` finishes it without submitting
anything twice. Then the results CSV/JSON and the dispatch table are checked
against the jobs on the server, and `argus export` of a best kernel reads its
PTX from the store's artifacts table."""
import argparse
import csv
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "browser"))
from argus_procs import Cluster, check, run_checks  # noqa: E402

MANIFEST = """\
name: tune-mix
defaults:
  kind: tune
  dtype: f32
  targets: [interp]
  max_candidates: 3
problems:
  - name: gemm-64
    family: gemm
    shape: {M: 64, N: 64, K: 64}
  - name: gemm-32x64x128
    family: gemm
    shape: {M: 32, N: 64, K: 128}
  - name: attn
    family: attention
    shape: {B: 1, H: 2, S: 64, D: 64}
    options: {causal: "1"}
  - name: norm
    family: rmsnorm
    shape: {R: 8, N: 512}
"""

PTX = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry gemm(.param .u64 A) { ret; }\n"


def read_state(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--worker", required=True, help="argus-worker (run with --backend interp)")
    a = ap.parse_args()
    argus = os.path.join(a.bin, "argus")
    def body(c):
        c.start_server(http=False, extra=["--max_jobs_per_client", "2"])
        for i in range(2):
            c._start("tune-worker-%d" % i, [a.worker, "--server", c.grpc, "--backend", "interp"])
        c.wait_workers(2)
        m = os.path.join(c.dir, "mix.yaml")
        with open(m, "w") as f:
            f.write(MANIFEST)
        state_file = m + ".state.json"
        out = os.path.join(c.dir, "out")
        env = dict(os.environ, USER="batch-user")
        argv = [argus, "batch", m, "--server", c.grpc, "--out", out, "--poll_ms", "100"]

        # Start, and SIGKILL the CLI once the first jobs are recorded.
        t0 = time.time()
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        submitted = []
        deadline = time.time() + 60
        while time.time() < deadline:
            st = read_state(state_file)
            if st:
                submitted = [e for e in st["entries"] if e["job_id"]]
                if len(submitted) >= 2:
                    break
            time.sleep(0.05)
        p.send_signal(signal.SIGKILL)
        p.wait()
        st = read_state(state_file)
        ids_before = {e["key"]: e["job_id"] for e in st["entries"] if e["job_id"]}
        check(2 <= len(ids_before) < 4,
              "killed mid-batch: %d of 4 jobs submitted (the server admits 2 at a time)" % len(ids_before))

        r = subprocess.run(argv + ["--resume", "--json"], capture_output=True, text=True, env=env,
                           timeout=400)
        elapsed = time.time() - t0
        check(r.returncode == 0, "the resumed batch finished, exit 0: " + r.stderr[-800:])
        res = json.loads(r.stdout)
        rows = {x["name"]: x for x in res["results"]}
        check(len(rows) == 4 and all(x["state"] == "succeeded" for x in rows.values()),
              "all 4 tune entries succeeded: %s" % {k: v["state"] for k, v in rows.items()})
        for key, job in ids_before.items():
            check(rows[key.split("@")[0]]["job_id"] == job, "resume kept %s's job %s" % (key, job))
        lst = json.loads(c.cli("list", "--json").stdout)
        jobs = [j for j in lst.get("jobs", []) if j["spec"]["kind"] == "JOB_KIND_TUNE"]
        check(len(jobs) == 4, "nothing was submitted twice (%d tune jobs on the server)" % len(jobs))

        # The tables agree with the server.
        csv_rows = list(csv.DictReader(open(os.path.join(out, "results.csv"))))
        check([x["name"] for x in csv_rows] == ["gemm-64", "gemm-32x64x128", "attn", "norm"],
              "results.csv: one row per entry in manifest order")
        disp = json.load(open(os.path.join(out, "dispatch.json")))
        check(len(disp["entries"]) == 4, "dispatch.json: 4 entries")
        workers_used = set()
        for x in csv_rows:
            job = json.loads(c.cli("status", x["job_id"], "--json").stdout)
            result = json.loads(job["result_json"])
            best = result["best"]
            check(x["state"] == "succeeded" and abs(float(x["best_speedup"]) - best["ratio"]) < 1e-9
                  and x["best_candidate"] == best["candidate_id"] and x["target"] == "interp",
                  "%s: CSV speed-up %s and kernel %s are the job's best" % (x["name"], x["best_speedup"],
                                                                          x["best_candidate"]))
            d = [e for e in disp["entries"] if e["job_id"] == x["job_id"]]
            check(len(d) == 1 and d[0]["kernel"] == best["candidate_id"] and d[0]["family"] == x["family"]
                  and d[0]["speedup"] == best["ratio"] and d[0]["target"] == "interp",
                  "%s: dispatch entry %s %s -> %s" % (x["name"], d[0]["family"], d[0]["shape"], d[0]["kernel"]))
            workers_used |= {t["worker_id"] for t in job.get("tasks", []) if t.get("worker_id")}
        check(len(workers_used) == 2, "candidates ran on both workers: %s" % sorted(workers_used))
        print("figure: batch of 4 tune problems (3 candidates each) on 2 interpreter workers, "
              "killed and resumed: %.1f s" % elapsed)

        # argus export reads the best kernel's PTX from the artifacts table.
        gemm = rows["gemm-64"]
        best_c = gemm["best_candidate"]
        meta = json.dumps({"symbol": "gemm", "dynamic_shared_bytes": 1024,
                           "params": [{"name": "A"}]})
        sql = ("INSERT INTO artifacts (id, candidate_id, target, kind, bytes, metadata_json, created_ms) "
               "VALUES ('a-test', '%s', 'sm_90a', 'ptx', X'%s', '%s', 1)" % (best_c, PTX.encode().hex(), meta))
        subprocess.run(["sqlite3", c.db, sql], check=True, timeout=30)
        exp = os.path.join(c.dir, "export")
        r = c.cli("export", gemm["job_id"], "-o", exp)
        check(r.returncode == 0, "argus export of a tune job: " + r.stderr)
        check(open(os.path.join(exp, "kernel.ptx")).read() == PTX, "the PTX is the artifact row's bytes")
        md = json.load(open(os.path.join(exp, "metadata.json")))
        check(md["artifact_id"] == "a-test" and md["kernel_name"] == "gemm" and md["shared_bytes"] == 1024
              and md["candidate_id"] == best_c, "metadata.json comes from the artifact: %s" % md)
        header = open(os.path.join(exp, "argus_kernel.h")).read()
        check("struct ArgusKernel_gemm" in header and "kSharedBytes = 1024" in header,
              "the launcher header names the artifact's kernel and shared bytes")
        source = json.loads(json.loads(c.cli("status", gemm["job_id"], "--json").stdout)["result_json"])
        check(open(os.path.join(exp, "kernel.py")).read() == source["best"]["source"],
              "kernel.py is the best kernel's DSL source")
        # No artifact stored (an interpreter job): export compiles the best kernel's source.
        exp2 = os.path.join(c.dir, "exp2")
        r = c.cli("export", rows["norm"]["job_id"], "-o", exp2)
        check(r.returncode == 0, "a best kernel without an artifact is compiled: " + r.stderr.strip())
        md2 = json.load(open(os.path.join(exp2, "metadata.json")))
        check(".entry" in open(os.path.join(exp2, "kernel.ptx")).read()
              and md2.get("compiled_by") == "argus export" and md2.get("target") == "sm_90a",
              "its PTX and metadata come from compiling the source for sm_90a: %s" % md2)
        # Resuming the finished batch refreshes the dispatch table with the stored image.
        r = subprocess.run(argv + ["--resume", "--json"], capture_output=True, text=True, env=env, timeout=60)
        check(r.returncode == 0, "the finished batch resumes: " + r.stderr[-300:])
        disp = json.load(open(os.path.join(out, "dispatch.json")))
        by_job = {e["job_id"]: e for e in disp["entries"]}
        check(by_job[gemm["job_id"]]["artifact"] == "a-test" and by_job[rows["norm"]["job_id"]]["artifact"] == "",
              "dispatch.json names the artifact row of the best kernel where the store has one")
        r = c.cli("result", gemm["job_id"])
        check(r.returncode == 0 and "speed-up over the" in r.stdout, "argus result shows the speed-up")
    return run_checks(Cluster(a.bin), body)


if __name__ == "__main__":
    sys.exit(main())
