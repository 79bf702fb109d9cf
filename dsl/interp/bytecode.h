// dsl/interp/bytecode.h: the interpreter's flat bytecode, compiled once per
// launch from a kernel's IR (and the device functions it calls).
//
// Every IR op with a run-time effect becomes one instruction (structured
// control flow becomes jumps); operands are pre-resolved to frame slots, view
// slots or fragment slots, so execution does no name lookups. Each
// instruction carries its op's family (ops.def), which the thread loop
// dispatches on, and the scope it synchronises (kThread when it does not).
//
// Thread safety: a Program is immutable once compiled.
#ifndef ARGUS_DSL_INTERP_BYTECODE_H_
#define ARGUS_DSL_INTERP_BYTECODE_H_

#include <cstdint>
#include <map>
#include <vector>

#include "dsl/interp/state.h"
#include "dsl/ir.h"

namespace argus::dsl::interp {

// Bytecode operations: each IR op's own code (ops.def order), then the
// variants the compiler picks where the operand types decide the work.
enum class Bc : uint8_t {
#define ARGUS_OP(Code, Spelling, Family, Target, Scope, Traits) k##Code,
#include "dsl/ops.def"
#undef ARGUS_OP
  kMovView,  // kMov of a view
  kMovFrag,  // kMov of a fragment
  kBinaryF,  // kBinary on floats (kBinary itself: on integers)
  kJmp,      // pc = imm
  kJz,       // if !a: pc = imm
  kForTest,  // a < b (step imm > 0) or a > b, else pc = c
  kForStep,  // dst += imm
  kHalt,     // the kernel (or the launch block) is done
};
inline Bc BcOf(ir::OpCode c) { return static_cast<Bc>(c); }

struct Insn {
  Bc code;
  uint8_t sub = 0;
  DType dt = DType::kI32;   // result type
  DType dt2 = DType::kI32;  // operand type (casts, compares)
  ir::OpFamily fam = ir::OpFamily::kScalar;
  ir::OpScope sync = ir::OpScope::kThread;  // who must reach it before it runs
  int32_t dst = -1, a = -1, b = -1, c = -1;
  int64_t imm = 0;
  Slot k{0};
  const ir::Op* op = nullptr;
};

struct FnCode {
  int entry = 0;
  int frame = 0;  // slots
  const ir::Function* fn = nullptr;
};

// Where a kernel's vars and allocations live at run time.
struct KernelSlots {
  std::vector<int> view_slot;  // kernel var -> view index (-1)
  std::vector<int> frag_slot;  // kernel var -> frag index (-1)
  int nviews = 0, nfrags = 0;
  // The kernel's kAllocShared, kAllocLocal and kMbarrier ops in program
  // order, and each one's index among them.
  std::vector<const ir::Op*> shared, local, mbars;
  std::map<const ir::Op*, int> shared_index, local_index, mbar_index;
};
KernelSlots AssignSlots(const ir::Function& kernel);

struct Program {
  std::vector<Insn> code;
  std::vector<FnCode> fns;  // by module function index
  int launch_entry = 0;     // the host-side block computing the grid
  int stack_size = 0;       // slots: every function's frame
  bool uses_wg_barrier = false;
};
// Compiles the kernel (module function `kernel_fn`), every device function
// and the kernel's launch block.
Program Compile(const ir::Module& m, int kernel_fn, const KernelSlots& slots);

}  // namespace argus::dsl::interp

#endif  // ARGUS_DSL_INTERP_BYTECODE_H_
