#include "server/dashboard/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <random>
#include <thread>

#include "server/dashboard/test_client.h"

namespace argus::http {
namespace {

Response Echo(const Request& r) {
  if (r.path == "/throw") throw std::runtime_error("boom");
  return Response::Text(200, r.method + " " + r.path + " q=" + r.Query("q") + " body=" + r.body);
}

TEST_CASE("http: serves a request and answers malformed ones with 4xx") {
  ServerOptions opt;
  opt.read_timeout_ms = 300;
  opt.max_header_bytes = 1024;
  opt.max_body_bytes = 64;
  Server server(Echo, opt);
  auto addr = server.Start("127.0.0.1:0");
  REQUIRE(addr.ok());
  int port = PortOf(*addr);

  std::string r = RawExchange(port, "GET /a%20b?q=x+y%21 HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(r.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(r.find("GET /a b q=x y! body=") != std::string::npos);

  r = RawExchange(port, "POST /p HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello");
  CHECK(r.find("body=hello") != std::string::npos);

  CHECK(RawExchange(port, "garbage\r\n\r\n").rfind("HTTP/1.1 400", 0) == 0);
  CHECK(RawExchange(port, "GET nopath HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 400", 0) == 0);
  CHECK(RawExchange(port, "GET / HTTP/2.0\r\n\r\n").rfind("HTTP/1.1 505", 0) == 0);
  CHECK(RawExchange(port, "GET /%zz HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 400", 0) == 0);
  CHECK(RawExchange(port, "GET / HTTP/1.1\r\nbad header\r\n\r\n").rfind("HTTP/1.1 400", 0) == 0);
  CHECK(RawExchange(port, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")
            .rfind("HTTP/1.1 501", 0) == 0);
  CHECK(
      RawExchange(port, "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n").rfind("HTTP/1.1 400", 0) ==
      0);
  CHECK(RawExchange(port, "POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\n")
            .rfind("HTTP/1.1 413", 0) == 0);
  CHECK(RawExchange(port, "GET / HTTP/1.1\r\nX: " + std::string(4000, 'a') + "\r\n\r\n")
            .rfind("HTTP/1.1 431", 0) == 0);
  // A request that never finishes times out instead of holding the thread.
  CHECK(RawExchange(port, "GET / HTTP/1.1\r\nHost: x\r\n").rfind("HTTP/1.1 408", 0) == 0);
  // A short body also times out.
  CHECK(RawExchange(port, "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc")
            .rfind("HTTP/1.1 408", 0) == 0);
  CHECK(RawExchange(port, "GET /throw HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 500", 0) == 0);
  // HEAD gets the headers only.
  r = RawExchange(port, "HEAD /h HTTP/1.1\r\n\r\n");
  CHECK(r.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(r.find("body=") == std::string::npos);

  // Random bytes: every answer is a well-formed status line, or a close; the
  // server keeps serving afterwards.
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) {
    std::string junk(rng() % 300, '\0');
    for (auto& c : junk) c = static_cast<char>(rng() % 256);
    if (i % 2) junk += "\r\n\r\n";
    std::string ans = RawExchange(port, junk, 1000, /*half_close=*/true);
    if (!ans.empty()) CHECK(ans.rfind("HTTP/1.1 4", 0) == 0);
  }
  CHECK(RawExchange(port, "GET /still HTTP/1.1\r\n\r\n").find("GET /still") != std::string::npos);
  server.Shutdown();
}

TEST_CASE("http: many concurrent clients are all answered") {
  Server server(Echo, {});
  auto addr = server.Start("127.0.0.1:0");
  REQUIRE(addr.ok());
  int port = PortOf(*addr);
  std::vector<std::thread> ts;
  std::atomic<int> ok{0};
  for (int i = 0; i < 16; ++i) {
    ts.emplace_back([&, i] {
      for (int j = 0; j < 10; ++j) {
        auto r = RawExchange(port, "GET /c" + std::to_string(i) + " HTTP/1.1\r\n\r\n");
        if (r.find("GET /c" + std::to_string(i)) != std::string::npos) ++ok;
      }
    });
  }
  for (auto& t : ts) t.join();
  CHECK(ok == 160);
}

TEST_CASE("http: a bad listen address is a clear error") {
  Server server(Echo, {});
  auto addr = server.Start("nocolon");
  CHECK(!addr.ok());
  Server s2(Echo, {});
  CHECK(!s2.Start("256.1.1.1:80").ok());
}

}  // namespace
}  // namespace argus::http
