// verifier/analysis/shared_reads.h: the reads of shared memory that ordinary
// stores and cp.async copies fill, against the writers that may provide
// their value (Walker::Candidates):
// - read_before_wait: a read whose most recent writer is an async copy
//   happens after a wait_group(n) covering its group (and, when another
//   thread issued it, after a barrier that follows the wait);
// - uninitialized_read: some earlier write reaches every element read;
// - proxy_fence: a wgmma reading ordinary stores has a fence_proxy_async()
//   after the writes and a barrier before the read.
// Buffers that TMA loads fill are tma_reads'.
//
// Thread safety: as the walker's (one thread, one kernel).
#ifndef ARGUS_VERIFIER_ANALYSIS_SHARED_READS_H_
#define ARGUS_VERIFIER_ANALYSIS_SHARED_READS_H_

#include "verifier/analysis/analysis_base.h"

namespace argus::verifier::engine {

class SharedReads : public AnalysisBase {
 public:
  explicit SharedReads(Walker& w) : AnalysisBase(w) {}
  void Read(const Event& rd) override;

 private:
  void CheckProxyFence(const Event& rd, const std::vector<Cand>& cands);
};

}  // namespace argus::verifier::engine

#endif  // ARGUS_VERIFIER_ANALYSIS_SHARED_READS_H_
