// libFuzzer target: the HTTP request-head parser and the response writer
// must accept any bytes without crashing, and keep their invariants.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "server/dashboard/http_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string head(reinterpret_cast<const char*>(data), size);
  argus::http::Request req;
  argus::http::ParseError err;
  if (argus::http::ParseRequestHead(head, &req, &err)) {
    if (req.target.empty() || req.target[0] != '/') std::abort();
    std::string out =
        argus::http::SerializeResponse(argus::http::Response::Text(200, req.path), false);
    if (out.rfind("HTTP/1.1 200 OK\r\n", 0) != 0) std::abort();
  } else if (err.status < 400 || err.status > 505) {
    std::abort();
  }
  std::string decoded;
  (void)argus::http::PercentDecode(head, true, &decoded);
  return 0;
}
