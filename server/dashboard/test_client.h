// server/dashboard/test_client.h: a raw-socket HTTP client for tests:
// sends bytes as given, returns everything the server sent until it closed.
//
// Thread safety: the functions are thread-safe.
#ifndef ARGUS_SERVER_DASHBOARD_TEST_CLIENT_H_
#define ARGUS_SERVER_DASHBOARD_TEST_CLIENT_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace argus::http {

inline int PortOf(const std::string& addr) { return std::stoi(addr.substr(addr.rfind(':') + 1)); }

// A TCP connection to 127.0.0.1:port; -1 when refused.
inline int ConnectLoopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

inline std::string RawExchange(int port, const std::string& data, int timeout_ms = 3000,
                               bool half_close = false) {
  int fd = ConnectLoopback(port);
  if (fd < 0) return "";
  (void)!send(fd, data.data(), data.size(), MSG_NOSIGNAL);
  if (half_close) shutdown(fd, SHUT_WR);
  std::string out;
  char buf[4096];
  while (true) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) break;
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

// GET path; returns the whole response.
inline std::string HttpGet(int port, const std::string& path, const std::string& extra = "") {
  return RawExchange(port, "GET " + path + " HTTP/1.1\r\nHost: t\r\n" + extra + "\r\n");
}

// The body of a response.
inline std::string BodyOf(const std::string& resp) {
  auto p = resp.find("\r\n\r\n");
  return p == std::string::npos ? "" : resp.substr(p + 4);
}

}  // namespace argus::http

#endif  // ARGUS_SERVER_DASHBOARD_TEST_CLIENT_H_
