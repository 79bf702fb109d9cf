#include "verifier/service.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "verifier/verify.h"

namespace argus::verifier {
namespace {

constexpr size_t kMaxNameBytes = 256;  // file_name, kernel
constexpr int kMaxEntries = 256;       // constants, dims

v1::Diagnostic::Severity Sev(Severity s) {
  switch (s) {
    case Severity::kViolation:
      return v1::Diagnostic::VIOLATION;
    case Severity::kUnknown:
      return v1::Diagnostic::UNKNOWN;
    case Severity::kNote:
      return v1::Diagnostic::NOTE;
  }
  return v1::Diagnostic::SEVERITY_UNSPECIFIED;
}

void Fill(const Report& r, v1::VerifyResponse* resp) {
  resp->set_verified(r.verified());
  resp->set_obligations(r.obligations);
  resp->set_proved(r.proved);
  resp->set_seconds(r.seconds);
  resp->set_report_json(ToJson(r));
  for (const Finding& f : r.findings) {
    v1::Diagnostic* d = resp->add_diagnostics();
    d->set_severity(Sev(f.severity));
    d->set_check(f.check);
    d->set_message(f.message);
    d->mutable_location()->set_file(r.file);
    d->mutable_location()->set_line(f.loc.line);
    d->mutable_location()->set_column(f.loc.col);
    d->mutable_location()->set_source_line(f.source_line);
    if (!f.has_cex) continue;
    const Counterexample& c = f.cex;
    v1::Counterexample* x = d->mutable_counterexample();
    x->set_block(c.block.empty() ? 0 : c.block[0]);
    x->set_warp(c.warp);
    x->set_lane(c.lane);
    x->set_thread(c.thread);
    x->set_element(c.element);
    for (int64_t v : c.coordinates) x->add_coordinates(v);
    for (const auto& [k, v] : c.iterations) (*x->mutable_iterations())[k] = v;
    x->set_expected(c.expected);
    x->set_actual(c.actual);
    x->mutable_written_at()->set_file(r.file);
    x->mutable_written_at()->set_line(c.written_at.line);
    x->mutable_written_at()->set_column(c.written_at.col);
    x->mutable_written_at()->set_source_line(c.written_source);
    x->set_written_iteration(c.written_iteration);
  }
}

}  // namespace

grpc::Status VerifierServiceImpl::Verify(grpc::ServerContext* ctx, const v1::VerifyRequest* req,
                                         v1::VerifyResponse* resp) {
  if (opt_.auth) {
    if (grpc::Status st = opt_.auth->Check(ctx, auth::Role::kClient); !st.ok()) return st;
  }
  if (static_cast<int64_t>(req->source().size()) > opt_.max_source_bytes) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat("source is ", req->source().size(), " bytes; the limit is ",
                                     opt_.max_source_bytes));
  }
  for (auto [field, value] :
       {std::pair{"file_name", &req->file_name()}, {"kernel", &req->kernel()}}) {
    if (value->size() > kMaxNameBytes) {
      return grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          absl::StrCat(field, ": ", value->size(), " bytes, the limit is ", kMaxNameBytes));
    }
  }
  for (auto [field, n] :
       {std::pair{"constants", req->constants_size()}, {"dims", req->dims_size()}}) {
    if (n > kMaxEntries) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat(field, ": ", n, " entries, the limit is ", kMaxEntries));
    }
  }
  if (req->solver_timeout_ms() < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "solver_timeout_ms must be >= 0");
  }
  dsl::CheckOptions check;
  for (const auto& [k, v] : req->constants()) check.consts[k] = absl::StrCat(v);
  VerifyOptions vo;
  for (const auto& [k, v] : req->dims()) {
    if (v < 1 || v > (int64_t{1} << 30)) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat("dim ", k, " must be in [1, 2^30]"));
    }
    vo.dims[k] = v;
  }
  int t = req->solver_timeout_ms() == 0 ? opt_.default_solver_timeout_ms : req->solver_timeout_ms();
  vo.solver_timeout_ms = static_cast<unsigned>(std::clamp(t, 1, opt_.max_solver_timeout_ms));
  // The server's cap bounds the budget; the client's deadline can only cut it.
  int64_t budget = std::min(opt_.default_deadline_ms, opt_.max_request_ms);
  auto deadline = ctx->deadline();
  if (deadline != std::chrono::system_clock::time_point::max()) {
    auto left = deadline - std::chrono::system_clock::now();
    if (left <= std::chrono::milliseconds(0))
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "deadline already passed");
    if (left < std::chrono::milliseconds(opt_.max_request_ms)) {
      budget = std::chrono::duration_cast<std::chrono::milliseconds>(left).count();
    } else {
      budget = opt_.max_request_ms;
    }
    budget = std::max<int64_t>(budget, 1);
  }
  vo.deadline_ms = budget;
  vo.kernel = req->kernel();
  vo.solver_timeout_ms = static_cast<unsigned>(std::min<int64_t>(vo.solver_timeout_ms, budget));
  std::string name = req->file_name().empty() ? "kernel.py" : req->file_name();
  absl::StatusOr<Report> r = VerifySource(name, req->source(), check, vo);
  if (!r.ok()) {
    resp->set_verified(false);
    v1::Diagnostic* d = resp->add_diagnostics();
    d->set_severity(v1::Diagnostic::ERROR);
    d->set_check("input");
    d->set_message(std::string(r.status().message()));
    d->mutable_location()->set_file(name);
    return grpc::Status::OK;
  }
  Fill(*r, resp);
  return grpc::Status::OK;
}

VerifierServer::VerifierServer(ServiceOptions o) : opt_(std::move(o)) {}
VerifierServer::~VerifierServer() { Stop(); }

absl::StatusOr<std::string> VerifierServer::Start() {
  auto credentials = auth::MakeServerCredentials(opt_.tls);
  if (!credentials.ok()) return credentials.status();
  service_ = std::make_unique<VerifierServiceImpl>(opt_);
  grpc::ServerBuilder b;
  int port = 0;
  b.AddListeningPort(opt_.listen, *credentials, &port);
  b.SetMaxReceiveMessageSize(static_cast<int>(opt_.max_source_bytes + (64 << 10)));
  b.RegisterService(service_.get());
  server_ = b.BuildAndStart();
  if (!server_ || port == 0) {
    server_.reset();
    return absl::UnavailableError(absl::StrCat("cannot listen on ", opt_.listen));
  }
  return absl::StrCat(opt_.listen.substr(0, opt_.listen.rfind(':')), ":", port);
}

void VerifierServer::Wait() {
  if (server_) server_->Wait();
}

void VerifierServer::Shutdown() {
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
}

void VerifierServer::Stop() {
  Shutdown();
  server_.reset();
}

}  // namespace argus::verifier
