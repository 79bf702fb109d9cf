// verifier/analysis/epilogue.h: the TMA-store epilogue
// (docs/dsl.md "TMA store epilogue", docs/verifier.md): tma_store,
// tma_store_commit, tma_store_wait, warpgroup_barrier and the fragment stores
// (store(acc, buf, at=)) and fences around them.
//
// The ops are recorded during the walk (Record) and checked after it
// (AfterWalk) for the modeled shape: one tma_store and one commit in the
// same loop nest, issued in every iteration by the threads that issue them, so
// that the bulk group of the store in linearized iteration N is N; the stored
// buffer written only by store(..., at=) in that loop. Then, with Z3 over two
// symbolic thread/iteration instances:
// - bulk_store_reuse: no write to an element a store of an earlier iteration
//   (or earlier in this one) reads, unless the storing thread's
//   tma_store_wait(n) in the writer's iteration covered its group and a
//   warp-group barrier after that wait precedes the write (same warp group);
// - bulk_store_race: two warp groups never write the same buffer element;
// - bulk_store_stale / warpgroup_divergence: the store reads only elements its
//   warp group wrote in the same iteration (the sub-tile lies in the group's
//   part of the accumulator, the same buffer and sub-tile in every thread);
// - proxy_fence / bulk_store_unordered: fence_proxy_async() after the
//   fragment stores and a warp-group barrier after it, before the store;
// - bulk_store_drain: tma_store_wait(0) after the loop in every storing thread.
// Anything else is `unsupported`. The reduce form (tma_store(..., reduce="add"),
// op.sub == 1) is checked exactly like the plain store: its data flow into the
// tile is the same; that the adds of all blocks into one tile cover K once and
// land on zeros is global memory across blocks and launches, not modeled here
// (docs/verifier.md).
// tag_flow checks where the stored elements land.
//
// Thread safety: as the walker's (one thread, one kernel).
#ifndef ARGUS_VERIFIER_ANALYSIS_EPILOGUE_H_
#define ARGUS_VERIFIER_ANALYSIS_EPILOGUE_H_

#include <optional>
#include <string>
#include <vector>

#include "verifier/analysis/analysis_base.h"
#include "verifier/analysis/tag_flow.h"

namespace argus::verifier::engine {

class Epilogue : public AnalysisBase {
 public:
  Epilogue(Walker& w, TagFlow& tag_flow) : AnalysisBase(w), tag_flow_(tag_flow) {}
  FamilySet Families() const override {
    return {dsl::ir::OpFamily::kFragment, dsl::ir::OpFamily::kTma, dsl::ir::OpFamily::kBarrier};
  }
  void Before(const Op& op) override;
  void After(const Op& op) override;
  void Accessed(const Access& a) override;
  void AfterWalk() override;

 private:
  struct EpiOp {
    enum Kind { kWrite, kStore, kCommit, kWait, kWgBar, kFence } kind = kWrite;
    const Op* op = nullptr;
    int pos = 0;
    std::vector<int> loops;
    std::optional<expr> pc;
    View view;                          // kWrite: destination; kStore: shared source
    std::optional<expr> at_i, at_j;     // kWrite with at=
    std::optional<dsl::FragGeom> geom;  // kWrite
    int64_t n = 0;                      // kWait
    View gview;                         // kStore: the global tile
  };
  // The modeled epilogue: the store S and its commit Cm in loops L, the
  // buffer's name, the fragment stores into it, the waits, barriers and
  // fences in L, the waits after the loops, and S's linearized iteration.
  struct Plan {
    const EpiOp* S = nullptr;
    const EpiOp* Cm = nullptr;
    std::vector<int> L;
    std::string bname;
    std::vector<const EpiOp*> ws, waits, bars, fences, drains;
    std::optional<expr> nA;
  };
  void Record(const Op& op, EpiOp::Kind kind);
  // The linearized iteration number of `loops` (outer trip counts free, inner
  // ones constant), in the variables of `sub`; nullopt when not linear.
  std::optional<expr> EpiIter(const std::vector<int>& loops, const Inst* in);
  bool Collect(Plan* p);
  void CheckGroups(const Plan& p);
  void CheckReuse(const Plan& p);
  void CheckStoreReads(const Plan& p);
  void CheckDrain(const Plan& p);

  TagFlow& tag_flow_;
  std::vector<EpiOp> epi_;
  View store_tile_;  // the global tile of the tma_store being walked
};

}  // namespace argus::verifier::engine

#endif  // ARGUS_VERIFIER_ANALYSIS_EPILOGUE_H_
