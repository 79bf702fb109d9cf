// argus-verifier over real gRPC: verdicts, counterexamples, bad requests and
// deadlines; the service answers the next request after each bad one.
#include "verifier/service.h"

#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

namespace argus::verifier {
namespace {

std::string Slurp(const std::string& p) {
  std::ifstream in(std::string(ARGUS_SOURCE_DIR) + "/" + p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Fixture {
  VerifierServer server{ServiceOptions{"127.0.0.1:0"}};
  std::unique_ptr<v1::VerifierService::Stub> stub;
  Fixture() {
    auto addr = server.Start();
    REQUIRE(addr.ok());
    stub = v1::VerifierService::NewStub(
        grpc::CreateChannel(*addr, grpc::InsecureChannelCredentials()));
  }
  grpc::Status Call(const v1::VerifyRequest& req, v1::VerifyResponse* resp,
                    int deadline_ms = 30000) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms));
    return stub->Verify(&ctx, req, resp);
  }
};

v1::VerifyRequest Req(const std::string& path) {
  v1::VerifyRequest r;
  r.set_file_name(path);
  r.set_source(Slurp(path));
  (*r.mutable_dims())["M"] = 4096;
  (*r.mutable_dims())["N"] = 4096;
  (*r.mutable_dims())["K"] = 4096;
  return r;
}

TEST_CASE("VerifierService verifies, refutes and survives bad requests") {
  Fixture f;
  v1::VerifyResponse ok;
  REQUIRE(f.Call(Req("kb/templates/gemm_mma.py"), &ok).ok());
  CHECK(ok.verified());
  CHECK(ok.obligations() > 0);
  CHECK(ok.proved() == ok.obligations());

  v1::VerifyResponse bug;
  REQUIRE(f.Call(Req("tests/verifier/bugs/wrong_tile_offset.py"), &bug).ok());
  CHECK(!bug.verified());
  bool tag = false;
  for (const auto& d : bug.diagnostics()) {
    if (d.check() == "tag_assert" && d.severity() == v1::Diagnostic::VIOLATION) {
      tag = true;
      CHECK(d.location().line() > 0);
      CHECK(d.counterexample().expected().rfind("A(", 0) == 0);
      CHECK(d.counterexample().actual().rfind("A(", 0) == 0);
      CHECK(d.counterexample().written_at().line() > 0);
      CHECK(d.counterexample().iterations().count("k") == 1);
    }
  }
  CHECK(tag);
  CHECK(bug.report_json().find("\"counterexample\"") != std::string::npos);

  v1::VerifyRequest junk;
  junk.set_source("def (((:\n  @@@");
  v1::VerifyResponse jr;
  REQUIRE(f.Call(junk, &jr).ok());
  CHECK(!jr.verified());
  REQUIRE(jr.diagnostics_size() == 1);
  CHECK(jr.diagnostics(0).severity() == v1::Diagnostic::ERROR);

  v1::VerifyRequest bad_const = Req("kb/templates/gemm_mma.py");
  (*bad_const.mutable_constants())["NOPE"] = 3;
  v1::VerifyResponse br;
  REQUIRE(f.Call(bad_const, &br).ok());
  CHECK(br.diagnostics(0).severity() == v1::Diagnostic::ERROR);

  v1::VerifyRequest huge;
  huge.set_source(std::string(2 << 20, '#'));
  v1::VerifyResponse hr;
  CHECK(f.Call(huge, &hr).error_code() != grpc::StatusCode::OK);

  v1::VerifyRequest neg = Req("kb/templates/gemm_mma.py");
  neg.set_solver_timeout_ms(-5);
  v1::VerifyResponse nr;
  CHECK(f.Call(neg, &nr).error_code() == grpc::StatusCode::INVALID_ARGUMENT);

  // still serving
  v1::VerifyResponse again;
  REQUIRE(f.Call(Req("examples/gemm_smem.py"), &again).ok());
  CHECK(again.verified());
}

TEST_CASE("a deadline too short for the proof gives unknown, never proved") {
  Fixture f;
  v1::VerifyRequest r = Req("examples/flash_attention.py");
  (*r.mutable_dims())["S"] = 1024;
  (*r.mutable_dims())["BH"] = 2;
  r.set_solver_timeout_ms(1);  // 1 ms per obligation
  v1::VerifyResponse resp;
  grpc::Status st = f.Call(r, &resp, 20000);
  REQUIRE(st.ok());
  CHECK(!resp.verified());
  bool unknown = false;
  for (const auto& d : resp.diagnostics()) {
    unknown |= d.severity() == v1::Diagnostic::UNKNOWN;
    CHECK(d.severity() != v1::Diagnostic::VIOLATION);  // a timeout is not a refutation
  }
  CHECK(unknown);
  CHECK(resp.proved() < resp.obligations());

  // a total deadline too short: unknown or DEADLINE_EXCEEDED, never verified
  v1::VerifyResponse late;
  grpc::Status st2 = f.Call(Req("kb/templates/gemm_mma.py"), &late, 1);
  if (st2.ok()) CHECK(!late.verified());
}

}  // namespace
}  // namespace argus::verifier
