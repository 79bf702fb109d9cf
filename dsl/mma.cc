#include "dsl/mma.h"

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

namespace argus::dsl {
namespace {

// PTX m16n8k16 (.bf16/.f16 A: 4x .b32 = 8 elements; B: 2x .b32 = 4; C: 4 f32).
void NvA(int lane, int r, int* row, int* col) {
  int g = lane >> 2, t = lane & 3;
  *row = g + 8 * ((r >> 1) & 1);
  *col = t * 2 + (r & 1) + 8 * (r >> 2);
}
void NvB(int lane, int r, int* row, int* col) {
  int g = lane >> 2, t = lane & 3;
  *row = t * 2 + (r & 1) + 8 * (r >> 1);
  *col = g;
}
void NvC(int lane, int r, int* row, int* col) {
  int g = lane >> 2, t = lane & 3;
  *row = g + 8 * (r >> 1);
  *col = t * 2 + (r & 1);
}

// CDNA3 v_mfma_f32_32x32x8bf16_1k: A lane l holds A[l%32][4*(l/32)+r], B lane
// l holds B[4*(l/32)+r][l%32], D lane l register r holds
// D[8*(r/4) + 4*(l/32) + r%4][l%32].
void A32(int lane, int r, int* row, int* col) {
  *row = lane % 32;
  *col = 4 * (lane / 32) + r;
}
void B32(int lane, int r, int* row, int* col) {
  *row = 4 * (lane / 32) + r;
  *col = lane % 32;
}
void C32(int lane, int r, int* row, int* col) {
  *row = 8 * (r / 4) + 4 * (lane / 32) + r % 4;
  *col = lane % 32;
}
// v_mfma_f32_16x16x16bf16_1k: A[l%16][4*(l/16)+r], B[4*(l/16)+r][l%16],
// D[4*(l/16)+r][l%16].
void A16(int lane, int r, int* row, int* col) {
  *row = lane % 16;
  *col = 4 * (lane / 16) + r;
}
void B16(int lane, int r, int* row, int* col) {
  *row = 4 * (lane / 16) + r;
  *col = lane % 16;
}
void C16(int lane, int r, int* row, int* col) {
  *row = 4 * (lane / 16) + r;
  *col = lane % 16;
}

// wgmma .m64nNk16 f32 accumulator: warp w of the group holds rows 16w..16w+15
// in the m16n8 C layout, repeated over N/8 column tiles (register r: tile r/4).
void WgC(int lane, int r, int* row, int* col) {
  int w = lane >> 5, g = (lane >> 2) & 7, t = lane & 3;
  *row = 16 * w + g + 8 * ((r >> 1) & 1);
  *col = 8 * (r >> 2) + 2 * t + (r & 1);
}

// wgmma .m64nNk16 A from registers: warp w of the group holds rows
// 16w..16w+15 in the m16n8k16 A layout (4 .b32 registers, 8 elements).
void WgA(int lane, int r, int* row, int* col) {
  NvA(lane & 31, r, row, col);
  *row += 16 * (lane >> 5);
}

const MmaInfo kFixed[] = {
    {"mma_sync_m16n8k16_bf16", "sm_90a", 16, 8, 16, DType::kBF16, DType::kF32, 32, 8, 4, 4, NvA,
     NvB, NvC},
    {"mma_sync_m16n8k16_f16", "sm_90a", 16, 8, 16, DType::kF16, DType::kF32, 32, 8, 4, 4, NvA, NvB,
     NvC},
    {"mfma_f32_32x32x8_bf16", "gfx942", 32, 32, 8, DType::kBF16, DType::kF32, 64, 4, 4, 16, A32,
     B32, C32},
    {"mfma_f32_16x16x16_bf16", "gfx942", 16, 16, 16, DType::kBF16, DType::kF32, 64, 4, 4, 4, A16,
     B16, C16},
};

// The fixed instructions, then wgmma m64nNk16 for N = 8..256 step 8, bf16 and f16.
const std::vector<MmaInfo>& Table() {
  static const std::vector<MmaInfo>* table = [] {
    static std::deque<std::string> names;
    auto* t = new std::vector<MmaInfo>(std::begin(kFixed), std::end(kFixed));
    for (DType ab : {DType::kBF16, DType::kF16}) {
      for (int n = 8; n <= 256; n += 8) {
        names.push_back(std::string("wgmma_m64n") + std::to_string(n) + "k16_" +
                        (ab == DType::kBF16 ? "bf16" : "f16"));
        MmaInfo m{names.back().c_str(),
                  "sm_90a",
                  64,
                  n,
                  16,
                  ab,
                  DType::kF32,
                  128,
                  8,
                  0,
                  n / 2,
                  WgA,
                  nullptr,
                  WgC};
        m.wgmma = true;
        t->push_back(m);
      }
    }
    return t;
  }();
  return *table;
}

}  // namespace

const MmaInfo* FindMma(std::string_view name) {
  for (const MmaInfo& m : Table()) {
    if (name == m.name) return &m;
  }
  return nullptr;
}

const MmaInfo* AllMmas(int* count) {
  *count = static_cast<int>(Table().size());
  return Table().data();
}

int AccRowsPerTile(const MmaInfo& m) {
  int n = 0;
  for (int r = 0; r < m.regs_c; ++r) n = std::max(n, AccRowSlot(m, r) + 1);
  return n;
}

int AccRowSlot(const MmaInfo& m, int r) {
  // Distinct rows of lane 0 in register order.
  std::vector<int> rows;
  for (int q = 0; q <= r; ++q) {
    int row, col;
    m.c_coord(0, q, &row, &col);
    auto it = std::find(rows.begin(), rows.end(), row);
    if (it == rows.end()) rows.push_back(row);
    if (q == r) return static_cast<int>(std::find(rows.begin(), rows.end(), row) - rows.begin());
  }
  return 0;
}

int AccColumnLaneBits(const MmaInfo& m) {
  int bits = 0;
  for (int b = 1; b < m.warp_size && b < 32; b <<= 1) {
    bool col_only = true;
    for (int l = 0; l < m.warp_size && col_only; ++l) {
      for (int r = 0; r < m.regs_c && col_only; ++r) {
        int r0, c0, r1, c1;
        m.c_coord(l, r, &r0, &c0);
        m.c_coord(l ^ b, r, &r1, &c1);
        col_only = r0 == r1;
      }
    }
    if (col_only) bits |= b;
  }
  return bits;
}

const char* FragRoleName(FragRole r) {
  switch (r) {
    case FragRole::kAcc:
      return "acc";
    case FragRole::kA:
      return "A";
    case FragRole::kB:
      return "B";
    case FragRole::kRow:
      return "row";
  }
  return "?";
}

int FragGeom::PerLane() const {
  switch (role) {
    case FragRole::kAcc:
      return TilesM() * TilesN() * mma->regs_c;
    case FragRole::kA:
      return TilesM() * TilesK() * mma->regs_a;
    case FragRole::kB:
      return TilesK() * TilesN() * mma->regs_b;
    case FragRole::kRow:
      return TilesM() * AccRowsPerTile(*mma);
  }
  return 0;
}

bool FragGeom::Locate(int tid, int* warp, int* lane) const {
  int u = tid / mma->warp_size - first;
  if (u < 0 || u >= wm * wn) return false;
  *warp = u;
  *lane = tid % mma->warp_size;
  return true;
}

bool FragGeom::PartIndex(int h, int w, std::vector<int>* part) const {
  if (role != FragRole::kAcc || h <= 0 || w <= 0 || (bm / wm) % h != 0 || (bn / wn) % w != 0)
    return false;
  int nj = bn / wn / w;
  part->assign(PerLane(), 0);
  for (int e = 0; e < PerLane(); ++e) {
    for (int l = 0; l < mma->warp_size; ++l) {
      int r, c;
      Coord(0, l, e, &r, &c);
      int p = (r / h) * nj + c / w;
      if (l == 0) (*part)[e] = p;
      if (p != (*part)[e]) return false;
    }
  }
  return true;
}

// Element order within a lane: tile-major ((t_outer * T_inner + t_inner) * regs + r).
void FragGeom::Coord(int warp, int lane, int e, int* row, int* col) const {
  int wrow = (warp / wn) * (bm / wm), wcol = (warp % wn) * (bn / wn);
  int r, t, rr = 0, cc = 0;
  switch (role) {
    case FragRole::kAcc: {
      r = e % mma->regs_c;
      t = e / mma->regs_c;
      mma->c_coord(lane, r, &rr, &cc);
      *row = wrow + (t / TilesN()) * mma->m + rr;
      *col = wcol + (t % TilesN()) * mma->n + cc;
      return;
    }
    case FragRole::kA: {
      r = e % mma->regs_a;
      t = e / mma->regs_a;  // tm * TilesK + tk
      mma->a_coord(lane, r, &rr, &cc);
      *row = wrow + (t / TilesK()) * mma->m + rr;
      *col = (t % TilesK()) * mma->k + cc;
      return;
    }
    case FragRole::kB: {
      r = e % mma->regs_b;
      t = e / mma->regs_b;  // tk * TilesN + tn
      mma->b_coord(lane, r, &rr, &cc);
      *row = (t / TilesN()) * mma->k + rr;
      *col = wcol + (t % TilesN()) * mma->n + cc;
      return;
    }
    case FragRole::kRow: {
      int R = AccRowsPerTile(*mma);
      int slot = e % R;
      for (int q = 0; q < mma->regs_c; ++q) {
        if (AccRowSlot(*mma, q) != slot) continue;
        mma->c_coord(lane, q, &rr, &cc);
        break;
      }
      *row = wrow + (e / R) * mma->m + rr;
      *col = 0;
      return;
    }
  }
}

}  // namespace argus::dsl
