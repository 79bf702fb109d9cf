// The checker's entry points (dsl/check.h): a file's functions are lowered in
// order, each @device function callable by those after it.
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/sema/lowering.h"

namespace argus::dsl {

absl::StatusOr<ir::Module> Check(std::shared_ptr<const SourceFile> src, const Module& ast,
                                 const CheckOptions& options) {
  sema::ModuleCtx ctx;
  ctx.src = src;
  ctx.options = &options;
  ctx.out.source = src;
  for (const auto& [k, v] : options.consts) ctx.unused_consts[k] = v;
  if (!options.arch.empty() && options.arch != "sm_90a" && options.arch != "gfx942") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown arch '", options.arch, "' (use sm_90a or gfx942)"));
  }
  std::set<std::string> names;
  bool any_kernel = false;
  for (const auto& fd : ast.funcs) {
    if (fd->decorators.size() != 1) {
      return ErrorAt(*src, fd->loc,
                     absl::StrCat("function '", fd->name,
                                  "' needs exactly one decorator, @kernel(...) or @device"),
                     "decorate it with @kernel(threads=N) or @device");
    }
    const Expr& dec = *fd->decorators[0];
    const Expr* dn = dec.kind == ExprKind::kCall ? dec.args[0].get() : &dec;
    if (dn->kind != ExprKind::kName || (dn->name != "kernel" && dn->name != "device")) {
      return ErrorAt(*src, dec.loc, "unknown decorator", "use @kernel(threads=N) or @device");
    }
    if (!names.insert(fd->name).second) {
      return ErrorAt(*src, fd->loc, absl::StrCat("function '", fd->name, "' defined twice"),
                     "rename one of them");
    }
    const sema::FnLowering::BuiltinSpec* builtin = sema::FnLowering::FindBuiltin(fd->name);
    bool kernel_ok =
        dn->name == "kernel" && builtin && builtin->Has(sema::builtin_trait::kKernelName);
    if ((builtin && !kernel_ok) || DTypeFromName(fd->name)) {
      return ErrorAt(*src, fd->loc, absl::StrCat("'", fd->name, "' is a builtin name"),
                     "rename the function");
    }
    ir::Function f;
    sema::FnLowering low(&ctx, *fd, &f);
    RETURN_IF_ERROR(low.Run());
    ctx.out.functions.push_back(std::move(f));
    if (dn->name == "device") {
      ctx.device_fns[fd->name] = static_cast<int>(ctx.out.functions.size()) - 1;
    } else {
      any_kernel = true;
    }
  }
  if (!any_kernel)
    return ErrorAt(*src, {1, 1}, "the file defines no @kernel",
                   "add a @kernel(threads=N) function");
  if (!ctx.unused_consts.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--const ", ctx.unused_consts.begin()->first,
                     ": no kernel has a const parameter of that name"));
  }
  return std::move(ctx.out);
}

absl::StatusOr<ir::Module> Compile(std::shared_ptr<const SourceFile> src,
                                   const CheckOptions& options) {
  ASSIGN_OR_RETURN(Module ast, Parse(*src));
  return Check(src, ast, options);
}

absl::StatusOr<ir::Module> CompileFile(const std::string& path, const CheckOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  auto src = std::make_shared<SourceFile>(path, ss.str());
  return Compile(src, options);
}

}  // namespace argus::dsl
