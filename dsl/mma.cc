#include "dsl/mma.h"

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

const MmaInfo kMmas[] = {
    {"mma_sync_m16n8k16_bf16", "sm_90a", 16, 8, 16, DType::kBF16, DType::kF32, 32, 8, 4, 4, NvA,
     NvB, NvC},
    {"mma_sync_m16n8k16_f16", "sm_90a", 16, 8, 16, DType::kF16, DType::kF32, 32, 8, 4, 4, NvA, NvB,
     NvC},
    {"mfma_f32_32x32x8_bf16", "gfx942", 32, 32, 8, DType::kBF16, DType::kF32, 64, 4, 4, 16, A32,
     B32, C32},
    {"mfma_f32_16x16x16_bf16", "gfx942", 16, 16, 16, DType::kBF16, DType::kF32, 64, 4, 4, 4, A16,
     B16, C16},
};

}  // namespace

const MmaInfo* FindMma(std::string_view name) {
  for (const MmaInfo& m : kMmas) {
    if (name == m.name) return &m;
  }
  return nullptr;
}

const MmaInfo* AllMmas(int* count) {
  *count = sizeof(kMmas) / sizeof(kMmas[0]);
  return kMmas;
}

const char* FragRoleName(FragRole r) {
  switch (r) {
    case FragRole::kAcc:
      return "acc";
    case FragRole::kA:
      return "A";
    case FragRole::kB:
      return "B";
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
  }
  return 0;
}

// Element order within a lane: tile-major ((t_outer * T_inner + t_inner) * regs + r).
void FragGeom::Coord(int warp, int lane, int e, int* row, int* col) const {
  int wrow = (warp / wn) * (bm / wm), wcol = (warp % wn) * (bn / wn);
  int r, t, rr, cc;
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
  }
}

}  // namespace argus::dsl
