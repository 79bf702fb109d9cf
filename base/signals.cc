#include "base/signals.h"

#include <pthread.h>
#include <signal.h>

#include <thread>

namespace argus {

void OnTerminationSignal(std::function<void()> handler) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set, handler = std::move(handler)] {
    int sig = 0;
    sigwait(&set, &sig);
    handler();
  }).detach();
}

}  // namespace argus
