#!/usr/bin/env python3
"""Example Python client of the Argus gRPC API (argus.v1.JobService).

Submits a job, watches it (reconnecting if the server restarts), and fetches
the result. Needs Debian's python3-grpcio and python3-protobuf, and stubs
generated from proto/ by protoc's Python plugin (the build does it: they land
in BUILD/clients/python/gen; or run `generate_stubs(out_dir)` below).

    python3 clients/python/argus_client.py --server 127.0.0.1:7070 \
        --stubs build/clients/python/gen probe

As a library:

    client = ArgusClient("127.0.0.1:7070")
    job = client.submit_probe()
    for event in client.watch(job.id): print(event.state, event.tasks_done)
    print(client.get(job.id).result_json)
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.join(HERE, "..", "..", "proto")
PROTOS = ["argus/v1/common.proto", "argus/v1/jobs.proto", "argus/v1/workers.proto",
          "argus/v1/verifier.proto"]


def generate_stubs(out_dir, proto_dir=PROTO_DIR, protoc="protoc",
                   plugin="/usr/bin/grpc_python_plugin"):
    """Writes argus/v1/*_pb2.py and *_pb2_grpc.py under out_dir."""
    os.makedirs(out_dir, exist_ok=True)
    subprocess.run([protoc, "-I", proto_dir, "--python_out=" + out_dir,
                    "--grpc_python_out=" + out_dir,
                    "--plugin=protoc-gen-grpc_python=" + plugin] +
                   [os.path.join(proto_dir, p) for p in PROTOS], check=True)
    for d in ("argus", "argus/v1"):
        open(os.path.join(out_dir, d, "__init__.py"), "a").close()


def load_stubs(stubs_dir):
    if stubs_dir not in sys.path:
        sys.path.insert(0, stubs_dir)
    from argus.v1 import jobs_pb2, jobs_pb2_grpc  # noqa: F401
    return jobs_pb2, jobs_pb2_grpc


class ArgusError(Exception):
    pass


class ArgusClient:
    def __init__(self, address, stubs_dir, timeout=15.0):
        import grpc
        self.grpc = grpc
        self.pb, pb_grpc = load_stubs(stubs_dir)
        self.address = address
        self.timeout = timeout
        self.channel = grpc.insecure_channel(address)
        self.stub = pb_grpc.JobServiceStub(self.channel)

    def _call(self, what, fn, req):
        try:
            return fn(req, timeout=self.timeout)
        except self.grpc.RpcError as e:
            raise ArgusError("%s: %s: %s" % (what, e.code().name, e.details())) from None

    def submit_probe(self, workers=0, client="python-example"):
        spec = self.pb.JobSpec(kind=self.pb.JOB_KIND_PROBE, probe_workers=workers, client=client)
        return self._call("submit", self.stub.SubmitJob, self.pb.SubmitJobRequest(spec=spec)).job

    def get(self, job_id):
        return self._call("job " + job_id, self.stub.GetJob, self.pb.GetJobRequest(id=job_id))

    def watch(self, job_id, reconnect_for=60.0):
        """Yields JobEvents until the job ends; reconnects after UNAVAILABLE."""
        done = {self.pb.JOB_STATE_SUCCEEDED, self.pb.JOB_STATE_FAILED, self.pb.JOB_STATE_CANCELLED}
        give_up = None
        while True:
            try:
                for ev in self.stub.WatchJob(self.pb.WatchJobRequest(id=job_id)):
                    give_up = None
                    yield ev
                    if ev.state in done:
                        return
                # The stream ended without a final event: check and resume.
                if self.get(job_id).state in done:
                    return
            except self.grpc.RpcError as e:
                if e.code() == self.grpc.StatusCode.NOT_FOUND:
                    raise ArgusError("job %s: not found" % job_id) from None
                if e.code() != self.grpc.StatusCode.UNAVAILABLE:
                    raise ArgusError("watch %s: %s: %s" % (job_id, e.code().name, e.details())) from None
            give_up = give_up or time.time() + reconnect_for
            if time.time() > give_up:
                raise ArgusError("watch %s: server %s unreachable for %.0fs" % (job_id, self.address, reconnect_for))
            time.sleep(0.5)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", default=os.environ.get("ARGUS_SERVER", ""))
    ap.add_argument("--stubs", required=True, help="directory with generated argus/v1 stubs")
    ap.add_argument("verb", choices=["probe", "get"])
    ap.add_argument("job", nargs="?")
    a = ap.parse_args()
    if not a.server:
        ap.error("--server HOST:PORT or $ARGUS_SERVER is needed")
    c = ArgusClient(a.server, a.stubs)
    try:
        if a.verb == "get":
            if not a.job:
                ap.error("get needs a job id")
            job = c.get(a.job)
        else:
            job = c.submit_probe()
            print("submitted", job.id, file=sys.stderr)
            for ev in c.watch(job.id):
                print("  %s: %d/%d tasks done" % (c.pb.JobState.Name(ev.state), ev.tasks_done, ev.tasks_total),
                      file=sys.stderr)
            job = c.get(job.id)
    except ArgusError as e:
        print("argus_client:", e, file=sys.stderr)
        return 4 if "NOT_FOUND" in str(e) or "not found" in str(e) else 5
    out = {"id": job.id, "state": c.pb.JobState.Name(job.state),
           "result": json.loads(job.result_json) if job.result_json else None}
    print(json.dumps(out, indent=2))
    return 0 if job.state == c.pb.JOB_STATE_SUCCEEDED else 1


if __name__ == "__main__":
    sys.exit(main())
