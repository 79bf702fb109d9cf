#include "dsl/ir.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace argus::dsl::ir {

FragGeom FragType::Geom() const {
  FragGeom g;
  g.mma = mma;
  g.role = role;
  g.bm = bm;
  g.bn = bn;
  g.wm = wm;
  g.wn = wn;
  g.first = first;
  g.bk = role == FragRole::kA ? cols : role == FragRole::kB ? rows : 0;
  return g;
}

bool Type::operator==(const Type& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case TypeKind::kVoid:
      return true;
    case TypeKind::kScalar:
      return dtype == o.dtype;
    case TypeKind::kView:
      return dtype == o.dtype && space == o.space && shape == o.shape;
    case TypeKind::kFragment:
      return dtype == o.dtype && frag.mma == o.frag.mma && frag.role == o.frag.role &&
             frag.rows == o.frag.rows && frag.cols == o.frag.cols && frag.bm == o.frag.bm &&
             frag.bn == o.frag.bn && frag.wm == o.frag.wm && frag.wn == o.frag.wn &&
             frag.first == o.frag.first && frag.regs == o.frag.regs;
    case TypeKind::kBarrier:
      return shape == o.shape;
  }
  return false;
}

static std::string ShapeStr(const std::vector<int64_t>& s) {
  std::vector<std::string> parts;
  for (int64_t v : s) parts.push_back(v < 0 ? "?" : absl::StrCat(v));
  return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
}

std::string Type::ToString() const {
  switch (kind) {
    case TypeKind::kVoid:
      return "void";
    case TypeKind::kScalar:
      return DTypeName(dtype);
    case TypeKind::kView:
      return absl::StrCat(SpaceName(space), " ", DTypeName(dtype), ShapeStr(shape));
    case TypeKind::kFragment:
      return absl::StrCat("frag<", frag.mma ? frag.mma->name : "?", ",", FragRoleName(frag.role),
                          ",", DTypeName(dtype), "[", frag.rows, ",", frag.cols, "],",
                          frag.mma && frag.mma->wgmma ? "warpgroups=" : "warps=", frag.wm, "x",
                          frag.wn, frag.first ? absl::StrCat(",first=", frag.first) : "",
                          frag.regs ? ",regs" : "", ">");
    case TypeKind::kBarrier:
      return absl::StrCat("mbarrier", ShapeStr(shape));
  }
  return "?";
}

int64_t Layout::Size() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

int64_t Layout::Cosize() const {
  int64_t m = 0;
  for (size_t i = 0; i < shape.size(); ++i) m += (shape[i] - 1) * stride[i];
  return m + 1;
}

std::string Layout::ToString() const {
  std::string s =
      absl::StrCat("(", absl::StrJoin(shape, ","), "):(", absl::StrJoin(stride, ","), ")");
  if (swizzle.active())
    absl::StrAppend(&s, " swizzle(", swizzle.b, ",", swizzle.m, ",", swizzle.s, ")");
  if (vec != 1) absl::StrAppend(&s, " vec=", vec);
  return s;
}

namespace {

using namespace op_trait;  // NOLINT: the table's trait names

constexpr OpInfo kOpInfo[] = {
#define ARGUS_OP(Code, Spelling, Family, Target, Scope, Traits) \
  {Spelling, OpFamily::Family, OpTarget::Target, OpScope::Scope, Traits},
#include "dsl/ops.def"
#undef ARGUS_OP
};
static_assert(sizeof(kOpInfo) / sizeof(kOpInfo[0]) == kNumOpCodes);

}  // namespace

const OpInfo& Info(OpCode c) { return kOpInfo[static_cast<int>(c)]; }

const char* OpCodeName(OpCode c) { return Info(c).spelling; }

const char* OpFamilyName(OpFamily f) {
  switch (f) {
    case OpFamily::kScalar:
      return "scalar";
    case OpFamily::kView:
      return "view";
    case OpFamily::kMemory:
      return "memory";
    case OpFamily::kFragment:
      return "fragment";
    case OpFamily::kFragmentMath:
      return "fragment_math";
    case OpFamily::kMbarrier:
      return "mbarrier";
    case OpFamily::kTma:
      return "tma";
    case OpFamily::kWgmma:
      return "wgmma";
    case OpFamily::kBarrier:
      return "barrier";
    case OpFamily::kCollective:
      return "collective";
    case OpFamily::kHint:
      return "hint";
    case OpFamily::kTag:
      return "tag";
    case OpFamily::kCall:
      return "call";
    case OpFamily::kControl:
      return "control";
  }
  return "?";
}

namespace {

const char* SubName(const Op& op) {
  static const char* kBin[] = {"add", "sub", "mul", "div", "floordiv", "mod", "shl",
                               "shr", "and", "or",  "xor", "min",      "max"};
  static const char* kUn[] = {"neg", "not", "bitnot"};
  static const char* kCmp[] = {"lt", "le", "gt", "ge", "eq", "ne"};
  static const char* kMath[] = {"exp", "exp2", "log", "sqrt", "rsqrt", "abs"};
  static const char* kSpec[] = {"thread_id", "block_id",  "grid_dim",    "warp_id",
                                "lane_id",   "warp_size", "warpgroup_id"};
  static const char* kShfl[] = {"xor", "down", "idx"};
  static const char* kRed[] = {"sum", "max"};
  switch (op.code) {
    case OpCode::kBinary:
      return kBin[op.sub];
    case OpCode::kUnary:
      return kUn[op.sub];
    case OpCode::kCompare:
      return kCmp[op.sub];
    case OpCode::kMath:
      return kMath[op.sub];
    case OpCode::kSpecial:
      return kSpec[op.sub];
    case OpCode::kShfl:
      return kShfl[op.sub];
    case OpCode::kWarpReduce:
    case OpCode::kBlockReduce:
      return kRed[op.sub];
    case OpCode::kTmaStore:
      return op.sub ? "add" : nullptr;
    default:
      return nullptr;
  }
}

class Dumper {
 public:
  explicit Dumper(const Function& f) : f_(f) {}

  std::string V(int id) const {
    if (id < 0) return "%_";
    const Var& v = f_.vars[id];
    return v.name.empty() ? absl::StrCat("%", id) : absl::StrCat("%", id, ".", v.name);
  }

  void Block(const ir::Block& b, int indent) {
    for (const Op& op : b) OpLine(op, indent);
  }

  void OpLine(const Op& op, int indent) {
    std::string pad(indent * 2, ' ');
    std::string line = pad;
    if (op.result >= 0 && op.code != OpCode::kFor) absl::StrAppend(&line, V(op.result), " = ");
    absl::StrAppend(&line, OpCodeName(op.code));
    if (const char* s = SubName(op)) absl::StrAppend(&line, ".", s);
    if (!op.name.empty()) absl::StrAppend(&line, " \"", op.name, "\"");
    if (op.code == OpCode::kFor) {
      absl::StrAppend(&line, " ", V(op.result), " = ", V(op.operands[0]), " to ", V(op.operands[1]),
                      " step ", op.ints[0], " {  @", op.loc.line, ":", op.loc.col);
      out_ += line + "\n";
      Block(op.regions[0], indent + 1);
      out_ += pad + "}\n";
      return;
    }
    if (op.code == OpCode::kWhile) {
      absl::StrAppend(&line, " {  @", op.loc.line, ":", op.loc.col);
      out_ += line + "\n";
      Block(op.regions[0], indent + 1);
      out_ += absl::StrCat(pad, "} do ", V(op.operands[0]), " {\n");
      Block(op.regions[1], indent + 1);
      out_ += pad + "}\n";
      return;
    }
    std::vector<std::string> ops;
    for (int o : op.operands) ops.push_back(V(o));
    if (!ops.empty()) absl::StrAppend(&line, " ", absl::StrJoin(ops, ", "));
    if (op.code == OpCode::kConst) {
      const Type& t = f_.vars[op.result].type;
      if (IsFloat(t.dtype)) {
        absl::StrAppend(&line, " ", absl::StrFormat("%.17g", op.fval));
      } else {
        absl::StrAppend(&line, " ", op.ints.empty() ? 0 : op.ints[0]);
      }
    } else if (!op.ints.empty()) {
      absl::StrAppend(&line, " [", absl::StrJoin(op.ints, ","), "]");
    }
    if (!op.layout.shape.empty()) absl::StrAppend(&line, " layout ", op.layout.ToString());
    if (op.result >= 0) absl::StrAppend(&line, " : ", f_.vars[op.result].type.ToString());
    absl::StrAppend(&line, "  @", op.loc.line, ":", op.loc.col);
    if (op.code == OpCode::kIf) {
      out_ += line + " {\n";
      Block(op.regions[0], indent + 1);
      if (!op.regions[1].empty()) {
        out_ += pad + "} else {\n";
        Block(op.regions[1], indent + 1);
      }
      out_ += pad + "}\n";
      return;
    }
    if (!op.regions.empty()) {
      std::vector<std::string> ps;
      for (int p : op.region_params) ps.push_back(V(p));
      out_ += absl::StrCat(line, " lambda(", absl::StrJoin(ps, ", "), ") {\n");
      Block(op.regions[0], indent + 1);
      out_ += pad + "}\n";
      return;
    }
    out_ += line + "\n";
  }

  static std::string Sym(const Function& f, const SymInt& s) {
    std::vector<std::string> parts;
    if (s.coeff != 1 || s.syms.empty()) parts.push_back(absl::StrCat(s.coeff));
    for (int d : s.syms) parts.push_back(f.dims[d]);
    return absl::StrJoin(parts, "*");
  }

  std::string Run() {
    if (f_.is_kernel) {
      out_ += absl::StrCat("kernel @", f_.name, " threads=", f_.threads, " arch=", f_.arch,
                           " warp=", f_.warp_size, "  @", f_.loc.line, ":", f_.loc.col, "\n");
      for (const ConstParam& c : f_.consts) {
        out_ += absl::StrCat("  const ", c.name, " = ",
                             c.is_float ? absl::StrFormat("%.17g", c.fval) : absl::StrCat(c.ival),
                             c.overridden ? "  (overridden)" : "", "\n");
      }
      for (size_t i = 0; i < f_.dims.size(); ++i) {
        out_ += absl::StrCat("  dim ", f_.dims[i], " = ", V(f_.dim_vars[i]), " : i32\n");
      }
      for (const TensorParam& t : f_.tensors) {
        std::vector<std::string> sh, st;
        for (const SymInt& s : t.shape) sh.push_back(Sym(f_, s));
        for (const SymInt& s : t.stride) st.push_back(Sym(f_, s));
        out_ += absl::StrCat("  tensor ", V(t.var), " : global ", DTypeName(t.dtype), " (",
                             absl::StrJoin(sh, ","), "):(", absl::StrJoin(st, ","), ")\n");
      }
      for (const ScalarParam& s : f_.scalars) {
        out_ += absl::StrCat("  scalar ", V(s.var), " : ", DTypeName(s.dtype), "\n");
      }
      out_ += "  launch {\n";
      Block(f_.launch, 2);
      std::vector<std::string> g;
      for (int v : f_.grid) g.push_back(V(v));
      out_ += absl::StrCat("  } grid(", absl::StrJoin(g, ", "), ")\n");
    } else {
      std::vector<std::string> ps;
      for (int p : f_.params) ps.push_back(absl::StrCat(V(p), ": ", f_.vars[p].type.ToString()));
      out_ += absl::StrCat("device @", f_.name, "(", absl::StrJoin(ps, ", "), ") -> ",
                           f_.ret.ToString(), "  @", f_.loc.line, ":", f_.loc.col, "\n");
    }
    out_ += "  body {\n";
    Block(f_.body, 2);
    out_ += "  }\n";
    return out_;
  }

 private:
  const Function& f_;
  std::string out_;
};

}  // namespace

std::string Dump(const Function& f) { return Dumper(f).Run(); }

std::string Dump(const Module& m) {
  std::string out;
  for (const Function& f : m.functions) out += Dump(f);
  return out;
}

const Function* Module::Find(const std::string& name) const {
  for (const Function& f : functions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

}  // namespace argus::dsl::ir
