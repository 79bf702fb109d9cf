#!/usr/bin/env python3
"""`argus batch`, `argus result` and `argus export` against a real argus-server and worker: a malformed manifest
names line and field; a batch runs to its results and dispatch tables; a
refused entry is recorded, not lost; an interrupted batch resumes without
submitting anything twice."""
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
from argus_procs import Cluster  # noqa: E402


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print("ok:", what)


MANIFEST = """\
name: fleet-check
defaults:
  kind: probe
  workers: 1
problems:
  - name: probe-a
  - name: probe-b
  - name: gemm-small     # a tune job: refused while the server has no planner
    kind: tune
    family: gemm
    dtype: f32
    shape: {M: 64, N: 64, K: 64}
    targets: [interp]
"""


PTX = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry vadd(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n) { ret; }
"""


def export_tune_job(c, a, d):
    """A tune job whose result names a best kernel (written into the store the
    way the planner will), exported and checked: files, header, snippet."""
    s = subprocess.run([a.seeder, "--db", c.db, "--source", os.path.join(HERE, "..", "..", "examples",
                        "vector_add.py"), "--n", "4"], capture_output=True, text=True, timeout=30)
    check(s.returncode == 0, "seeded a tune job")
    seeded = json.loads(s.stdout)
    best = {"best": {"candidate_id": seeded["best_candidate_id"], "speedup": seeded["best_speedup"],
                     "source": "def vadd(): pass\n", "ptx": PTX, "artifact": "artifacts/vadd.ptx",
                     "invariants": [{"line": 3, "text": "C tags match A+B"}],
                     "metadata": {"kernel_name": "vadd", "shared_bytes": 0,
                                  "params": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "n"}]}}}
    sql = "UPDATE jobs SET state = 3, result_json = '%s' WHERE id = '%s'" % (
        json.dumps(best).replace("'", "''"), seeded["job_id"])
    # The live server writes too: wait for its lock instead of failing at once.
    subprocess.run(["sqlite3", "-cmd", ".timeout 20000", c.db, sql], check=True, timeout=30)
    r = c.cli("result", seeded["job_id"])
    check(r.returncode == 0 and "speed-up over the vendor library" in r.stdout and "C tags match" in r.stdout
          and "artifacts/vadd.ptx" in r.stdout, "argus result shows the best kernel, invariants, artifact")
    out = os.path.join(d, "export")
    r = c.cli("export", seeded["job_id"], "-o", out)
    check(r.returncode == 0, "argus export wrote the kernel: " + r.stderr)
    for f in ("kernel.ptx", "metadata.json", "argus_kernel.h", "launch_torch.py", "kernel.py"):
        check(os.path.exists(os.path.join(out, f)), "export wrote " + f)
    check(open(os.path.join(out, "kernel.ptx")).read() == PTX, "the PTX is the job's")
    check(json.load(open(os.path.join(out, "metadata.json")))["kernel_name"] == "vadd", "metadata names the kernel")
    py = subprocess.run([sys.executable, "-m", "py_compile", os.path.join(out, "launch_torch.py")],
                        capture_output=True, text=True)
    check(py.returncode == 0, "the Python snippet compiles: " + py.stderr)
    cuda_inc = "/usr/local/cuda/include"
    if os.path.exists(os.path.join(cuda_inc, "cuda.h")):
        main_cc = os.path.join(out, "use.cc")
        with open(main_cc, "w") as f:
            f.write('#include "argus_kernel.h"\nint main() { ArgusKernel_vadd k; (void)k; return 0; }\n')
        cc = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Werror", "-I", cuda_inc, "-I", out,
                             main_cc], capture_output=True, text=True, timeout=60)
        check(cc.returncode == 0, "the launcher header compiles against cuda.h: " + cc.stderr[-800:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--seeder", help="dashboard_seed, to make a tune job with a result to export")
    a = ap.parse_args()
    with Cluster(a.bin) as c:
        try:
            c.start_server(http=False)
            c.start_worker()
            c.wait_workers(1)
            d = c.dir
            bad = os.path.join(d, "bad.yaml")
            with open(bad, "w") as f:
                f.write("problems:\n  - name: a\n    family: gemm\n    shape: {M: 64, N: x}\n")
            r = c.cli("batch", bad)
            check(r.returncode == 2, "malformed manifest: exit 2")
            check(bad + ":4: problems[0].shape.N: expected an integer, got 'x'" in r.stderr,
                  "the error names the line and field: " + r.stderr.strip())

            m = os.path.join(d, "fleet.yaml")
            with open(m, "w") as f:
                f.write(MANIFEST)
            out = os.path.join(d, "out")
            r = c.cli("batch", m, "--out", out, "--poll_ms", "100", timeout=90)
            rows = list(csv.DictReader(open(os.path.join(out, "results.csv"))))
            check(len(rows) == 3, "results.csv has one row per entry")
            by = {r_["name"]: r_ for r_ in rows}
            check(by["probe-a"]["state"] == "succeeded" and by["probe-b"]["state"] == "succeeded",
                  "both probe entries succeeded")
            tune = by["gemm-small"]
            if tune["state"] == "refused":
                check(tune["error"] != "" and r.returncode == 1, "the refused tune entry is recorded, exit 1")
            else:
                check(tune["job_id"].startswith("j-"), "the tune entry was submitted")
            check("batch fleet-check: 3/3 finished" in r.stderr, "aggregate progress was shown")
            res = json.load(open(os.path.join(out, "results.json")))
            check(len(res["results"]) == 3, "results.json has every entry")
            disp = json.load(open(os.path.join(out, "dispatch.json")))
            check(disp["version"] == 1 and isinstance(disp["entries"], list), "dispatch.json written")
            r = c.cli("batch", m, "--out", out)
            check(r.returncode == 2 and "--resume" in r.stderr, "rerun without --resume is refused")

            # Interrupt a batch while its jobs wait for a stopped worker, then resume.
            m2 = os.path.join(d, "two.json")
            with open(m2, "w") as f:
                json.dump({"name": "resume", "problems": [
                    {"name": "p1", "kind": "probe", "workers": 1},
                    {"name": "p2", "kind": "probe", "workers": 1}]}, f)
            worker = c.procs[1]
            os.kill(worker.pid, signal.SIGSTOP)
            argv = [os.path.join(a.bin, "argus"), "batch", m2, "--server", c.grpc, "--poll_ms", "100"]
            p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            state_file = m2 + ".state.json"
            deadline = time.time() + 20
            ids = []
            while time.time() < deadline:
                try:
                    st = json.load(open(state_file))
                    ids = sorted(e["job_id"] for e in st["entries"] if e["job_id"])
                    if len(ids) == 2:
                        break
                except (OSError, ValueError):
                    pass
                time.sleep(0.05)
            check(len(ids) == 2, "both jobs were submitted and recorded before the interruption")
            p.send_signal(signal.SIGKILL)
            p.wait()
            st = json.load(open(state_file))
            check(all(e["state"] in ("queued", "running") for e in st["entries"]),
                  "the jobs were unfinished when the batch was killed")
            os.kill(worker.pid, signal.SIGCONT)
            r = c.cli("batch", m2, "--resume", "--json", timeout=90)
            check(r.returncode == 0, "the resumed batch finished: " + r.stderr[-300:])
            res = json.loads(r.stdout)
            check(sorted(x["job_id"] for x in res["results"]) == ids, "resume kept the same jobs")
            check(all(x["state"] == "succeeded" for x in res["results"]), "and they succeeded")
            # argus result / export over what the jobs hold.
            r = c.cli("result", ids[0])
            check(r.returncode == 0 and "worker w-" in r.stdout, "argus result prints a probe's workers")
            r = c.cli("result", ids[0], "--json")
            check(json.loads(r.stdout)["state"] == "SUCCEEDED", "argus result --json")
            r = c.cli("result", "j-doesnotexist")
            check(r.returncode == 4 and "does not exist" in r.stderr, "argus result: unknown job is exit 4")
            r = c.cli("export", ids[0], "-o", os.path.join(d, "exp"))
            check(r.returncode == 4 and "no best kernel" in r.stderr, "argus export: a probe has no kernel")
            r = c.cli("export", ids[0])
            check(r.returncode == 2 and "-o DIR" in r.stderr, "argus export without -o is a usage error")
            if a.seeder:
                export_tune_job(c, a, d)
            lst = json.loads(c.cli("list", "--json").stdout)
            n_probe_jobs = len([j for j in lst.get("jobs", []) if j["spec"]["kind"] == "JOB_KIND_PROBE"])
            check(n_probe_jobs == 4, "nothing was submitted twice (4 jobs on the server: %d)" % n_probe_jobs)
        except Exception:  # noqa: BLE001
            c.report_failure()
            return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
