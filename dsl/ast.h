// dsl/ast.h: the syntax tree of the DSL's Python subset.
//
// Produced by Parse() (parser.h), consumed by the checker (check.h). Nodes own
// their children through unique_ptr; every node has the location of its first
// token. The tree is plain data: no types, no resolution.
//
// Thread safety: immutable once built; safe to read from many threads.
#ifndef ARGUS_DSL_AST_H_
#define ARGUS_DSL_AST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dsl/source.h"

namespace argus::dsl {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;

enum class ExprKind {
  kName,       // name
  kInt,        // ival
  kFloat,      // fval
  kStr,        // name holds the string
  kBool,       // ival 0/1 (True/False)
  kNone,       // None
  kTuple,      // args: elements
  kCall,       // args[0]: callee, args[1..]: positional; kwargs
  kAttr,       // args[0].name
  kSubscript,  // args[0][args[1..]]
  kSlice,      // args[0]:args[1]:args[2], each may be null
  kBinOp,      // args[0] op args[1]; op in name
  kUnary,      // op args[0]; op in name ("-", "+", "~", "not")
  kCompare,    // args[0] op args[1]
  kBoolOp,     // args[0] op args[1]; op "and"/"or"
  kIfExp,      // args[0] if args[1] else args[2]
  kLambda,     // params; args[0]: body
};

struct Keyword {
  std::string name;
  ExprPtr value;
  Loc loc;
};

struct Expr {
  ExprKind kind;
  Loc loc;
  std::string name;
  int64_t ival = 0;
  double fval = 0;
  std::vector<ExprPtr> args;
  std::vector<Keyword> kwargs;
  std::vector<std::string> params;
};

enum class StmtKind {
  kExpr,       // value
  kAssign,     // target = value
  kAugAssign,  // target op= value; op in `op` ("+", "-", ...)
  kFor,        // for target in value: body
  kWhile,      // while value: body
  kIf,         // if value: body else: orelse
  kReturn,     // return [value]
  kPass,
};

struct Stmt {
  StmtKind kind;
  Loc loc;
  ExprPtr target;
  ExprPtr value;
  std::string op;
  std::vector<StmtPtr> body;
  std::vector<StmtPtr> orelse;
};

struct Param {
  std::string name;
  Loc loc;
  ExprPtr annotation;     // may be null
  ExprPtr default_value;  // may be null
};

struct FuncDef {
  std::string name;
  Loc loc;
  std::vector<ExprPtr> decorators;
  std::vector<Param> params;
  ExprPtr returns;  // may be null
  std::string doc;
  std::vector<StmtPtr> body;
};

struct Module {
  std::vector<std::unique_ptr<FuncDef>> funcs;
};

}  // namespace argus::dsl

#endif  // ARGUS_DSL_AST_H_
