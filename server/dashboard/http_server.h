// server/dashboard/http_server.h: a small HTTP/1.1 server over POSIX sockets.
//
// Serves one handler function. Every connection carries one request and is
// closed after the response (Connection: close), which keeps the parser
// simple and makes a slow or hostile client cost one pool thread for at most
// `read_timeout_ms`. Bounded everywhere: the request line and headers
// (`max_header_bytes`, else 431), the body (`max_body_bytes`, else 413), the
// number of waiting connections (else 503). Malformed requests get 400,
// unsupported transfer encodings 501, unsupported versions 505; garbage never
// crashes or hangs the server.
//
// Thread safety: Start/Shutdown from one thread. The handler is called from
// pool threads concurrently and must be thread-safe.
#ifndef ARGUS_SERVER_DASHBOARD_HTTP_SERVER_H_
#define ARGUS_SERVER_DASHBOARD_HTTP_SERVER_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"

namespace argus::http {

struct Request {
  std::string method;                          // GET, POST, ...
  std::string target;                          // as sent: /path?query
  std::string path;                            // percent-decoded path
  std::map<std::string, std::string> query;    // decoded query parameters
  std::map<std::string, std::string> headers;  // lower-cased names
  std::string body;

  // The header's value, or "" when absent (name in lower case).
  std::string Header(const std::string& name) const;
  std::string Query(const std::string& name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers

  static Response Text(int status, std::string body);
  static Response Json(int status, std::string body);
  static Response Html(int status, std::string body);
};

using Handler = std::function<Response(const Request&)>;

struct ServerOptions {
  int threads = 4;
  int max_pending = 64;  // accepted connections waiting for a thread
  int max_header_bytes = 16 * 1024;
  int max_body_bytes = 1 << 20;
  int read_timeout_ms = 5'000;
  int write_timeout_ms = 5'000;
};

// The reason phrase of a status code ("Not Found").
const char* StatusText(int status);

// Parses the request head (request line and headers, without the final blank
// line). Returns the HTTP status to answer on failure (400, 501, 505) with a
// message. Exposed for tests and fuzzing.
struct ParseError {
  int status;
  std::string message;
};
bool ParseRequestHead(const std::string& head, Request* req, ParseError* err);
// Percent-decodes; false on a malformed escape. `plus_is_space` for queries.
bool PercentDecode(const std::string& in, bool plus_is_space, std::string* out);
// Serializes a response with Content-Length and Connection: close.
std::string SerializeResponse(const Response& resp, bool head_only);

class Server {
 public:
  Server(Handler handler, ServerOptions options = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port (port 0 picks a free one), starts the accept thread and
  // the pool. Returns the bound host:port.
  absl::StatusOr<std::string> Start(const std::string& listen);
  // Stops accepting, finishes requests in flight, joins the threads.
  void Shutdown();

 private:
  void AcceptLoop();
  void WorkLoop();
  void Serve(int fd);

  Handler handler_;
  ServerOptions options_;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<int> pending_;
  std::thread acceptor_;
  std::vector<std::thread> pool_;
};

}  // namespace argus::http

#endif  // ARGUS_SERVER_DASHBOARD_HTTP_SERVER_H_
