// server/clock.h: wall-clock milliseconds since the Unix epoch.
// Thread safety: pure function.
#ifndef ARGUS_SERVER_CLOCK_H_
#define ARGUS_SERVER_CLOCK_H_

#include <chrono>
#include <cstdint>

namespace argus::server {

inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace argus::server

#endif  // ARGUS_SERVER_CLOCK_H_
