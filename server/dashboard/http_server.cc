#include "server/dashboard/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "spdlog/spdlog.h"

namespace argus::http {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool IsTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

// Waits until fd is readable (or writable); false on timeout or error.
bool WaitFd(int fd, short events, int64_t deadline_ms) {
  while (true) {
    int64_t left = deadline_ms - NowMs();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    int r = poll(&p, 1, static_cast<int>(left));
    if (r > 0) return (p.revents & (events | POLLHUP | POLLERR)) != 0;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}

void WriteAll(int fd, const std::string& data, int timeout_ms) {
  int64_t deadline = NowMs() + timeout_ms;
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitFd(fd, POLLOUT, deadline)) return;
      continue;
    }
    return;
  }
}

}  // namespace

std::string Request::Header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

std::string Request::Query(const std::string& name) const {
  auto it = query.find(name);
  return it == query.end() ? "" : it->second;
}

Response Response::Text(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

Response Response::Json(int status, std::string body) {
  Response r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

Response Response::Html(int status, std::string body) {
  Response r;
  r.status = status;
  r.content_type = "text/html; charset=utf-8";
  r.body = std::move(body);
  return r;
}

const char* StatusText(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

bool PercentDecode(const std::string& in, bool plus_is_space, std::string* out) {
  out->clear();
  out->reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      int hi = absl::ascii_isxdigit(static_cast<unsigned char>(in[i + 1])) ? 1 : 0;
      int lo = absl::ascii_isxdigit(static_cast<unsigned char>(in[i + 2])) ? 1 : 0;
      if (!hi || !lo) return false;
      *out += static_cast<char>(std::stoi(in.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      *out += ' ';
    } else {
      *out += c;
    }
  }
  return true;
}

bool ParseRequestHead(const std::string& head, Request* req, ParseError* err) {
  auto fail = [err](int status, std::string msg) {
    *err = {status, std::move(msg)};
    return false;
  };
  std::vector<std::string> lines = absl::StrSplit(head, "\r\n");
  if (lines.empty() || lines[0].empty()) return fail(400, "empty request line");
  std::vector<std::string> parts = absl::StrSplit(lines[0], ' ');
  if (parts.size() != 3) return fail(400, "request line must be METHOD TARGET VERSION");
  const std::string& method = parts[0];
  if (method.empty() || method.size() > 16) return fail(400, "bad method");
  for (char c : method) {
    if (!IsTokenChar(c)) return fail(400, "bad method");
  }
  if (parts[2] != "HTTP/1.1" && parts[2] != "HTTP/1.0") {
    if (parts[2].rfind("HTTP/", 0) == 0) return fail(505, "only HTTP/1.0 and HTTP/1.1");
    return fail(400, "bad HTTP version");
  }
  const std::string& target = parts[1];
  if (target.empty() || target[0] != '/') return fail(400, "request target must start with /");
  for (char c : target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return fail(400, "bad request target");
  }
  req->method = method;
  req->target = target;
  std::string raw_path = target.substr(0, target.find('?'));
  if (!PercentDecode(raw_path, false, &req->path) || req->path.find('\0') != std::string::npos) {
    return fail(400, "bad percent-encoding in path");
  }
  if (auto q = target.find('?'); q != std::string::npos) {
    for (absl::string_view kv : absl::StrSplit(target.substr(q + 1), '&', absl::SkipEmpty())) {
      std::string k, v;
      auto eq = kv.find('=');
      if (!PercentDecode(std::string(kv.substr(0, eq)), true, &k) ||
          !PercentDecode(eq == absl::string_view::npos ? "" : std::string(kv.substr(eq + 1)), true,
                         &v)) {
        return fail(400, "bad percent-encoding in query");
      }
      req->query[k] = v;
    }
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.empty()) return fail(400, "empty header line");
    if (line[0] == ' ' || line[0] == '\t') return fail(400, "obsolete header line folding");
    auto colon = line.find(':');
    if (colon == std::string::npos || colon == 0) return fail(400, "header line without a name");
    std::string name = line.substr(0, colon);
    for (char c : name) {
      if (!IsTokenChar(c)) return fail(400, "bad header name");
    }
    std::string value(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    for (char c : value) {
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f)
        return fail(400, "control character in header value");
    }
    name = absl::AsciiStrToLower(name);
    if (name == "content-length" && req->headers.count(name) && req->headers[name] != value) {
      return fail(400, "conflicting Content-Length headers");
    }
    req->headers[name] = value;
  }
  if (req->headers.count("transfer-encoding")) {
    return fail(501, "Transfer-Encoding is not supported; send Content-Length");
  }
  if (req->headers.count("content-length")) {
    const std::string& cl = req->headers["content-length"];
    uint64_t n;
    if (cl.empty() || cl.size() > 12 || !absl::SimpleAtoi(cl, &n) ||
        cl.find_first_not_of("0123456789") != std::string::npos) {
      return fail(400, "bad Content-Length");
    }
  }
  return true;
}

std::string SerializeResponse(const Response& resp, bool head_only) {
  std::string out = absl::StrCat("HTTP/1.1 ", resp.status, " ", StatusText(resp.status), "\r\n");
  absl::StrAppend(&out, "Content-Type: ", resp.content_type, "\r\n");
  absl::StrAppend(&out, "Content-Length: ", resp.body.size(), "\r\n");
  absl::StrAppend(&out, "Connection: close\r\n");
  absl::StrAppend(&out, "Cache-Control: no-store\r\n");
  absl::StrAppend(&out, "X-Content-Type-Options: nosniff\r\n");
  for (const auto& [k, v] : resp.headers) absl::StrAppend(&out, k, ": ", v, "\r\n");
  out += "\r\n";
  if (!head_only) out += resp.body;
  return out;
}

Server::Server(Handler handler, ServerOptions options)
    : handler_(std::move(handler)), options_(options) {}

Server::~Server() { Shutdown(); }

absl::StatusOr<std::string> Server::Start(const std::string& listen) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("--http: expected HOST:PORT, got '", listen, "'"));
  }
  std::string host = listen.substr(0, colon), port = listen.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &res);
      rc != 0) {
    return absl::InvalidArgumentError(absl::StrCat("--http ", listen, ": ", gai_strerror(rc)));
  }
  std::string error = "no address";
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd, 128) == 0) {
      listen_fd_ = fd;
      break;
    }
    error = std::strerror(errno);
    close(fd);
  }
  freeaddrinfo(res);
  if (listen_fd_ < 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", listen, ": ", error));
  }
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len);
  int bound_port = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                            : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  if (pipe2(wake_pipe_, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  acceptor_ = std::thread([this] { EventLoop(); });
  for (int i = 0; i < std::max(1, options_.threads); ++i) {
    pool_.emplace_back([this] { WorkLoop(); });
  }
  std::string shown = listen.substr(0, colon);
  return absl::StrCat(shown, ":", bound_port);
}

void Server::Shutdown() {
  if (stopping_.exchange(true)) return;
  if (wake_pipe_[1] >= 0) {
    char c = 0;
    (void)!write(wake_pipe_[1], &c, 1);
  }
  cv_.notify_all();
  if (acceptor_.joinable()) acceptor_.join();
  for (auto& t : pool_) {
    if (t.joinable()) t.join();
  }
  for (const Ready& r : pending_) CloseConnection(r.fd);
  pending_.clear();
  if (listen_fd_ >= 0) close(listen_fd_);
  for (int& fd : wake_pipe_) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  listen_fd_ = -1;
}

namespace {

// Whether `buf` holds a whole request: its head and the body its
// Content-Length announces. A head too large or unparsable, or a body over
// the limit, is "whole" too: the pool thread answers it with its error.
bool RequestComplete(const std::string& buf, const ServerOptions& o) {
  size_t head_end = buf.find("\r\n\r\n");
  if (head_end == std::string::npos) return buf.size() > static_cast<size_t>(o.max_header_bytes);
  if (head_end > static_cast<size_t>(o.max_header_bytes)) return true;
  Request req;
  ParseError err;
  if (!ParseRequestHead(buf.substr(0, head_end), &req, &err)) return true;
  uint64_t length = 0;
  if (auto cl = req.Header("content-length"); !cl.empty()) (void)absl::SimpleAtoi(cl, &length);
  if (length > static_cast<uint64_t>(o.max_body_bytes)) return true;
  return buf.size() - head_end - 4 >= length;
}

}  // namespace

void Server::CloseConnection(int fd) {
  close(fd);
  open_.fetch_sub(1);
}

void Server::AcceptAll(std::vector<Incoming>* conns) {
  while (true) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR) continue;
      if (errno == EMFILE || errno == ENFILE) {
        // Out of descriptors: the oldest unfinished request makes room.
        if (conns->empty()) return;
        CloseConnection(conns->front().fd);
        conns->erase(conns->begin());
        continue;
      }
      return;  // EAGAIN: none left
    }
    open_.fetch_add(1);
    if (open_.load() > options_.max_connections) {
      if (!conns->empty()) {
        // The oldest connection still sending its request has had the most
        // time: it goes, so that a flood of idle connections cannot lock out
        // a client that sends its request at once.
        CloseConnection(conns->front().fd);
        conns->erase(conns->begin());
      } else {
        WriteAll(fd, SerializeResponse(Response::Text(503, "server busy\n"), false), 200);
        CloseConnection(fd);
        continue;
      }
    }
    conns->push_back({fd, NowMs() + options_.read_timeout_ms, {}});
  }
}

void Server::Enqueue(Ready ready) {
  std::unique_lock lock(mu_);
  if (static_cast<int>(pending_.size()) >= options_.max_pending) {
    lock.unlock();
    WriteAll(ready.fd, SerializeResponse(Response::Text(503, "server busy\n"), false), 200);
    CloseConnection(ready.fd);
    return;
  }
  pending_.push_back(std::move(ready));
  cv_.notify_one();
}

void Server::EventLoop() {
  std::vector<Incoming> conns;  // oldest first
  std::vector<pollfd> fds;
  char chunk[4096];
  while (!stopping_.load()) {
    fds.assign({{listen_fd_, POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}});
    int64_t now = NowMs();
    int64_t timeout = 1000;
    for (const Incoming& c : conns) {
      fds.push_back({c.fd, POLLIN, 0});
      timeout = std::min(timeout, std::max<int64_t>(0, c.deadline_ms - now));
    }
    int r = poll(fds.data(), fds.size(), static_cast<int>(timeout));
    if (r < 0 && errno != EINTR) break;
    now = NowMs();
    std::vector<Incoming> waiting;
    for (size_t i = 0; i < conns.size(); ++i) {
      Incoming& c = conns[i];
      bool closed = false, complete = false;
      if (r > 0 && fds[i + 2].revents != 0) {
        while (true) {  // drain what has arrived
          ssize_t n = recv(c.fd, chunk, sizeof(chunk), MSG_DONTWAIT);
          if (n > 0) {
            c.buf.append(chunk, static_cast<size_t>(n));
            if (c.buf.size() > static_cast<size_t>(options_.max_header_bytes) +
                                   static_cast<size_t>(options_.max_body_bytes) + 4) {
              break;
            }
            continue;
          }
          if (n < 0 && errno == EINTR) continue;
          closed = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
          break;
        }
        complete = RequestComplete(c.buf, options_);
      }
      if (complete) {
        Enqueue({c.fd, std::move(c.buf), false});
      } else if (closed || (now >= c.deadline_ms && c.buf.empty())) {
        CloseConnection(c.fd);  // gone, or idle past the deadline: nothing to answer
      } else if (now >= c.deadline_ms) {
        Enqueue({c.fd, std::move(c.buf), true});
      } else {
        waiting.push_back(std::move(c));
      }
    }
    conns.swap(waiting);
    if (r > 0 && (fds[0].revents & POLLIN)) AcceptAll(&conns);
  }
  for (const Incoming& c : conns) CloseConnection(c.fd);
}

void Server::WorkLoop() {
  while (true) {
    Ready ready;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_.load() || !pending_.empty(); });
      if (pending_.empty()) return;
      ready = std::move(pending_.front());
      pending_.pop_front();
    }
    Serve(ready);
    CloseConnection(ready.fd);
  }
}

void Server::Serve(const Ready& ready) {
  int fd = ready.fd;
  auto reply = [&](const Response& r, bool head_only = false) {
    WriteAll(fd, SerializeResponse(r, head_only), options_.write_timeout_ms);
  };
  const std::string& buf = ready.buf;
  size_t head_end = buf.find("\r\n\r\n");
  if (head_end == std::string::npos || head_end > static_cast<size_t>(options_.max_header_bytes)) {
    if (buf.size() > static_cast<size_t>(options_.max_header_bytes)) {
      return reply(Response::Text(431, "request head too large\n"));
    }
    return reply(Response::Text(408, "request timed out\n"));
  }
  Request req;
  ParseError err;
  if (!ParseRequestHead(buf.substr(0, head_end), &req, &err)) {
    return reply(Response::Text(err.status, err.message + "\n"));
  }
  uint64_t length = 0;
  if (auto cl = req.Header("content-length"); !cl.empty()) (void)absl::SimpleAtoi(cl, &length);
  if (length > static_cast<uint64_t>(options_.max_body_bytes)) {
    return reply(Response::Text(413, "request body too large\n"));
  }
  if (buf.size() - head_end - 4 < length) return reply(Response::Text(408, "request timed out\n"));
  req.body = buf.substr(head_end + 4, length);
  bool head_only = req.method == "HEAD";
  Response resp;
  try {
    resp = handler_(req);
  } catch (const std::exception& e) {
    spdlog::error("http {} {}: handler threw: {}", req.method, req.path, e.what());
    resp = Response::Text(500, "internal error\n");
  }
  reply(resp, head_only);
}

}  // namespace argus::http
