#include "gpu_worker/verifier_client.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace argus::worker {

using nlohmann::json;

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

json ReportFromResponse(const v1::VerifyResponse& r) {
  json report = json::parse(r.report_json(), nullptr, false);
  if (report.is_discarded() || !report.is_object()) {
    report = {
        {"obligations", r.obligations()}, {"proved", r.proved()}, {"findings", json::array()}};
    for (const v1::Diagnostic& d : r.diagnostics()) {
      report["findings"].push_back({{"severity", d.severity() == v1::Diagnostic::ERROR
                                                     ? "error"
                                                     : v1::Diagnostic::Severity_Name(d.severity())},
                                    {"check", d.check()},
                                    {"message", d.message()},
                                    {"line", d.location().line()},
                                    {"col", d.location().column()}});
    }
  }
  report["verified"] = r.verified();
  return report;
}

VerifierClient::VerifierClient(VerifierClientOptions options) : options_(std::move(options)) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  channel_ = Dial(options_.address, options_.dial, args);
  stub_ = v1::VerifierService::NewStub(channel_);
}

absl::StatusOr<json> VerifierClient::Verify(const KernelSpec& k, int64_t* waited_ms) {
  v1::VerifyRequest req;
  req.set_file_name(absl::StrCat(k.kernel.empty() ? "kernel" : k.kernel, ".py"));
  req.set_source(k.source);
  // One kernel: verify just it (its file may hold variants). A pipeline runs
  // several kernels of the source, so every kernel is verified.
  if (k.pipeline.empty()) req.set_kernel(k.kernel);
  for (const auto& [name, v] : k.constants) {
    int64_t i;
    if (absl::SimpleAtoi(v, &i)) (*req.mutable_constants())[name] = i;
  }
  for (const auto& [name, v] : k.dims) (*req.mutable_dims())[name] = v;
  const int64_t start = NowMs();
  int64_t backoff = options_.retry_ms;
  bool warned = false;
  while (true) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::milliseconds(options_.rpc_deadline_ms));
    ctx.set_wait_for_ready(false);
    v1::VerifyResponse resp;
    grpc::Status st = stub_->Verify(&ctx, req, &resp);
    if (st.ok()) {
      if (waited_ms) *waited_ms = warned ? NowMs() - start : 0;
      if (warned)
        spdlog::info("verifier {} is back after {} ms", options_.address, NowMs() - start);
      return ReportFromResponse(resp);
    }
    bool retry = st.error_code() == grpc::StatusCode::UNAVAILABLE ||
                 st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
    if (!retry)
      return absl::Status(static_cast<absl::StatusCode>(st.error_code()),
                          absl::StrCat("verifier ", options_.address, ": ", st.error_message()));
    unavailable_attempts_.fetch_add(1);
    if (!warned) {
      spdlog::warn("verifier {} unavailable ({}); waiting for it", options_.address,
                   st.error_message());
      warned = true;
    }
    if (waited_ms) *waited_ms = NowMs() - start;
    if (stop_.load() || (options_.max_wait_ms > 0 && NowMs() - start >= options_.max_wait_ms))
      return absl::UnavailableError(absl::StrCat("verifier ", options_.address, " unavailable for ",
                                                 NowMs() - start, " ms: ", st.error_message()));
    for (int64_t slept = 0; slept < backoff && !stop_.load(); slept += 50)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    backoff = std::min<int64_t>(backoff * 2, 5000);
  }
}

}  // namespace argus::worker
