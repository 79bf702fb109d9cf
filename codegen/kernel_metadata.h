// codegen/kernel_metadata.h: what the worker needs to know about a compiled kernel.
//
// KernelResources is what the assembler (ptxas -v) or the AMDGPU code object's
// metadata note says about one kernel: registers, spills, static shared / LDS
// bytes, scratch. KernelMetadata adds the launch contract (symbol, parameters,
// grid and block, dynamic shared bytes) and the artifact it lives in. Both
// round-trip through JSON (the format of `<kernel>.json` beside an artifact).
//
// JSON (all keys always written; -1 = unknown):
//   {"symbol": "gemm_bf16_tn", "target": "sm_90a", "format": "ptx|cubin|hsaco",
//    "artifact": "gemm.ptx",
//    "params": [{"name": "A", "kind": "ptr", "dtype": "bf16"}, {"name": "M", "kind": "i32"},
//               {"name": "tmap0", "kind": "tensormap", "dtype": "bf16", "tensor": "A",
//                "box": [128, 64], "swizzle": "128B"}],
//    "grid": [x, y, z], "block": [x, y, z], "dynamic_shared_bytes": 0,
//    "resources": {"registers": 96, "sgprs": -1, "agprs": -1, "spill_stores": 0,
//                  "spill_loads": 0, "sgpr_spills": -1, "vgpr_spills": -1,
//                  "static_shared_bytes": 20480, "scratch_bytes": 0, "barriers": 1,
//                  "max_threads": 128, "kernarg_bytes": -1, "wavefront_size": -1}}
//
// Thread safety: plain values and pure functions.
#ifndef ARGUS_CODEGEN_KERNEL_METADATA_H_
#define ARGUS_CODEGEN_KERNEL_METADATA_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace argus::codegen {

struct KernelResources {
  std::string symbol;
  int registers = -1;            // NVIDIA registers per thread; AMD VGPRs (arch VGPRs)
  int sgprs = -1;                // AMD only
  int agprs = -1;                // AMD only (accumulation VGPRs)
  int spill_stores = -1;         // NVIDIA: bytes of spill stores
  int spill_loads = -1;          // NVIDIA: bytes of spill loads
  int sgpr_spills = -1;          // AMD: count
  int vgpr_spills = -1;          // AMD: count
  int static_shared_bytes = -1;  // NVIDIA smem / AMD group segment (LDS)
  int scratch_bytes = -1;        // NVIDIA stack frame / AMD private segment per thread
  int barriers = -1;             // NVIDIA named barriers used
  int max_threads = -1;          // AMD max flat workgroup size; NVIDIA maxntid if set
  int kernarg_bytes = -1;        // AMD kernarg segment size
  int wavefront_size = -1;       // AMD
};

struct KernelParam {
  std::string name;
  std::string kind;   // "ptr" | "i32" | "i64" | "f32" | "tensormap"
  std::string dtype;  // element type for "ptr" / "tensormap": "f32" | "bf16" | ...; "" otherwise
  // "tensormap" (a pointer to a 64-byte aligned, 128-byte CUtensorMap in global
  // memory that the launcher encodes): the tensor parameter it maps, the box
  // (rows, cols) and the swizzle ("128B" | "none").
  std::string tensor;
  std::vector<int64_t> box;
  std::string swizzle;
};

struct KernelMetadata {
  std::string symbol;
  std::string target;    // "sm_90a" | "gfx942"
  std::string format;    // "ptx" | "cubin" | "hsaco"
  std::string artifact;  // file name of the artifact, relative to the JSON file
  std::vector<KernelParam> params;
  std::array<int, 3> grid{1, 1, 1};
  std::array<int, 3> block{1, 1, 1};
  int dynamic_shared_bytes = 0;
  KernelResources resources;
};

std::string KernelMetadataToJson(const KernelMetadata& metadata, int indent = 2);
absl::StatusOr<KernelMetadata> KernelMetadataFromJson(const std::string& text);

}  // namespace argus::codegen

#endif  // ARGUS_CODEGEN_KERNEL_METADATA_H_
