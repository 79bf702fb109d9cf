#include "dsl/parser.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "dsl/lexer.h"

namespace argus::dsl {
namespace {

const std::set<std::string>& Keywords() {
  static const std::set<std::string> k = {
      "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
      "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
      "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
      "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};
  return k;
}

class Parser {
 public:
  Parser(const SourceFile& src, std::vector<Token> toks) : src_(src), t_(std::move(toks)) {}

  absl::StatusOr<Module> ParseModule() {
    Module m;
    while (!At(Tok::kEof)) {
      if (At(Tok::kNewline)) {
        ++p_;
        continue;
      }
      if (At(Tok::kString)) {  // module docstring
        ++p_;
        RETURN_IF_ERROR(Expect(Tok::kNewline));
        continue;
      }
      if (IsOp("@") || IsName("def")) {
        auto f = std::make_unique<FuncDef>();
        RETURN_IF_ERROR(FuncDefinition(f.get()));
        m.funcs.push_back(std::move(f));
        continue;
      }
      if (IsName("import") || IsName("from"))
        return NotInSubset("import", "the DSL has no modules; builtins are always in scope");
      if (IsName("class")) return NotInSubset("class definition", "use @device functions");
      return Err(Cur().loc, "expected a @kernel or @device function at top level",
                 "top level holds only decorated function definitions");
    }
    return m;
  }

 private:
  const Token& Cur() const { return t_[p_]; }
  bool At(Tok k) const { return Cur().kind == k; }
  bool IsOp(const char* op) const { return Cur().kind == Tok::kOp && Cur().text == op; }
  bool IsName(const char* n) const { return Cur().kind == Tok::kName && Cur().text == n; }

  absl::Status Err(Loc loc, std::string msg, std::string hint = "") {
    return ErrorAt(src_, loc, std::move(msg), std::move(hint));
  }
  absl::Status NotInSubset(const std::string& what, const std::string& hint) {
    return Err(Cur().loc, absl::StrCat(what, " is not in the DSL subset"), hint);
  }
  std::string Describe(const Token& t) {
    if (t.kind == Tok::kOp || t.kind == Tok::kName) return absl::StrCat("'", t.text, "'");
    return TokName(t.kind);
  }
  absl::Status Expect(Tok k) {
    if (!At(k)) {
      return Err(Cur().loc, absl::StrCat("expected ", TokName(k), ", found ", Describe(Cur())),
                 k == Tok::kNewline ? "one statement per line" : "check the syntax");
    }
    ++p_;
    return absl::OkStatus();
  }
  absl::Status ExpectOp(const char* op, const char* hint = "check the syntax") {
    if (!IsOp(op)) {
      return Err(Cur().loc, absl::StrCat("expected '", op, "', found ", Describe(Cur())), hint);
    }
    ++p_;
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> ExpectName() {
    if (!At(Tok::kName) || Keywords().count(Cur().text)) {
      return Err(Cur().loc, absl::StrCat("expected a name, found ", Describe(Cur())),
                 "names are identifiers that are not Python keywords");
    }
    return t_[p_++].text;
  }

  struct DepthGuard {
    Parser* p;
    explicit DepthGuard(Parser* p) : p(p) { ++p->depth_; }
    ~DepthGuard() { --p->depth_; }
  };
  absl::Status CheckDepth() {
    if (depth_ > kMaxNesting) {
      return Err(Cur().loc, "nesting too deep (limit 64)", "split the code into smaller pieces");
    }
    return absl::OkStatus();
  }

  absl::Status FuncDefinition(FuncDef* f) {
    while (IsOp("@")) {
      ++p_;
      ASSIGN_OR_RETURN(ExprPtr d, Expression());
      f->decorators.push_back(std::move(d));
      RETURN_IF_ERROR(Expect(Tok::kNewline));
    }
    if (!IsName("def")) {
      if (IsName("class")) return NotInSubset("class definition", "use @device functions");
      return Err(Cur().loc, "expected 'def' after decorator", "decorate a function");
    }
    f->loc = Cur().loc;
    ++p_;
    ASSIGN_OR_RETURN(f->name, ExpectName());
    RETURN_IF_ERROR(ExpectOp("("));
    while (!IsOp(")")) {
      if (IsOp("*") || IsOp("**"))
        return NotInSubset("*args / **kwargs", "list parameters explicitly");
      Param prm;
      prm.loc = Cur().loc;
      ASSIGN_OR_RETURN(prm.name, ExpectName());
      if (IsOp(":")) {
        ++p_;
        ASSIGN_OR_RETURN(prm.annotation, Expression());
      }
      if (IsOp("=")) {
        ++p_;
        ASSIGN_OR_RETURN(prm.default_value, Expression());
      }
      f->params.push_back(std::move(prm));
      if (!IsOp(",")) break;
      ++p_;
    }
    RETURN_IF_ERROR(ExpectOp(")", "close the parameter list"));
    if (IsOp("->")) {
      ++p_;
      ASSIGN_OR_RETURN(f->returns, Expression());
    }
    RETURN_IF_ERROR(ExpectOp(":", "a def line ends with ':'"));
    RETURN_IF_ERROR(Block(&f->body, &f->doc));
    return absl::OkStatus();
  }

  // NEWLINE INDENT stmt+ DEDENT, or a simple statement on the same line.
  absl::Status Block(std::vector<StmtPtr>* out, std::string* doc = nullptr) {
    DepthGuard g(this);
    RETURN_IF_ERROR(CheckDepth());
    if (!At(Tok::kNewline)) return SimpleStatements(out);
    ++p_;
    if (!At(Tok::kIndent)) return Err(Cur().loc, "expected an indented block", "indent the body");
    ++p_;
    if (doc && At(Tok::kString)) {
      *doc = Cur().text;
      ++p_;
      RETURN_IF_ERROR(Expect(Tok::kNewline));
    }
    while (!At(Tok::kDedent) && !At(Tok::kEof)) {
      RETURN_IF_ERROR(Statement(out));
    }
    if (At(Tok::kDedent)) ++p_;
    return absl::OkStatus();
  }

  absl::Status Statement(std::vector<StmtPtr>* out) {
    const Token& tok = Cur();
    if (tok.kind == Tok::kIndent)
      return Err(tok.loc, "unexpected indent", "align with the enclosing block");
    if (tok.kind == Tok::kName) {
      const std::string& w = tok.text;
      if (w == "if") return IfStatement(out);
      if (w == "for") return ForStatement(out);
      if (w == "while") return WhileStatement(out);
      if (w == "def")
        return Err(tok.loc, "nested function definition is not in the DSL subset",
                   "define @device functions at top level");
      if (w == "class") return NotInSubset("class definition", "use @device functions");
      if (w == "try") return NotInSubset("try statement", "the DSL has no exceptions");
      if (w == "with") return NotInSubset("with statement", "the DSL has no context managers");
      if (w == "import" || w == "from")
        return NotInSubset("import", "builtins are always in scope");
      if (w == "async" || w == "await") return NotInSubset("async", "use copy_async/wait_group");
      if (IsOp("@")) return NotInSubset("decorator here", "decorate top-level functions only");
    }
    if (IsOp("@"))
      return NotInSubset("nested decorated function", "define @device functions at top level");
    return SimpleStatements(out);
  }

  absl::Status SimpleStatements(std::vector<StmtPtr>* out) {
    while (true) {
      RETURN_IF_ERROR(SimpleStatement(out));
      if (IsOp(";")) {
        ++p_;
        if (At(Tok::kNewline)) break;
        continue;
      }
      break;
    }
    return Expect(Tok::kNewline);
  }

  absl::Status SimpleStatement(std::vector<StmtPtr>* out) {
    auto s = std::make_unique<Stmt>();
    s->loc = Cur().loc;
    if (At(Tok::kName)) {
      const std::string w = Cur().text;
      if (w == "pass") {
        ++p_;
        s->kind = StmtKind::kPass;
        out->push_back(std::move(s));
        return absl::OkStatus();
      }
      if (w == "return") {
        ++p_;
        s->kind = StmtKind::kReturn;
        if (!At(Tok::kNewline) && !IsOp(";")) {
          ASSIGN_OR_RETURN(s->value, ExpressionList());
        }
        out->push_back(std::move(s));
        return absl::OkStatus();
      }
      if (w == "break" || w == "continue")
        return NotInSubset(absl::StrCat("'", w, "'"), "use a while loop with a condition");
      if (w == "global" || w == "nonlocal")
        return NotInSubset(absl::StrCat("'", w, "'"), "kernels have no global variables");
      if (w == "del") return NotInSubset("'del'", "remove the statement");
      if (w == "assert") return NotInSubset("'assert'", "use assert_tag for data-flow assertions");
      if (w == "raise") return NotInSubset("'raise'", "the DSL has no exceptions");
      if (w == "yield") return NotInSubset("'yield'", "the DSL has no generators");
      if (w == "import" || w == "from")
        return NotInSubset("import", "builtins are always in scope");
      if (w == "class") return NotInSubset("class definition", "use @device functions");
    }
    ASSIGN_OR_RETURN(ExprPtr lhs, ExpressionList());
    if (IsOp("=")) {
      ++p_;
      ASSIGN_OR_RETURN(ExprPtr rhs, ExpressionList());
      if (IsOp("=")) return NotInSubset("chained assignment", "assign one target per statement");
      RETURN_IF_ERROR(CheckTarget(*lhs, true));
      s->kind = StmtKind::kAssign;
      s->target = std::move(lhs);
      s->value = std::move(rhs);
    } else if (Cur().kind == Tok::kOp && Cur().text.size() >= 2 && Cur().text.back() == '=' &&
               Cur().text != "==" && Cur().text != "<=" && Cur().text != ">=" &&
               Cur().text != "!=") {
      std::string op = Cur().text.substr(0, Cur().text.size() - 1);
      if (op == "**" || op == "@" || op == ":")
        return NotInSubset(absl::StrCat("'", Cur().text, "'"), "write the operation out");
      ++p_;
      ASSIGN_OR_RETURN(ExprPtr rhs, Expression());
      RETURN_IF_ERROR(CheckTarget(*lhs, false));
      s->kind = StmtKind::kAugAssign;
      s->op = op;
      s->target = std::move(lhs);
      s->value = std::move(rhs);
    } else if (IsOp(":")) {
      return NotInSubset("annotated assignment", "write `x = f32(value)` to fix a type");
    } else {
      s->kind = StmtKind::kExpr;
      s->value = std::move(lhs);
    }
    out->push_back(std::move(s));
    return absl::OkStatus();
  }

  absl::Status CheckTarget(const Expr& e, bool allow_tuple) {
    switch (e.kind) {
      case ExprKind::kName:
      case ExprKind::kSubscript:
        return absl::OkStatus();
      case ExprKind::kTuple:
        if (!allow_tuple) break;
        for (const auto& a : e.args) {
          if (a->kind != ExprKind::kName && a->kind != ExprKind::kSubscript) {
            return Err(a->loc, "cannot assign to this expression", "unpack into names or elements");
          }
        }
        return absl::OkStatus();
      default:
        break;
    }
    return Err(e.loc, "cannot assign to this expression", "assign to a name or an element v[i]");
  }

  absl::Status IfStatement(std::vector<StmtPtr>* out) {
    DepthGuard g(this);
    RETURN_IF_ERROR(CheckDepth());
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kIf;
    s->loc = Cur().loc;
    ++p_;  // if / elif
    ASSIGN_OR_RETURN(s->value, Expression());
    RETURN_IF_ERROR(ExpectOp(":", "an if line ends with ':'"));
    RETURN_IF_ERROR(Block(&s->body));
    if (IsName("elif")) {
      RETURN_IF_ERROR(IfStatement(&s->orelse));
    } else if (IsName("else")) {
      ++p_;
      RETURN_IF_ERROR(ExpectOp(":", "else is followed by ':'"));
      RETURN_IF_ERROR(Block(&s->orelse));
    }
    out->push_back(std::move(s));
    return absl::OkStatus();
  }

  absl::Status ForStatement(std::vector<StmtPtr>* out) {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kFor;
    s->loc = Cur().loc;
    ++p_;
    auto target = std::make_unique<Expr>();
    target->kind = ExprKind::kName;
    target->loc = Cur().loc;
    ASSIGN_OR_RETURN(target->name, ExpectName());
    if (IsOp(","))
      return NotInSubset("tuple loop target", "loop over range(...) with one variable");
    s->target = std::move(target);
    if (!IsName("in")) return Err(Cur().loc, "expected 'in'", "write `for i in range(n):`");
    ++p_;
    ASSIGN_OR_RETURN(s->value, Expression());
    RETURN_IF_ERROR(ExpectOp(":", "a for line ends with ':'"));
    RETURN_IF_ERROR(Block(&s->body));
    if (IsName("else")) return NotInSubset("for-else", "remove the else clause");
    out->push_back(std::move(s));
    return absl::OkStatus();
  }

  absl::Status WhileStatement(std::vector<StmtPtr>* out) {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kWhile;
    s->loc = Cur().loc;
    ++p_;
    ASSIGN_OR_RETURN(s->value, Expression());
    RETURN_IF_ERROR(ExpectOp(":", "a while line ends with ':'"));
    RETURN_IF_ERROR(Block(&s->body));
    if (IsName("else")) return NotInSubset("while-else", "remove the else clause");
    out->push_back(std::move(s));
    return absl::OkStatus();
  }

  // Expressions.
  ExprPtr Node(ExprKind k, Loc loc) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->loc = loc;
    return e;
  }

  // expr (',' expr)* [','] -> a tuple when there is a comma.
  absl::StatusOr<ExprPtr> ExpressionList() {
    Loc loc = Cur().loc;
    ASSIGN_OR_RETURN(ExprPtr first, Expression());
    if (!IsOp(",")) return first;
    ExprPtr t = Node(ExprKind::kTuple, loc);
    t->args.push_back(std::move(first));
    while (IsOp(",")) {
      ++p_;
      if (At(Tok::kNewline) || IsOp("=") || IsOp(")") || IsOp(";")) break;
      ASSIGN_OR_RETURN(ExprPtr e, Expression());
      t->args.push_back(std::move(e));
    }
    return t;
  }

  absl::StatusOr<ExprPtr> Expression() {
    DepthGuard g(this);
    RETURN_IF_ERROR(CheckDepth());
    if (IsName("lambda")) return Lambda();
    if (IsName("yield")) return NotInSubset("'yield'", "the DSL has no generators");
    Loc loc = Cur().loc;
    ASSIGN_OR_RETURN(ExprPtr e, OrTest());
    if (IsName("if")) {
      ++p_;
      ASSIGN_OR_RETURN(ExprPtr cond, OrTest());
      if (!IsName("else"))
        return Err(Cur().loc, "expected 'else' in conditional expression", "write `a if c else b`");
      ++p_;
      ASSIGN_OR_RETURN(ExprPtr other, Expression());
      ExprPtr n = Node(ExprKind::kIfExp, loc);
      n->args.push_back(std::move(e));
      n->args.push_back(std::move(cond));
      n->args.push_back(std::move(other));
      return n;
    }
    if (IsOp(":=")) return NotInSubset("':=' (walrus)", "assign in a separate statement");
    return e;
  }

  absl::StatusOr<ExprPtr> Lambda() {
    ExprPtr n = Node(ExprKind::kLambda, Cur().loc);
    ++p_;
    while (!IsOp(":")) {
      if (IsOp("*") || IsOp("**"))
        return NotInSubset("*args in lambda", "list parameters explicitly");
      ASSIGN_OR_RETURN(std::string name, ExpectName());
      if (IsOp("=")) return NotInSubset("lambda default", "remove the default");
      n->params.push_back(name);
      if (!IsOp(",")) break;
      ++p_;
    }
    RETURN_IF_ERROR(ExpectOp(":", "write `lambda i, j: expr`"));
    ASSIGN_OR_RETURN(ExprPtr body, Expression());
    n->args.push_back(std::move(body));
    return n;
  }

  absl::StatusOr<ExprPtr> OrTest() {
    Loc loc = Cur().loc;
    ASSIGN_OR_RETURN(ExprPtr l, AndTest());
    while (IsName("or")) {
      ++p_;
      ASSIGN_OR_RETURN(ExprPtr r, AndTest());
      ExprPtr n = Node(ExprKind::kBoolOp, loc);
      n->name = "or";
      n->args.push_back(std::move(l));
      n->args.push_back(std::move(r));
      l = std::move(n);
    }
    return l;
  }
  absl::StatusOr<ExprPtr> AndTest() {
    Loc loc = Cur().loc;
    ASSIGN_OR_RETURN(ExprPtr l, NotTest());
    while (IsName("and")) {
      ++p_;
      ASSIGN_OR_RETURN(ExprPtr r, NotTest());
      ExprPtr n = Node(ExprKind::kBoolOp, loc);
      n->name = "and";
      n->args.push_back(std::move(l));
      n->args.push_back(std::move(r));
      l = std::move(n);
    }
    return l;
  }
  absl::StatusOr<ExprPtr> NotTest() {
    DepthGuard g(this);
    RETURN_IF_ERROR(CheckDepth());
    if (IsName("not")) {
      ExprPtr n = Node(ExprKind::kUnary, Cur().loc);
      ++p_;
      n->name = "not";
      ASSIGN_OR_RETURN(ExprPtr e, NotTest());
      n->args.push_back(std::move(e));
      return n;
    }
    return Comparison();
  }
  absl::StatusOr<ExprPtr> Comparison() {
    Loc loc = Cur().loc;
    ASSIGN_OR_RETURN(ExprPtr l, BitOr());
    auto cmp_op = [&]() -> std::string {
      if (Cur().kind == Tok::kOp) {
        const std::string& o = Cur().text;
        if (o == "<" || o == ">" || o == "<=" || o == ">=" || o == "==" || o == "!=") return o;
      }
      if (IsName("in") || IsName("is")) return Cur().text;
      if (IsName("not") && t_[p_ + 1].kind == Tok::kName && t_[p_ + 1].text == "in")
        return "not in";
      return "";
    };
    std::string op = cmp_op();
    if (op.empty()) return l;
    if (op == "in" || op == "is" || op == "not in") {
      return NotInSubset(absl::StrCat("'", op, "' operator"), "compare with == or !=");
    }
    Loc oploc = Cur().loc;
    ++p_;
    ASSIGN_OR_RETURN(ExprPtr r, BitOr());
    if (!cmp_op().empty()) {
      return Err(Cur().loc, "chained comparison is not in the DSL subset",
                 "write `a < b and b < c`");
    }
    ExprPtr n = Node(ExprKind::kCompare, loc);
    (void)oploc;
    n->name = op;
    n->args.push_back(std::move(l));
    n->args.push_back(std::move(r));
    return n;
  }

  template <typename Next>
  absl::StatusOr<ExprPtr> BinaryLevel(std::initializer_list<const char*> ops, Next next) {
    Loc loc = Cur().loc;
    ASSIGN_OR_RETURN(ExprPtr l, (this->*next)());
    while (true) {
      const char* found = nullptr;
      for (const char* o : ops) {
        if (IsOp(o)) found = o;
      }
      if (!found) break;
      Loc oploc = Cur().loc;
      ++p_;
      ASSIGN_OR_RETURN(ExprPtr r, (this->*next)());
      ExprPtr n = Node(ExprKind::kBinOp, loc);
      (void)oploc;
      n->name = found;
      n->args.push_back(std::move(l));
      n->args.push_back(std::move(r));
      l = std::move(n);
    }
    return l;
  }
  absl::StatusOr<ExprPtr> BitOr() { return BinaryLevel({"|"}, &Parser::BitXor); }
  absl::StatusOr<ExprPtr> BitXor() { return BinaryLevel({"^"}, &Parser::BitAnd); }
  absl::StatusOr<ExprPtr> BitAnd() { return BinaryLevel({"&"}, &Parser::Shift); }
  absl::StatusOr<ExprPtr> Shift() { return BinaryLevel({"<<", ">>"}, &Parser::Arith); }
  absl::StatusOr<ExprPtr> Arith() { return BinaryLevel({"+", "-"}, &Parser::Term); }
  absl::StatusOr<ExprPtr> Term() {
    if (IsOp("@")) return NotInSubset("'@' matrix operator", "use mma(acc, a, b)");
    return BinaryLevel({"*", "/", "//", "%"}, &Parser::Factor);
  }
  absl::StatusOr<ExprPtr> Factor() {
    DepthGuard g(this);
    RETURN_IF_ERROR(CheckDepth());
    if (IsOp("-") || IsOp("+") || IsOp("~")) {
      ExprPtr n = Node(ExprKind::kUnary, Cur().loc);
      n->name = Cur().text;
      ++p_;
      ASSIGN_OR_RETURN(ExprPtr e, Factor());
      n->args.push_back(std::move(e));
      return n;
    }
    ASSIGN_OR_RETURN(ExprPtr e, Primary());
    if (IsOp("**")) return NotInSubset("'**' (power)", "multiply explicitly, or use exp2/sqrt");
    if (IsOp("@")) return NotInSubset("'@' matrix operator", "use mma(acc, a, b)");
    return e;
  }

  absl::StatusOr<ExprPtr> Primary() {
    ASSIGN_OR_RETURN(ExprPtr e, Atom());
    while (true) {
      if (IsOp("(")) {
        Loc loc = e->loc;
        ++p_;
        ExprPtr call = Node(ExprKind::kCall, loc);
        call->args.push_back(std::move(e));
        while (!IsOp(")")) {
          if (IsOp("*") || IsOp("**"))
            return NotInSubset("argument unpacking", "pass arguments explicitly");
          if (At(Tok::kName) && t_[p_ + 1].kind == Tok::kOp && t_[p_ + 1].text == "=") {
            Keyword kw;
            kw.loc = Cur().loc;
            kw.name = Cur().text;
            p_ += 2;
            ASSIGN_OR_RETURN(kw.value, Expression());
            for (const auto& other : call->kwargs) {
              if (other.name == kw.name)
                return Err(kw.loc, absl::StrCat("keyword argument '", kw.name, "' repeated"),
                           "pass it once");
            }
            call->kwargs.push_back(std::move(kw));
          } else {
            if (!call->kwargs.empty()) {
              return Err(Cur().loc, "positional argument follows keyword argument",
                         "put positional arguments first");
            }
            ASSIGN_OR_RETURN(ExprPtr a, Expression());
            if (IsName("for")) return NotInSubset("generator expression", "write a for loop");
            call->args.push_back(std::move(a));
          }
          if (!IsOp(",")) break;
          ++p_;
        }
        RETURN_IF_ERROR(ExpectOp(")", "close the call's argument list"));
        e = std::move(call);
      } else if (IsOp("[")) {
        Loc loc = e->loc;
        ++p_;
        ExprPtr sub = Node(ExprKind::kSubscript, loc);
        sub->args.push_back(std::move(e));
        while (!IsOp("]")) {
          ASSIGN_OR_RETURN(ExprPtr idx, SliceItem());
          sub->args.push_back(std::move(idx));
          if (!IsOp(",")) break;
          ++p_;
        }
        if (sub->args.size() == 1)
          return Err(Cur().loc, "empty subscript", "index with v[i] or v[a:b]");
        RETURN_IF_ERROR(ExpectOp("]", "close the subscript"));
        e = std::move(sub);
      } else if (IsOp(".")) {
        ++p_;
        ExprPtr attr = Node(ExprKind::kAttr, e->loc);
        Loc nloc = Cur().loc;
        ASSIGN_OR_RETURN(attr->name, ExpectName());
        (void)nloc;
        attr->args.push_back(std::move(e));
        e = std::move(attr);
      } else {
        return e;
      }
    }
  }

  absl::StatusOr<ExprPtr> SliceItem() {
    Loc loc = Cur().loc;
    ExprPtr lo;
    if (!IsOp(":")) {
      ASSIGN_OR_RETURN(lo, Expression());
      if (!IsOp(":")) return lo;
    }
    ExprPtr s = Node(ExprKind::kSlice, loc);
    ++p_;  // ':'
    ExprPtr hi, step;
    if (!IsOp(":") && !IsOp("]") && !IsOp(",")) {
      ASSIGN_OR_RETURN(hi, Expression());
    }
    if (IsOp(":")) {
      ++p_;
      if (!IsOp("]") && !IsOp(",")) {
        ASSIGN_OR_RETURN(step, Expression());
      }
    }
    s->args.push_back(std::move(lo));
    s->args.push_back(std::move(hi));
    s->args.push_back(std::move(step));
    return s;
  }

  absl::StatusOr<ExprPtr> Atom() {
    DepthGuard g(this);
    RETURN_IF_ERROR(CheckDepth());
    const Token& tok = Cur();
    switch (tok.kind) {
      case Tok::kInt: {
        ExprPtr n = Node(ExprKind::kInt, tok.loc);
        n->ival = tok.ival;
        ++p_;
        return n;
      }
      case Tok::kFloat: {
        ExprPtr n = Node(ExprKind::kFloat, tok.loc);
        n->fval = tok.fval;
        ++p_;
        return n;
      }
      case Tok::kString: {
        ExprPtr n = Node(ExprKind::kStr, tok.loc);
        n->name = tok.text;
        ++p_;
        while (At(Tok::kString)) {
          n->name += Cur().text;
          ++p_;
        }
        return n;
      }
      case Tok::kName: {
        if (tok.text == "True" || tok.text == "False") {
          ExprPtr n = Node(ExprKind::kBool, tok.loc);
          n->ival = tok.text == "True";
          ++p_;
          return n;
        }
        if (tok.text == "None") {
          ++p_;
          return Node(ExprKind::kNone, tok.loc);
        }
        if (tok.text == "lambda")
          return Err(tok.loc, "lambda must be parenthesized here", "write (lambda i: ...)");
        if (tok.text == "await" || tok.text == "yield")
          return NotInSubset(absl::StrCat("'", tok.text, "'"), "remove it");
        if (Keywords().count(tok.text)) {
          return Err(tok.loc, absl::StrCat("unexpected keyword '", tok.text, "'"),
                     "check the syntax");
        }
        ExprPtr n = Node(ExprKind::kName, tok.loc);
        n->name = tok.text;
        ++p_;
        return n;
      }
      case Tok::kOp:
        if (tok.text == "(") {
          Loc loc = tok.loc;
          ++p_;
          if (IsOp(")")) {
            ++p_;
            return Node(ExprKind::kTuple, loc);
          }
          ASSIGN_OR_RETURN(ExprPtr first, Expression());
          if (IsName("for")) return NotInSubset("generator expression", "write a for loop");
          if (IsOp(")")) {
            ++p_;
            return first;
          }
          ExprPtr t = Node(ExprKind::kTuple, loc);
          t->args.push_back(std::move(first));
          while (IsOp(",")) {
            ++p_;
            if (IsOp(")")) break;
            ASSIGN_OR_RETURN(ExprPtr e, Expression());
            t->args.push_back(std::move(e));
          }
          RETURN_IF_ERROR(ExpectOp(")", "close the parenthesis"));
          return t;
        }
        if (tok.text == "[")
          return NotInSubset("list literal / comprehension", "use a tuple (a, b) or local(...)");
        if (tok.text == "{") return NotInSubset("dict/set literal", "use a tuple");
        if (tok.text == "...") return NotInSubset("'...'", "remove it");
        break;
      default:
        break;
    }
    return Err(tok.loc, absl::StrCat("expected an expression, found ", Describe(tok)),
               "check the syntax");
  }

  const SourceFile& src_;
  std::vector<Token> t_;
  size_t p_ = 0;
  int depth_ = 0;
};

}  // namespace

absl::StatusOr<Module> Parse(const SourceFile& src) {
  ASSIGN_OR_RETURN(std::vector<Token> toks, Tokenize(src));
  return Parser(src, std::move(toks)).ParseModule();
}

}  // namespace argus::dsl
