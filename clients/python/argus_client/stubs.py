"""Where the generated gRPC stubs come from.

An installed package carries them (setup.py generates them at build time). From
a source checkout, `load()` generates them once into a cache directory from the
repository's proto/, so `PYTHONPATH=clients/python python3 -m argus_client`
works without installing. Not thread-safe on first use; import once at start.
"""
import hashlib
import os
import subprocess
import sys

PROTOS = ["argus/v1/common.proto", "argus/v1/jobs.proto", "argus/v1/workers.proto",
          "argus/v1/verifier.proto"]
SOURCE_PROTO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "proto")


class StubsError(Exception):
    pass


def generate_stubs(out_dir, proto_dir=SOURCE_PROTO_DIR, protoc=None, plugin=None):
    """Writes argus/v1/*_pb2.py and *_pb2_grpc.py (and the package files) under out_dir."""
    protoc = protoc or os.environ.get("PROTOC", "protoc")
    plugin = plugin or os.environ.get("GRPC_PYTHON_PLUGIN", "/usr/bin/grpc_python_plugin")
    missing = [p for p in PROTOS if not os.path.isfile(os.path.join(proto_dir, p))]
    if missing:
        raise StubsError("no %s under %s (set ARGUS_PROTO_DIR to the repository's proto/)"
                         % (missing[0], os.path.abspath(proto_dir)))
    os.makedirs(out_dir, exist_ok=True)
    cmd = [protoc, "-I", proto_dir, "--python_out=" + out_dir, "--grpc_python_out=" + out_dir,
           "--plugin=protoc-gen-grpc_python=" + plugin] + [os.path.join(proto_dir, p) for p in PROTOS]
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    except FileNotFoundError as e:
        raise StubsError("%s not found: install protobuf-compiler and protobuf-compiler-grpc" % e.filename)
    except subprocess.CalledProcessError as e:
        raise StubsError("protoc failed: %s" % e.stderr.strip())
    for d in ("argus", "argus/v1"):
        open(os.path.join(out_dir, d, "__init__.py"), "a").close()


def _source_cache_dir():
    digest = hashlib.sha256()
    for p in PROTOS:
        with open(os.path.join(SOURCE_PROTO_DIR, p), "rb") as f:
            digest.update(f.read())
    base = os.environ.get("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache"))
    return os.path.join(base, "argus-client", digest.hexdigest()[:16])


def load():
    """Returns (jobs_pb2, jobs_pb2_grpc, workers_pb2), generating them from a checkout if needed."""
    try:
        from argus.v1 import jobs_pb2, jobs_pb2_grpc  # noqa: F401
    except ImportError:
        if not os.path.isfile(os.path.join(SOURCE_PROTO_DIR, PROTOS[1])):
            raise StubsError("the argus.v1 stubs are not installed: pip install clients/python") from None
        out = _source_cache_dir()
        if not os.path.isfile(os.path.join(out, "argus", "v1", "jobs_pb2_grpc.py")):
            generate_stubs(out)
        sys.path.insert(0, out)
        from argus.v1 import jobs_pb2, jobs_pb2_grpc  # noqa: F401
    return jobs_pb2, jobs_pb2_grpc
