// dsl/mma.h: the MMA instructions the DSL exposes and their per-lane layouts.
//
// For each instruction: its shape (M x N x K), operand and accumulator types,
// the warp size it runs on, and the exact hardware mapping of (lane, register
// element) to matrix coordinates for A (M x K), B (K x N) and C/D (M x N):
//   NVIDIA mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}: PTX ISA,
//     "Matrix Fragments for mma.m16n8k16 with floating point type".
//   AMD v_mfma_f32_32x32x8bf16_1k / v_mfma_f32_16x16x16bf16_1k (CDNA3).
//   NVIDIA wgmma.mma_async.m64nNk16.f32.{bf16,f16} (sm_90a): issued by a warp
//     group of 128 threads, B from shared memory (a descriptor; no per-lane
//     layout), A from shared memory or from registers (the m16n8k16 A layout
//     per warp, rows 16w.. for warp w of the group), D per "Register
//     Fragments ... wgmma .m64nNk16".
// FragGeom spreads a block-level fragment tile over warps and instruction
// tiles; the interpreter, the verifier and codegen all use these functions,
// so they agree on which lane holds which element.
//
// Thread safety: immutable tables and pure functions.
#ifndef ARGUS_DSL_MMA_H_
#define ARGUS_DSL_MMA_H_

#include <string_view>
#include <vector>

#include "dsl/types.h"

namespace argus::dsl {

struct MmaInfo {
  const char* name;  // DSL spelling, e.g. "mma_sync_m16n8k16_bf16"
  const char* arch;  // "sm_90a" or "gfx942"
  int m, n, k;
  DType ab;                    // A and B element type
  DType acc;                   // accumulator type
  int warp_size;               // lanes that execute one instruction (128: a warp group)
  int regs_a, regs_b, regs_c;  // elements per lane
  // Coordinates of lane `lane`'s element `r`.
  void (*a_coord)(int lane, int r, int* row, int* col);  // row in M, col in K
  void (*b_coord)(int lane, int r, int* row, int* col);  // row in K, col in N
  void (*c_coord)(int lane, int r, int* row, int* col);  // row in M, col in N
  bool wgmma = false;  // B is a shared-memory descriptor (b_coord null); A a descriptor or
                       // registers (a_coord: the register layout)
};

// Distinct accumulator rows one lane holds in an instruction tile, and the
// row slot (0..AccRowsPerTile-1) of its accumulator register `r`. The pattern
// is the same for every lane of the supported instructions.
int AccRowsPerTile(const MmaInfo& m);
int AccRowSlot(const MmaInfo& m, int r);
// Bit mask of the lane bits that select only columns of the accumulator (the
// lanes sharing a row differ in exactly these bits): 0b11 on m16n8 layouts.
int AccColumnLaneBits(const MmaInfo& m);

// nullptr if `name` is not an instruction.
const MmaInfo* FindMma(std::string_view name);
// All instructions, for listing in diagnostics.
const MmaInfo* AllMmas(int* count);

// kRow: a per-row vector of an accumulator (row_max/row_sum results), held
// where the accumulator's rows live: each lane keeps one value per distinct
// accumulator row it holds (RowsPerTile() per instruction tile).
enum class FragRole : uint8_t { kAcc, kA, kB, kRow };
const char* FragRoleName(FragRole r);

// A block-level fragment: logical tile rows x cols of `role`, for accumulator
// tile bm x bn spread over warps wm x wn (warp w owns (w / wn, w % wn)). A
// "warp" here is the instruction's unit of mma->warp_size threads (a warp
// group for wgmma); the fragment's units start at unit `first` of the block.
struct FragGeom {
  const MmaInfo* mma = nullptr;
  FragRole role = FragRole::kAcc;
  int bm = 0, bn = 0, bk = 0;  // bk: K extent (A and B fragments)
  int wm = 1, wn = 1;
  int first = 0;
  int TilesM() const { return bm / wm / mma->m; }
  int TilesN() const { return bn / wn / mma->n; }
  int TilesK() const { return bk / mma->k; }
  int Rows() const { return role == FragRole::kB ? bk : bm; }
  int Cols() const { return role == FragRole::kA ? bk : bn; }
  // Elements held by each lane.
  int PerLane() const;
  // Logical (row, col) within the block tile of lane-element `e` held by the
  // lane `lane` of warp `warp`.
  void Coord(int warp, int lane, int e, int* row, int* col) const;
  // Accumulators: the element of the row vector (role kRow, same rows) that
  // holds the row of lane-element `e` (lane-independent).
  int RowSlot(int e) const {
    return (e / mma->regs_c / TilesN()) * AccRowsPerTile(*mma) + AccRowSlot(*mma, e % mma->regs_c);
  }
  // The (unit, lane) of block thread `tid` in this fragment; false when the
  // thread holds no part of it (outside the fragment's units).
  bool Locate(int tid, int* warp, int* lane) const;
  // Accumulator sub-tiles of (h, w) (store(acc, dst, at=)): sets (*part)[e]
  // to the sub-tile `li * (bn/wn/w) + lj` of unit 0's part that lane-element
  // `e` lies in, the same for every lane; false when a unit's part is not a
  // whole number of (h, w) tiles or an element's sub-tile depends on the lane.
  bool PartIndex(int h, int w, std::vector<int>* part) const;
};

}  // namespace argus::dsl

#endif  // ARGUS_DSL_MMA_H_
