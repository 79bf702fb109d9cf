// Where the emitter keeps IR variables: scalar slots, view slots (offset,
// shape and stride per dim) and fragment arrays, all entry-block allocas
// created on first use.
#include "codegen/emit/emitter.h"
#include "llvm/IR/Module.h"

namespace argus::codegen::emit {

using llvm::AllocaInst;

llvm::GlobalVariable* NewSharedGlobal(llvm::Module& m, llvm::ArrayType* array,
                                      const std::string& name, int64_t align) {
  auto* gv = new llvm::GlobalVariable(m, array, false, llvm::GlobalValue::InternalLinkage,
                                      llvm::UndefValue::get(array), name, nullptr,
                                      llvm::GlobalValue::NotThreadLocal, 3);
  gv->setAlignment(llvm::Align(align));
  return gv;
}

Type* Emitter::Ty(DType t) {
  switch (t) {
    case DType::kBool:
      return b_.getInt1Ty();
    case DType::kI32:
    case DType::kU32:
      return b_.getInt32Ty();
    case DType::kI64:
      return b_.getInt64Ty();
    case DType::kF16:
      return b_.getHalfTy();
    case DType::kBF16:
      return b_.getBFloatTy();
    default:
      return b_.getFloatTy();
  }
}

Value* Emitter::Call(llvm::Intrinsic::ID id, llvm::ArrayRef<Value*> args,
                     llvm::ArrayRef<Type*> types) {
  return b_.CreateCall(llvm::Intrinsic::getDeclaration(ms_->mod, id, types), args);
}

AllocaInst* Emitter::Alloca(Type* t, const std::string& name) {
  return alloca_b_->CreateAlloca(t, nullptr, name);
}

AllocaInst* Emitter::Slot(int v) {
  auto it = slots_.find(v);
  if (it != slots_.end()) return it->second;
  AllocaInst* a = Alloca(Ty(VT(v).dtype), f_.vars[v].name);
  slots_[v] = a;
  return a;
}

Emitter::ViewSlots& Emitter::View(int v) {
  auto it = views_.find(v);
  if (it != views_.end()) return it->second;
  ViewSlots s;
  std::string n = f_.vars[v].name;
  s.off = Alloca(b_.getInt64Ty(), n + ".off");
  for (int d = 0; d < VT(v).rank(); ++d) {
    s.shape.push_back(Alloca(b_.getInt64Ty(), n + ".shape"));
    s.stride.push_back(Alloca(b_.getInt64Ty(), n + ".stride"));
  }
  return views_[v] = s;
}

Emitter::ViewVals Emitter::LoadView(int v) {
  ViewSlots& s = View(v);
  ViewVals r;
  Type* i64 = b_.getInt64Ty();
  r.off = b_.CreateLoad(i64, s.off);
  for (size_t d = 0; d < s.shape.size(); ++d) {
    r.shape.push_back(b_.CreateLoad(i64, s.shape[d]));
    r.stride.push_back(b_.CreateLoad(i64, s.stride[d]));
  }
  return r;
}

void Emitter::StoreView(int v, const ViewVals& x) {
  ViewSlots& s = View(v);
  b_.CreateStore(x.off, s.off);
  for (size_t d = 0; d < s.shape.size(); ++d) {
    b_.CreateStore(x.shape[d], s.shape[d]);
    b_.CreateStore(x.stride[d], s.stride[d]);
  }
}

Type* Emitter::FragElemTy(int v) {
  dsl::FragRole r = VT(v).frag.role;
  return r == dsl::FragRole::kA || r == dsl::FragRole::kB ? b_.getInt16Ty() : b_.getFloatTy();
}

AllocaInst* Emitter::Frag(int v) {
  auto it = frags_.find(v);
  if (it != frags_.end()) return it->second;
  int n = VT(v).frag.Geom().PerLane();
  AllocaInst* a = Alloca(llvm::ArrayType::get(FragElemTy(v), n), f_.vars[v].name);
  a->setAlignment(llvm::Align(4));  // operand pairs are accessed as one .b32
  return frags_[v] = a;
}

Value* Emitter::FragPtr(int v, int e) {
  AllocaInst* a = Frag(v);
  return b_.CreateConstInBoundsGEP2_32(a->getAllocatedType(), a, 0, e);
}

bool Emitter::FragPairs(int v) const {
  dsl::FragRole r = VT(v).frag.role;
  return (r == dsl::FragRole::kA || r == dsl::FragRole::kB) && VT(v).frag.Geom().PerLane() % 2 == 0;
}

Value* Emitter::FragGetPair(int v, int e) {
  return b_.CreateAlignedLoad(b_.getInt32Ty(), FragPtr(v, e), llvm::Align(4));
}

void Emitter::FragSetPair(int v, int e, Value* x) {
  b_.CreateAlignedStore(x, FragPtr(v, e), llvm::Align(4));
}

Value* Emitter::PackPair(int v, int e) {
  Value* lo = b_.CreateZExt(FragGet(v, e), b_.getInt32Ty());
  Value* hi = b_.CreateZExt(FragGet(v, e + 1), b_.getInt32Ty());
  return b_.CreateOr(lo, b_.CreateShl(hi, 16));
}

}  // namespace argus::codegen::emit
