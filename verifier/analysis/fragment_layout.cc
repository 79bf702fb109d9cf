// verifier/analysis/fragment_layout.cc: row_reduce_layout and
// to_operand_layout by enumeration (see fragment_layout.h).
#include "verifier/analysis/fragment_layout.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"

namespace argus::verifier::engine {

void FragmentLayout::Before(const Op& op) {
  if (op.code == OpCode::kFragRowReduce) {
    if (f_.vars[op.operands[0]].type.is_frag())
      CheckRowReduceLayout(op, f_.vars[op.operands[0]].type.frag.Geom());
  } else if (op.code == OpCode::kToOperand) {
    const auto& rt = f_.vars[op.result].type;
    const auto& at = f_.vars[op.operands[0]].type;
    if (rt.is_frag() && at.is_frag()) CheckToOperandLayout(op, rt.frag.Geom(), at.frag.Geom());
  }
}

// The values a row reduction combines: within each lane, its elements of one
// row slot; across lanes, the lanes that differ in the column lane bits. Both
// must be exactly the elements of that row (all its columns, no other row).
void FragmentLayout::CheckRowReduceLayout(const Op& op, const dsl::FragGeom& g) {
  std::string why;
  if (!g.mma || g.wn != 1) {
    why = "the accumulator's rows span several warps";
  } else {
    // Each lane-element belongs to the group (lane less its column bits, row
    // slot); a group must hold one row and all of its columns. Tables built
    // once: O(lanes x elements) per warp (a wgmma accumulator has 128 lanes
    // of up to 128 elements).
    const int bits = dsl::AccColumnLaneBits(*g.mma), ws = g.mma->warp_size, per = g.PerLane();
    std::vector<int> slot(per);
    for (int e = 0; e < per; ++e) slot[e] = g.RowSlot(e);
    struct Group {
      int row = -1, lane = 0;
      std::set<int> cols;
    };
    for (int w = 0; w < g.wm && why.empty(); ++w) {
      std::map<std::pair<int, int>, Group> groups;
      for (int l = 0; l < ws && why.empty(); ++l) {
        for (int e = 0; e < per; ++e) {
          int row, col;
          g.Coord(w, l, e, &row, &col);
          Group& gr = groups[{l & ~bits, slot[e]}];
          if (gr.row < 0) {
            gr.row = row;
            gr.lane = l;
          } else if (gr.row != row) {
            why = absl::StrCat("warp ", w, " lane ", l, " element ", e, " holds row ", row,
                               ", combined into row ", gr.row, " of lane ", gr.lane);
            break;
          }
          gr.cols.insert(col);
        }
      }
      for (const auto& [key, gr] : groups) {
        if (!why.empty()) break;
        if (static_cast<int>(gr.cols.size()) != g.bn)
          why = absl::StrCat("row ", gr.row, " of warp ", w, " combines ", gr.cols.size(), " of ",
                             g.bn, " columns");
      }
    }
  }
  LayoutVerdict(op, "row_reduce_layout",
                why.empty() ? why
                            : absl::StrCat("row reduction does not combine exactly one row's "
                                           "columns: ",
                                           why));
}

// to_operand moves no data: each A element must already be in the lane (of
// the same warp) that holds the accumulator element of the same coordinates.
void FragmentLayout::CheckToOperandLayout(const Op& op, const dsl::FragGeom& a,
                                          const dsl::FragGeom& acc) {
  std::string why;
  if (!a.mma || !acc.mma || !a.mma->a_coord) {
    why = "the instruction has no register A operand";
  } else {
    for (int w = 0; w < a.wm * a.wn && why.empty(); ++w) {
      for (int l = 0; l < a.mma->warp_size && why.empty(); ++l) {
        std::set<std::pair<int, int>> held;
        for (int q = 0; q < acc.PerLane(); ++q) {
          int r, c;
          acc.Coord(w, l, q, &r, &c);
          held.insert({r, c});
        }
        for (int e = 0; e < a.PerLane(); ++e) {
          int r, c;
          a.Coord(w, l, e, &r, &c);
          if (!held.count({r, c})) {
            why = absl::StrCat("A element (", r, ",", c, ") of warp ", w, " lane ", l,
                               " is not held by that lane in the accumulator");
            break;
          }
        }
      }
    }
  }
  LayoutVerdict(
      op, "to_operand_layout",
      why.empty() ? why
                  : absl::StrCat("to_operand: the accumulator layout is not the A layout: ", why));
}

// A layout obligation decided by enumeration: proved, or a violation saying why.
void FragmentLayout::LayoutVerdict(const Op& op, const std::string& check, const std::string& why) {
  w_.Decided(why.empty());
  if (why.empty()) return;
  Finding f;
  f.check = check;
  f.message = why;
  f.loc = op.loc;
  f.source_line = Src(op.loc);
  w_.AddFinding(f);
}

}  // namespace argus::verifier::engine
