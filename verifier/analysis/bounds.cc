#include "verifier/analysis/bounds.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace argus::verifier::engine {

expr Bounds::InBounds(const View& v, const std::vector<expr>& coords) {
  expr ok = c_.bool_val(true);
  for (size_t d = 0; d < coords.size(); ++d) {
    // A local array's extents are its own (it has no base allocation).
    expr ext = v.space == dsl::Space::kLocal ? I(v.ext[d]) : w_.BaseExtent(v, d);
    ok = ok && coords[d] >= 0 && coords[d] < ext;
  }
  return ok;
}

void Bounds::Accessed(const Access& a) {
  const Op& op = a.op;
  const View& v = a.view;
  const std::vector<expr>& coords = a.coords;
  const std::vector<expr>& elem = a.elem;
  const expr& guard = a.guard;
  const bool local = v.space == dsl::Space::kLocal;
  if (!local && !v.ok) return;
  expr bad = guard && !InBounds(v, coords);
  auto watch = BaseWatch();
  for (size_t d = 0; d < coords.size(); ++d) watch.emplace_back(absl::StrCat("@c", d), coords[d]);
  for (size_t j = 0; j < elem.size(); ++j) watch.emplace_back(absl::StrCat("@e", j), elem[j]);
  std::string name = local                            ? "local array"
                     : v.space == dsl::Space::kGlobal ? f_.tensors[v.base].name
                                                      : w_.alloc_names()[v.base];
  Obligation("oob", op, bad, watch, [&, name](const ProofResult& r, Finding* f) {
    std::vector<int64_t> cs;
    for (size_t d = 0; d < coords.size(); ++d) cs.push_back(M(r, absl::StrCat("@c", d)));
    for (size_t j = 0; j < elem.size(); ++j)
      f->cex.coordinates.push_back(M(r, absl::StrCat("@e", j)));
    f->message = absl::StrCat("out-of-bounds access to ",
                              local                            ? ""
                              : v.space == dsl::Space::kGlobal ? "tensor "
                                                               : "shared buffer ",
                              name, " at (", absl::StrJoin(cs, ","), ")");
    f->cex.expected = "an index within the shape";
    f->cex.actual = absl::StrCat(name, "(", absl::StrJoin(cs, ","), ")");
  });
}

}  // namespace argus::verifier::engine
