#!/usr/bin/env python3
"""Browser test of the argus-server dashboard in a real headless Chromium.

Starts a real argus-server (--http) and a real argus-worker, submits a probe
job with the argus CLI and waits for it, seeds a tune job with candidates
and trajectory rows into the same store (the planner does not produce them
yet), then opens the pages in Chromium through chromedriver and checks what
they show: job ids and states, the worker list, the reward plot, the best
kernel's highlighted invariants, the counterexamples, live updates, and the
404 page. Saves screenshots to build/test-artifacts/.

usage: dashboard_test.py --bin BUILD/bin --seeder BUILD/tests/dashboard_seed
                         --source kb/templates/gemm_mma.py --artifacts DIR
"""
import argparse
import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from argus_procs import Cluster  # noqa: E402

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print("ok:", what)


def browser(profile):
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-dev-shm-usage", "--window-size=1280,1500",
              "--user-data-dir=" + profile]:
        opts.add_argument(a)
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)


def http_status(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--seeder", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--artifacts", required=True)
    args = ap.parse_args()
    os.makedirs(args.artifacts, exist_ok=True)
    for exe in (CHROMIUM, CHROMEDRIVER):
        check(os.access(exe, os.X_OK), exe + " is installed (scripts/install-deps)")

    with Cluster(args.bin) as c, tempfile.TemporaryDirectory(prefix="argus-chrome-") as profile:
        try:
            c.start_server()
            c.start_worker()
            c.wait_workers(1)
            base = "http://" + c.http
            # A probe job through the CLI, waited for.
            r = c.cli("probe", "--json", timeout=90)
            check(r.returncode == 0, "argus probe succeeded: " + r.stderr[-400:])
            probe = json.loads(r.stdout)
            probe_id = probe["id"]
            # A seeded tune job with candidates and trajectory steps.
            import subprocess
            s = subprocess.run([args.seeder, "--db", c.db, "--source", args.source, "--n", "14"],
                               capture_output=True, text=True, timeout=30)
            check(s.returncode == 0, "seeded a tune job: " + s.stderr)
            seeded = json.loads(s.stdout)
            tune_id = seeded["job_id"]

            # The API directly.
            st, body = http_status(base + "/api/jobs")
            check(st == 200 and probe_id in body and tune_id in body, "/api/jobs lists both jobs")
            st, body = http_status(base + "/api/jobs/j-nonexistent")
            check(st == 404 and "no job" in body, "/api/jobs/UNKNOWN is a JSON 404")

            d = browser(profile)
            try:
                wait = WebDriverWait(d, 15)
                # Job list.
                d.get(base + "/jobs")
                wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#jobs-table .job-row"))
                ids = [e.get_attribute("data-id") for e in d.find_elements(By.CSS_SELECTOR, ".job-row")]
                check(probe_id in ids and tune_id in ids, "job list shows the probe and the tune job")
                check("succeeded" in d.find_element(By.CSS_SELECTOR, f'.job-row[data-id="{probe_id}"]').text,
                      "the probe job shows as succeeded")
                d.get(base + "/jobs?kind=tune")
                wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".job-row"))
                ids = [e.get_attribute("data-id") for e in d.find_elements(By.CSS_SELECTOR, ".job-row")]
                check(ids == [tune_id], "the kind filter shows only the tune job")

                # Probe job page.
                d.get(base + "/jobs/" + probe_id)
                wait.until(lambda d: d.find_elements(By.ID, "job-id"))
                check(d.find_element(By.ID, "job-id").text == probe_id, "probe page shows its id")
                check(d.find_element(By.ID, "job-state").text == "succeeded", "probe page shows succeeded")
                wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#probe-results .probe"))
                check(True, "probe page shows the worker inventory")

                # Tune job page: plot, best kernel, counterexamples.
                d.get(base + "/jobs/" + tune_id)
                wait.until(lambda d: d.find_elements(By.ID, "plot-svg"))
                pts = d.find_elements(By.CSS_SELECTOR, "#plot-svg .pt")
                check(len(pts) == seeded["candidates"], f"plot has one point per candidate ({len(pts)})")
                check(len(d.find_elements(By.CSS_SELECTOR, "#plot-svg .pt.rejected")) == seeded["rejected"],
                      "rejected candidates are marked on the plot")
                check(d.find_element(By.ID, "best-line").get_attribute("d").startswith("M"),
                      "the best-so-far line is drawn")
                check(d.find_element(By.ID, "best-speedup").text == "%.3f×" % seeded["best_speedup"],
                      "best speed-up card matches the best candidate")
                inv = d.find_elements(By.CSS_SELECTOR, "#best-source .ln.inv")
                check(len(inv) >= 1 and all("assert_tag" in e.text for e in inv),
                      "the best kernel's verified invariants are highlighted")
                cex = d.find_elements(By.CSS_SELECTOR, "#rejected .cex")
                check(len(cex) == seeded["rejected"], "each rejected candidate is listed")
                check("thread" in cex[0].text and "A(13,70)" in cex[0].text,
                      "a rejected candidate shows its counterexample")

                # Live update: a new candidate appears without a reload.
                before = len(pts)
                s = subprocess.run([args.seeder, "--db", c.db, "--source", args.source, "--n", "3"],
                                   capture_output=True, text=True, timeout=30)
                check(s.returncode == 0, "seeded a second tune job")
                d.get(base + "/jobs")
                wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".job-row")) == 3)
                check(True, "a job added meanwhile is shown")
                n_rows = len(d.find_elements(By.CSS_SELECTOR, ".job-row"))
                r = c.cli("submit", "--kind", "probe", "--wait", timeout=60)
                check(r.returncode == 0, "submitted another probe via the CLI")
                wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".job-row")) == n_rows + 1)
                check(True, "the job list updated live (no reload) with the new probe job")
                d.save_screenshot(os.path.join(args.artifacts, "dashboard-jobs.png"))
                del before

                # Tune page screenshot (the main artifact), tall enough for the counterexamples.
                d.set_window_size(1280, 2300)
                d.get(base + "/jobs/" + tune_id)
                wait.until(lambda d: d.find_elements(By.ID, "plot-svg"))
                d.save_screenshot(os.path.join(args.artifacts, "dashboard-job.png"))
                d.set_window_size(1280, 900)

                # Worker fleet.
                d.get(base + "/workers")
                wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#workers-table .worker-row"))
                rows = d.find_elements(By.CSS_SELECTOR, ".worker-row")
                check(len(rows) == 1 and "alive" in rows[0].text, "the worker is listed as alive")
                check("interp" in rows[0].text or "sm_90a" in rows[0].text or "gfx942" in rows[0].text,
                      "the worker's devices are listed")
                d.save_screenshot(os.path.join(args.artifacts, "dashboard-workers.png"))

                # 404 pages.
                d.get(base + "/jobs/j-doesnotexist")
                check(d.find_element(By.ID, "not-found").text.startswith("404"), "unknown job: 404 page")
                check("j-doesnotexist" in d.find_element(By.ID, "missing").text, "404 names what is missing")
                d.get(base + "/no/such/page")
                check(d.find_element(By.ID, "not-found").text.startswith("404"), "unknown page: 404 page")
                st, _ = http_status(base + "/no/such/page")
                check(st == 404, "the 404 page has status 404")
                d.save_screenshot(os.path.join(args.artifacts, "dashboard-404.png"))
            finally:
                d.quit()
            # Read-only: cancel is refused without a configured token.
            req = urllib.request.Request(base + "/api/jobs/%s/cancel" % tune_id, method="POST", data=b"")
            try:
                urllib.request.urlopen(req, timeout=5)
                check(False, "cancel refused on a read-only dashboard")
            except urllib.error.HTTPError as e:
                check(e.code == 403, "cancel refused on a read-only dashboard (403)")
        except Exception:  # noqa: BLE001
            c.report_failure()
            return 1
    print("PASS; screenshots in", args.artifacts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
