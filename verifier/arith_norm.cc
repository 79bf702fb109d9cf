#include "verifier/arith_norm.h"

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

namespace argus::verifier {
namespace {

using z3::expr;

// Floor division and its remainder for a > 0 (SMT-LIB's div and mod then).
int64_t FloorDiv(int64_t x, int64_t a) {
  int64_t q = x / a;
  if (x % a != 0 && x < 0) --q;
  return q;
}
int64_t FloorMod(int64_t x, int64_t a) {
  int64_t r = x % a;
  return r < 0 ? r + a : r;
}

// A sum c + sum(coef * term) with integer coefficients; the terms (atoms that
// are not sums or constant multiples) by their Z3 id, so that equal atoms
// merge and the rebuilt sum has one order.
struct Lin {
  int64_t c = 0;
  std::map<unsigned, std::pair<expr, int64_t>> t;
};

std::optional<int64_t> Numeral(const expr& e) {
  int64_t v;
  if (e.is_numeral_i64(v)) return v;
  return std::nullopt;
}

// x / a or x % a (by `kind`) with a constant a > 0: x and a.
bool ByConst(const expr& e, Z3_decl_kind kind, expr* x, int64_t* a) {
  if (!e.is_app() || e.decl().decl_kind() != kind || e.num_args() != 2) return false;
  auto v = Numeral(e.arg(1));
  if (!v || *v <= 0) return false;
  *x = e.arg(0);
  *a = *v;
  return true;
}

class Normalizer {
 public:
  explicit Normalizer(z3::context& ctx) : c_(ctx) {}

  expr Norm(const expr& e) {
    if (!e.is_app()) return e;  // quantifiers and bound variables stay as they are
    auto hit = memo_.find(e.id());
    if (hit != memo_.end()) return hit->second.second;
    expr r = e;
    if (e.num_args() > 0) {
      z3::expr_vector args(c_);
      bool same = true;
      for (unsigned i = 0; i < e.num_args(); ++i) {
        expr a = Norm(e.arg(i));
        same = same && a.id() == e.arg(i).id();
        args.push_back(a);
      }
      if (!same) r = e.decl()(args);
    }
    if (r.is_int() && r.num_args() > 0) r = Rewrite(r);
    memo_.emplace(e.id(), std::make_pair(e, r));
    return r;
  }

 private:
  expr Rewrite(const expr& r) {
    expr x(c_);
    int64_t a;
    switch (r.decl().decl_kind()) {
      case Z3_OP_ADD:
      case Z3_OP_SUB:
      case Z3_OP_UMINUS:
      case Z3_OP_MUL: {
        Lin l;
        if (!Add(r, 1, &l)) return r;
        Combine(&l);
        return Build(l);
      }
      case Z3_OP_IDIV:
        return ByConst(r, Z3_OP_IDIV, &x, &a) ? Div(r, x, a) : r;
      case Z3_OP_MOD:
        return ByConst(r, Z3_OP_MOD, &x, &a) ? Mod(r, x, a) : r;
      default:
        return r;
    }
  }

  // l += scale * e, sums and constant multiples flattened; false on overflow.
  bool Add(const expr& e, int64_t scale, Lin* l) {
    auto v = Numeral(e);
    if (v) {
      int64_t p;
      return !__builtin_mul_overflow(*v, scale, &p) && !__builtin_add_overflow(l->c, p, &l->c);
    }
    if (e.is_app() && e.is_int()) {
      switch (e.decl().decl_kind()) {
        case Z3_OP_ADD:
          for (unsigned i = 0; i < e.num_args(); ++i)
            if (!Add(e.arg(i), scale, l)) return false;
          return true;
        case Z3_OP_SUB: {
          int64_t neg;
          if (__builtin_mul_overflow(scale, -1, &neg)) return false;
          for (unsigned i = 0; i < e.num_args(); ++i)
            if (!Add(e.arg(i), i == 0 ? scale : neg, l)) return false;
          return true;
        }
        case Z3_OP_UMINUS: {
          int64_t neg;
          return !__builtin_mul_overflow(scale, -1, &neg) && Add(e.arg(0), neg, l);
        }
        case Z3_OP_MUL: {
          int64_t p = scale;
          std::optional<expr> other;
          for (unsigned i = 0; i < e.num_args(); ++i) {
            auto k = Numeral(e.arg(i));
            if (k) {
              if (__builtin_mul_overflow(p, *k, &p)) return false;
            } else if (other) {
              return Term(e, scale, l);  // a product of terms: an atom
            } else {
              other = e.arg(i);
            }
          }
          if (!other) {
            return !__builtin_add_overflow(l->c, p, &l->c);
          }
          return Add(*other, p, l);
        }
        default:
          break;
      }
    }
    return Term(e, scale, l);
  }

  bool Term(const expr& e, int64_t scale, Lin* l) {
    auto it = l->t.find(e.id());
    if (it == l->t.end()) {
      if (scale != 0) l->t.emplace(e.id(), std::make_pair(e, scale));
      return true;
    }
    if (__builtin_add_overflow(it->second.second, scale, &it->second.second)) return false;
    if (it->second.second == 0) l->t.erase(it);
    return true;
  }

  // d*a*(x / a) + d*(x % a) -> d*x, until no such pair is left.
  void Combine(Lin* l) {
    for (bool changed = true; changed;) {
      changed = false;
      for (auto& [id, dt] : l->t) {
        expr x(c_);
        int64_t a;
        if (!ByConst(dt.first, Z3_OP_IDIV, &x, &a)) continue;
        for (auto& [id2, mt] : l->t) {
          expr y(c_);
          int64_t b;
          int64_t want;
          if (!ByConst(mt.first, Z3_OP_MOD, &y, &b) || b != a || y.id() != x.id() ||
              __builtin_mul_overflow(mt.second, a, &want) || want != dt.second)
            continue;
          Lin next = *l;
          next.t.erase(id);
          next.t.erase(id2);
          if (!Add(x, mt.second, &next)) continue;
          *l = std::move(next);
          changed = true;
          break;
        }
        if (changed) break;
      }
    }
  }

  expr Build(const Lin& l) {
    z3::expr_vector parts(c_);
    for (const auto& [id, tc] : l.t)
      parts.push_back(tc.second == 1 ? tc.first : c_.int_val(tc.second) * tc.first);
    if (l.c != 0 || parts.empty()) parts.push_back(c_.int_val(l.c));
    return parts.size() == 1 ? parts[0] : z3::sum(parts);
  }

  // The range of l when it is a constant plus multiples of mods by constants.
  bool Bounds(const Lin& l, int64_t* lo, int64_t* hi) {
    __int128 L = l.c, H = l.c;
    for (const auto& [id, tc] : l.t) {
      expr y(c_);
      int64_t b;
      if (!ByConst(tc.first, Z3_OP_MOD, &y, &b)) return false;
      __int128 span = static_cast<__int128>(tc.second) * (b - 1);
      (span > 0 ? H : L) += span;
    }
    if (L < INT64_MIN || H > INT64_MAX) return false;
    *lo = static_cast<int64_t>(L);
    *hi = static_cast<int64_t>(H);
    return true;
  }

  expr Div(const expr& orig, const expr& x, int64_t a) {
    Lin l;
    if (!Add(x, 1, &l)) return orig;
    Lin q, r;
    q.c = FloorDiv(l.c, a);
    r.c = FloorMod(l.c, a);
    for (const auto& [id, tc] : l.t) {
      if (tc.second % a == 0) {
        q.t.emplace(id, std::make_pair(tc.first, tc.second / a));
      } else {
        r.t.emplace(id, tc);
      }
    }
    int64_t lo, hi;
    if (r.t.empty()) return Build(q);  // 0 <= r.c < a
    if (Bounds(r, &lo, &hi) && FloorDiv(lo, a) == FloorDiv(hi, a)) {
      if (__builtin_add_overflow(q.c, FloorDiv(lo, a), &q.c)) return orig;
      return Build(q);
    }
    expr rest = Build(r) / c_.int_val(a);
    if (!Term(rest, 1, &q)) return orig;
    return Build(q);
  }

  expr Mod(const expr& orig, const expr& x, int64_t a) {
    Lin l;
    if (!Add(x, 1, &l)) return orig;
    Lin r;
    r.c = FloorMod(l.c, a);
    for (const auto& [id, tc] : l.t) {
      int64_t k = FloorMod(tc.second, a);
      if (k != 0) r.t.emplace(id, std::make_pair(tc.first, k));
    }
    int64_t lo, hi;
    if (r.t.empty()) return c_.int_val(r.c);
    if (Bounds(r, &lo, &hi) && lo >= 0 && hi < a) return Build(r);
    if (r.c == 0 && r.t.size() == 1 && r.t.begin()->second.second == 1) {
      expr y(c_);
      int64_t b;
      if (ByConst(r.t.begin()->second.first, Z3_OP_MOD, &y, &b) && b % a == 0)
        return Mod(orig, y, a);
    }
    return z3::mod(Build(r), c_.int_val(a));
  }

  z3::context& c_;
  // by the input term's id: the input (kept alive for the id) and its result
  std::unordered_map<unsigned, std::pair<expr, expr>> memo_;
};

}  // namespace

z3::expr NormalizeDivMod(const z3::expr& e) {
  Normalizer n(e.ctx());
  return n.Norm(e);
}

}  // namespace argus::verifier
