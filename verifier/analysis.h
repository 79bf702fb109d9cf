// verifier/analysis.h: what an analysis sees of the walk (internal to
// argus_verifier).
//
// The walker (walker.h) executes a kernel abstractly and calls its analyses
// at each op of the families they subscribe to, at each memory access and
// shared-memory read it executes, at loops and branches, and after the walk.
// Each analysis keeps its own state and adds its obligations to the report;
// the order in which the walker calls them is the order in which they were
// added, which is the order of their findings.
//
// Thread safety: an analysis belongs to one walker (one thread, one kernel).
#ifndef ARGUS_VERIFIER_ANALYSIS_H_
#define ARGUS_VERIFIER_ANALYSIS_H_

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "dsl/ir.h"
#include "verifier/domain.h"

namespace argus::verifier {
struct Report;
}  // namespace argus::verifier

namespace argus::verifier::engine {

class Walker;

// A set of op families (bit i: OpFamily i).
class FamilySet {
 public:
  FamilySet() = default;
  FamilySet(std::initializer_list<dsl::ir::OpFamily> fs) {
    for (dsl::ir::OpFamily f : fs) bits_ |= Bit(f);
  }
  bool Has(dsl::ir::OpFamily f) const { return (bits_ & Bit(f)) != 0; }

 private:
  static uint32_t Bit(dsl::ir::OpFamily f) { return uint32_t{1} << static_cast<int>(f); }
  uint32_t bits_ = 0;
};

class Analysis {
 public:
  virtual ~Analysis() = default;

  // The op families whose ops Before and After see.
  virtual FamilySet Families() const { return {}; }
  // The walk begins (the thread, block and iteration terms exist).
  virtual void Start() {}
  // An op of a subscribed family, before the walker executes it (its
  // operands' values are those it reads).
  virtual void Before(const Op& op) {}
  // The same op after the walker executed it (its result is bound); not
  // called once the walk has stopped.
  virtual void After(const Op& op) {}
  // A memory access the walker executed (global or shared, any op).
  virtual void Accessed(const Access& a) {}
  // A shared-memory read (during the walk, or after it when the kernel's
  // reads wait for the whole walk: TMA loads).
  virtual void Read(const Event& rd) {}
  // Loops: entered (the loop is on the loop list, not yet on the stack),
  // its body walked (popped from the stack), left (the walker's counters
  // are at their values after the loop).
  virtual void EnterLoop(const LoopFrame& l) {}
  virtual void ExitLoopBody(const LoopFrame& l) {}
  virtual void ExitLoop(const LoopFrame& l) {}
  // The walker is done with the loop (the variables its body assigns are
  // havoced): what an analysis kept for it can go. (Its terms are released
  // where the walker's own are, so that Z3 numbers later terms alike.)
  virtual void LeaveLoop(const LoopFrame& l) {}
  // Branches: entered (the path condition includes `cond`), the else branch
  // begins (the walker's values are back at those before the if), both
  // merged (`then_vals`: the values at the end of the then branch; the
  // walker merges its scalars after the analyses).
  virtual void EnterIf(const expr& cond) {}
  virtual void EnterElse(const expr& cond) {}
  virtual void ExitIf(const expr& cond, const std::vector<Val>& then_vals) {}
  // The walker is done with the branch (its scalars merged).
  virtual void LeaveIf() {}
  // After the walk: the checks that need all of it; then, once the deferred
  // reads are checked, the ones that come after them; then a review of the
  // findings of every analysis.
  virtual void AfterWalk() {}
  virtual void AfterReads() {}
  virtual void Review(Report* report) {}
};

}  // namespace argus::verifier::engine

#endif  // ARGUS_VERIFIER_ANALYSIS_H_
