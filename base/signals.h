// base/signals.h: orderly shutdown on SIGTERM / SIGINT.
//
// OnTerminationSignal() blocks SIGTERM and SIGINT in the calling thread (and
// so in every thread created after it) and starts a thread that waits for
// either and then runs `handler` once, outside signal context. Call it from
// main before starting other threads.
//
// Thread safety: call once per process.
#ifndef ARGUS_BASE_SIGNALS_H_
#define ARGUS_BASE_SIGNALS_H_

#include <functional>

namespace argus {

void OnTerminationSignal(std::function<void()> handler);

}  // namespace argus

#endif  // ARGUS_BASE_SIGNALS_H_
