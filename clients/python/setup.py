"""Builds the argus-client package and, with it, the gRPC stubs.

The stubs (`argus/v1/*_pb2.py`, `*_pb2_grpc.py`) are generated from the
repository's proto/ at build time by protoc and grpc_python_plugin (Debian's
protobuf-compiler and protobuf-compiler-grpc), so they always match the server
they are built beside. ARGUS_PROTO_DIR points elsewhere; PROTOC and
GRPC_PYTHON_PLUGIN name other tools.
"""
import os
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from argus_client.stubs import generate_stubs  # noqa: E402


class BuildWithStubs(build_py):
    def run(self):
        super().run()
        proto_dir = os.environ.get("ARGUS_PROTO_DIR", os.path.join(HERE, "..", "..", "proto"))
        generate_stubs(self.build_lib, proto_dir)


setup(cmdclass={"build_py": BuildWithStubs})
