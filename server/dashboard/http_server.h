// server/dashboard/http_server.h: a small HTTP/1.1 server over POSIX sockets.
//
// Serves one handler function. Every connection carries one request and is
// closed after the response (Connection: close), which keeps the parser
// simple. One event-loop thread accepts connections and reads requests
// (poll, non-blocking sockets); only a complete request goes to a pool
// thread, so idle or slow (slowloris) connections cost a file descriptor,
// never a thread. A request must arrive whole within `read_timeout_ms` of
// the connection (else 408); at most `max_connections` are open at once, and
// one past it closes the oldest connection still sending its request (a
// fresh client is served; a flood evicts itself). Bounded everywhere: the
// request line and headers (`max_header_bytes`, else 431), the body
// (`max_body_bytes`, else 413), the complete requests waiting for a thread
// (`max_pending`, else 503). Malformed requests get 400, unsupported transfer
// encodings 501, unsupported versions 505; garbage never crashes or hangs the
// server.
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
  int max_pending = 64;       // complete requests waiting for a thread
  int max_connections = 256;  // open connections (reading, waiting or being served)
  int max_header_bytes = 16 * 1024;
  int max_body_bytes = 1 << 20;
  int read_timeout_ms = 5'000;  // the whole request, from the connection's accept
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
  // A connection whose request is still arriving (the event loop's).
  struct Incoming {
    int fd;
    int64_t deadline_ms;
    std::string buf;
  };
  // A connection handed to the pool with what it sent.
  struct Ready {
    int fd;
    std::string buf;
    bool timed_out;  // the request did not arrive whole in time
  };
  void EventLoop();
  void AcceptAll(std::vector<Incoming>* conns);
  void Enqueue(Ready ready);
  void CloseConnection(int fd);
  void WorkLoop();
  void Serve(const Ready& ready);

  Handler handler_;
  ServerOptions options_;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  std::atomic<bool> stopping_{false};
  std::atomic<int> open_{0};  // connections accepted and not yet closed
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Ready> pending_;
  std::thread acceptor_;
  std::vector<std::thread> pool_;
};

}  // namespace argus::http

#endif  // ARGUS_SERVER_DASHBOARD_HTTP_SERVER_H_
