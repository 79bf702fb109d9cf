#include "dsl/interp/bytecode.h"

namespace argus::dsl::interp {
namespace {

using ir::OpCode;
using ir::OpFamily;

void CollectAllocs(const ir::Block& b, KernelSlots* s) {
  for (const ir::Op& op : b) {
    if (op.code == OpCode::kAllocShared) s->shared.push_back(&op);
    if (op.code == OpCode::kAllocLocal) s->local.push_back(&op);
    if (op.code == OpCode::kMbarrier) s->mbars.push_back(&op);
    for (const ir::Block& r : op.regions) CollectAllocs(r, s);
  }
}

void Index(const std::vector<const ir::Op*>& ops, std::map<const ir::Op*, int>* index) {
  for (size_t i = 0; i < ops.size(); ++i) (*index)[ops[i]] = static_cast<int>(i);
}

// The kernel body's allocations are indexed; elsewhere (a device function,
// which the checker keeps free of them) the first one stands in.
int IndexOf(const std::map<const ir::Op*, int>& index, const ir::Op& op) {
  auto it = index.find(&op);
  return it == index.end() ? 0 : it->second;
}

// Emits the instructions of one function's blocks into a Program. Each family
// fills in what its instructions need beyond the op's result and operands.
class Compiler {
 public:
  Compiler(const ir::Module& m, const KernelSlots& slots, Program* p) : m_(m), s_(slots), p_(*p) {}

  void Function(int index);
  void Block(const ir::Block& b, int fn);
  void Add(Insn in) { p_.code.push_back(in); }
  int Here() const { return static_cast<int>(p_.code.size()); }

 private:
  void Scalar(const ir::Op& op, int fn, Insn* in);
  void View(const ir::Op& op, Insn* in);
  void Memory(const ir::Op& op, Insn* in);
  // False for the ops that do nothing in the interpreter.
  bool Hopper(const ir::Op& op, Insn* in);
  void Barrier(const ir::Op& op, Insn* in);
  void Control(const ir::Op& op, int fn);
  void For(const ir::Op& op, int fn);
  void If(const ir::Op& op, int fn);
  void While(const ir::Op& op, int fn);
  // A control-flow instruction of `op`.
  static Insn Jump(Bc code, const ir::Op& op) {
    Insn in;
    in.code = code;
    in.fam = OpFamily::kControl;
    in.op = &op;
    return in;
  }
  const ir::Type& Ty(int fn, int v) const { return m_.functions[fn].vars[v].type; }

  const ir::Module& m_;
  const KernelSlots& s_;
  Program& p_;
};

void Compiler::Function(int index) {
  const ir::Function& f = m_.functions[index];
  p_.fns[index].entry = Here();
  p_.fns[index].fn = &f;
  p_.fns[index].frame = static_cast<int>(f.vars.size());
  Block(f.body, index);
  Insn end;
  end.code = f.is_kernel ? Bc::kHalt : Bc::kReturn;
  end.fam = OpFamily::kCall;
  Add(end);
}

void Compiler::Block(const ir::Block& b, int fn) {
  for (const ir::Op& op : b) {
    const ir::OpInfo& info = ir::Info(op.code);
    if (info.Has(ir::op_trait::kNoRuntime)) continue;
    Insn in;
    in.code = BcOf(op.code);
    in.fam = info.family;
    if (info.Has(ir::op_trait::kSync)) in.sync = info.scope;
    in.op = &op;
    in.dst = op.result;
    if (!op.operands.empty()) in.a = op.operands[0];
    if (op.operands.size() > 1) in.b = op.operands[1];
    if (op.operands.size() > 2) in.c = op.operands[2];
    in.sub = op.sub;
    if (op.result >= 0) in.dt = Ty(fn, op.result).dtype;
    bool emit = true;
    switch (info.family) {
      case OpFamily::kScalar:
        Scalar(op, fn, &in);
        break;
      case OpFamily::kView:
        View(op, &in);
        break;
      case OpFamily::kMemory:
        Memory(op, &in);
        break;
      case OpFamily::kFragment:
        if (op.code == OpCode::kFragment) in.dst = s_.frag_slot[op.result];
        break;
      case OpFamily::kFragmentMath:
      case OpFamily::kCollective:
        break;
      case OpFamily::kMbarrier:
      case OpFamily::kTma:
      case OpFamily::kWgmma:
        emit = Hopper(op, &in);
        break;
      case OpFamily::kBarrier:
        Barrier(op, &in);
        break;
      case OpFamily::kHint:  // scheduling hints: no effect on the results
      case OpFamily::kTag:
        emit = false;
        break;
      case OpFamily::kCall:
        if (op.code == OpCode::kCall) in.imm = op.ints[0];
        break;
      case OpFamily::kControl:
        Control(op, fn);
        emit = false;
        break;
    }
    if (emit) Add(in);
  }
}

void Compiler::Scalar(const ir::Op& op, int fn, Insn* in) {
  switch (op.code) {
    case OpCode::kConst:
      if (IsFloat(in->dt))
        in->k.f = op.fval;
      else
        in->k.i = op.ints.empty() ? 0 : op.ints[0];
      break;
    case OpCode::kMov:
      if (s_.view_slot[op.result] >= 0) {
        in->code = Bc::kMovView;
        in->dst = s_.view_slot[op.result];
        in->a = s_.view_slot[in->a];
      } else if (Ty(fn, op.result).is_frag()) {
        in->code = Bc::kMovFrag;
        in->dst = s_.frag_slot[op.result];
        in->a = s_.frag_slot[in->a];
      }
      break;
    case OpCode::kBinary:
      if (IsFloat(in->dt)) in->code = Bc::kBinaryF;
      break;
    case OpCode::kCompare:
    case OpCode::kCast:
      in->dt2 = Ty(fn, in->a).dtype;
      break;
    case OpCode::kSpecial:
      in->imm = op.ints.empty() ? 0 : op.ints[0];
      break;
    default:
      break;
  }
}

void Compiler::View(const ir::Op& op, Insn* in) {
  switch (op.code) {
    case OpCode::kAllocShared:
      in->dst = s_.view_slot[op.result];
      in->imm = IndexOf(s_.shared_index, op);
      break;
    case OpCode::kAllocLocal:
      in->dst = s_.view_slot[op.result];
      in->imm = IndexOf(s_.local_index, op);
      break;
    case OpCode::kExtent:
      in->a = s_.view_slot[in->a];
      break;
    default:
      break;
  }
}

void Compiler::Memory(const ir::Op& op, Insn* in) {
  switch (op.code) {
    case OpCode::kLoad:
    case OpCode::kBufferLoad:
    case OpCode::kStore:
      in->a = s_.view_slot[in->a];
      break;
    case OpCode::kWaitGroup:
      in->imm = op.ints[0];
      break;
    default:
      break;
  }
}

// mbarriers, TMA and wgmma. The interpreter's shared memory is coherent
// across proxies and it allocates no registers: fence_proxy_async and
// setmaxnreg do nothing here.
bool Compiler::Hopper(const ir::Op& op, Insn* in) {
  switch (op.code) {
    case OpCode::kFenceProxyAsync:
    case OpCode::kSetMaxNReg:
      return false;
    case OpCode::kMbarrier:
      in->imm = IndexOf(s_.mbar_index, op);
      break;
    case OpCode::kWgmmaWait:
    case OpCode::kTmaStoreWait:
      in->imm = op.ints[0];
      break;
    default:
      break;
  }
  return true;
}

void Compiler::Barrier(const ir::Op& op, Insn* in) {
  if (op.code == OpCode::kWarpgroupBarrier) p_.uses_wg_barrier = true;
  if (op.code == OpCode::kNamedBarrier) {
    in->imm = op.ints[0];
    in->sub = static_cast<uint8_t>(op.ints[1]);
  }
}

void Compiler::Control(const ir::Op& op, int fn) {
  switch (op.code) {
    case OpCode::kFor:
      For(op, fn);
      break;
    case OpCode::kIf:
      If(op, fn);
      break;
    case OpCode::kWhile:
      While(op, fn);
      break;
    default:
      break;
  }
}

// i = lo; hi' = hi; test: if !(i < hi') goto end; body; i += step; goto test.
void Compiler::For(const ir::Op& op, int fn) {
  int hi = p_.fns[fn].frame++;
  Insn mv;
  mv.code = Bc::kMov;
  mv.dst = op.result;
  mv.a = op.operands[0];
  mv.op = &op;
  Add(mv);
  mv.dst = hi;
  mv.a = op.operands[1];
  Add(mv);
  int test = Here();
  Insn t = Jump(Bc::kForTest, op);
  t.a = op.result;
  t.b = hi;
  t.imm = op.ints[0];
  Add(t);
  Block(op.regions[0], fn);
  Insn st = Jump(Bc::kForStep, op);
  st.dst = op.result;
  st.imm = op.ints[0];
  st.dt = Ty(fn, op.result).dtype;
  Add(st);
  Insn j = Jump(Bc::kJmp, op);
  j.imm = test;
  Add(j);
  p_.code[test].c = Here();
}

void Compiler::If(const ir::Op& op, int fn) {
  int jz = Here();
  Insn z = Jump(Bc::kJz, op);
  z.a = op.operands[0];
  Add(z);
  Block(op.regions[0], fn);
  if (op.regions[1].empty()) {
    p_.code[jz].imm = Here();
    return;
  }
  int jmp = Here();
  Add(Jump(Bc::kJmp, op));
  p_.code[jz].imm = Here();
  Block(op.regions[1], fn);
  p_.code[jmp].imm = Here();
}

void Compiler::While(const ir::Op& op, int fn) {
  int top = Here();
  Block(op.regions[0], fn);
  int jz = Here();
  Insn z = Jump(Bc::kJz, op);
  z.a = op.operands[0];
  Add(z);
  Block(op.regions[1], fn);
  Insn j = Jump(Bc::kJmp, op);
  j.imm = top;
  Add(j);
  p_.code[jz].imm = Here();
}

}  // namespace

KernelSlots AssignSlots(const ir::Function& k) {
  KernelSlots s;
  s.view_slot.assign(k.vars.size(), -1);
  s.frag_slot.assign(k.vars.size(), -1);
  for (size_t v = 0; v < k.vars.size(); ++v) {
    const ir::Type& vt = k.vars[v].type;
    if (vt.is_view() || (vt.is_frag() && vt.frag.is_desc()))
      s.view_slot[v] = s.nviews++;
    else if (vt.is_frag())
      s.frag_slot[v] = s.nfrags++;
  }
  CollectAllocs(k.body, &s);
  Index(s.shared, &s.shared_index);
  Index(s.local, &s.local_index);
  Index(s.mbars, &s.mbar_index);
  return s;
}

Program Compile(const ir::Module& m, int kernel_fn, const KernelSlots& slots) {
  Program p;
  p.fns.resize(m.functions.size());
  Compiler c(m, slots, &p);
  for (size_t i = 0; i < m.functions.size(); ++i) {
    if (!m.functions[i].is_kernel || static_cast<int>(i) == kernel_fn)
      c.Function(static_cast<int>(i));
  }
  p.launch_entry = c.Here();
  c.Block(m.functions[kernel_fn].launch, kernel_fn);
  Insn halt;
  halt.code = Bc::kHalt;
  halt.fam = ir::OpFamily::kCall;
  c.Add(halt);
  for (const FnCode& fc : p.fns) p.stack_size += fc.frame;
  return p;
}

}  // namespace argus::dsl::interp
