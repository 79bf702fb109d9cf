#include "planner/http_client.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "planner/llm_endpoints.h"

namespace argus::planner {
namespace {

int64_t Now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Waits until fd is ready for `events` or the deadline passes.
absl::Status Wait(int fd, short events, int64_t deadline) {
  int64_t left = deadline - Now();
  if (left <= 0) return absl::DeadlineExceededError("the LLM endpoint timed out");
  pollfd p{fd, events, 0};
  int r = ::poll(&p, 1, static_cast<int>(left));
  if (r == 0) return absl::DeadlineExceededError("the LLM endpoint timed out");
  if (r < 0) return absl::UnavailableError("poll failed");
  return absl::OkStatus();
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

absl::StatusOr<HttpResponse> PostJson(const std::string& url, const std::string& body,
                                      const std::string& bearer_token, int64_t timeout_ms,
                                      int64_t max_response_bytes) {
  if (auto st = ValidateLlmUrl(url, "LLM endpoint"); !st.ok()) return st;
  for (char c : bearer_token) {
    if (static_cast<unsigned char>(c) < 0x21 || c == 0x7f)
      return absl::InvalidArgumentError("the LLM API key holds a space or control character");
  }
  std::string rest = url.substr(7);
  size_t slash = rest.find('/');
  std::string hostport = rest.substr(0, slash);
  std::string path = slash == std::string::npos ? "/" : rest.substr(slash);
  std::string host = hostport, port = "80";
  if (size_t c = hostport.rfind(':'); c != std::string::npos) {
    host = hostport.substr(0, c);
    port = hostport.substr(c + 1);
  }
  int64_t deadline = Now() + timeout_ms;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int e = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); e != 0) {
    return absl::UnavailableError(absl::StrCat("LLM endpoint ", hostport, ": ", gai_strerror(e)));
  }
  Fd sock;
  sock.fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int rc = sock.fd < 0 ? -1 : ::connect(sock.fd, res->ai_addr, res->ai_addrlen);
  ::freeaddrinfo(res);
  if (sock.fd < 0) return absl::UnavailableError("socket failed");
  if (rc < 0 && errno != EINPROGRESS) {
    return absl::UnavailableError(absl::StrCat("LLM endpoint ", hostport, ": connect failed"));
  }
  if (auto st = Wait(sock.fd, POLLOUT, deadline); !st.ok()) return st;
  int err = 0;
  socklen_t len = sizeof(err);
  ::getsockopt(sock.fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) {
    return absl::UnavailableError(absl::StrCat("LLM endpoint ", hostport, ": connection refused"));
  }
  std::string req =
      absl::StrCat("POST ", path, " HTTP/1.1\r\nHost: ", hostport,
                   "\r\nContent-Type: application/json\r\nContent-Length: ", body.size(),
                   "\r\nConnection: close\r\n");
  if (!bearer_token.empty()) absl::StrAppend(&req, "Authorization: Bearer ", bearer_token, "\r\n");
  absl::StrAppend(&req, "\r\n", body);
  for (size_t sent = 0; sent < req.size();) {
    if (auto st = Wait(sock.fd, POLLOUT, deadline); !st.ok()) return st;
    ssize_t n = ::send(sock.fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN) return absl::UnavailableError("send to the LLM endpoint failed");
    if (n > 0) sent += n;
  }
  std::string resp;
  char buf[16384];
  while (true) {
    if (auto st = Wait(sock.fd, POLLIN, deadline); !st.ok()) return st;
    ssize_t n = ::recv(sock.fd, buf, sizeof(buf), 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN) continue;
      return absl::UnavailableError("recv from the LLM endpoint failed");
    }
    resp.append(buf, n);
    if (static_cast<int64_t>(resp.size()) > max_response_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the LLM endpoint's response is over ", max_response_bytes, " bytes; not read further"));
    }
  }
  size_t head_end = resp.find("\r\n\r\n");
  if (!absl::StartsWith(resp, "HTTP/1.") || head_end == std::string::npos || resp.size() < 12) {
    return absl::DataLossError("the LLM endpoint sent a malformed HTTP response");
  }
  HttpResponse out;
  if (!absl::SimpleAtoi(resp.substr(9, 3), &out.status)) {
    return absl::DataLossError("the LLM endpoint sent a malformed HTTP status line");
  }
  std::string head = absl::AsciiStrToLower(resp.substr(0, head_end));
  out.body = resp.substr(head_end + 4);
  if (absl::StrContains(head, "transfer-encoding: chunked")) {
    std::string decoded;
    size_t p = 0;
    while (p < out.body.size()) {
      size_t eol = out.body.find("\r\n", p);
      if (eol == std::string::npos) break;
      uint64_t n = 0;
      if (!absl::SimpleHexAtoi(out.body.substr(p, eol - p), &n) || n == 0) break;
      decoded += out.body.substr(eol + 2, n);
      p = eol + 2 + n + 2;
    }
    out.body = decoded;
  }
  return out;
}

}  // namespace argus::planner
