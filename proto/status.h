// proto/status.h: conversion between absl::Status and grpc::Status.
//
// The two share canonical codes, so conversion keeps code and message.
// Thread safety: pure functions.
#ifndef ARGUS_PROTO_STATUS_H_
#define ARGUS_PROTO_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace argus {

inline grpc::Status ToGrpc(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

inline absl::Status FromGrpc(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

}  // namespace argus

#endif  // ARGUS_PROTO_STATUS_H_
