#include "codegen/kernel_metadata.h"

#include <catch2/catch.hpp>

namespace argus::codegen {
namespace {

TEST_CASE("Kernel metadata round-trips through JSON", "[codegen]") {
  KernelMetadata m;
  m.symbol = "gemm_bf16_tn";
  m.target = "sm_90a";
  m.format = "cubin";
  m.artifact = "gemm.cubin";
  m.params = {{"A", "ptr", "bf16"}, {"M", "i32", ""}};
  m.grid = {64, 32, 1};
  m.block = {128, 1, 1};
  m.dynamic_shared_bytes = 1024;
  m.resources.registers = 96;
  m.resources.static_shared_bytes = 20480;
  m.resources.spill_stores = 0;
  const std::string text = KernelMetadataToJson(m);
  auto back = KernelMetadataFromJson(text);
  REQUIRE(back.ok());
  CHECK(back->symbol == m.symbol);
  CHECK(back->params.size() == 2);
  CHECK(back->params[0].dtype == "bf16");
  CHECK(back->params[1].dtype.empty());
  CHECK(back->grid == m.grid);
  CHECK(back->block == m.block);
  CHECK(back->dynamic_shared_bytes == 1024);
  CHECK(back->resources.registers == 96);
  CHECK(back->resources.static_shared_bytes == 20480);
  CHECK(back->resources.sgprs == -1);
  CHECK(KernelMetadataToJson(*back) == text);
  // Tensor-map parameters keep their tensor, box and swizzle.
  m.params.push_back({"tmap0", "tensormap", "bf16", "A", {128, 64}, "128B"});
  auto tm = KernelMetadataFromJson(KernelMetadataToJson(m));
  REQUIRE(tm.ok());
  CHECK(tm->params[2].kind == "tensormap");
  CHECK(tm->params[2].tensor == "A");
  CHECK(tm->params[2].box == std::vector<int64_t>{128, 64});
  CHECK(tm->params[2].swizzle == "128B");
}

TEST_CASE("Bad metadata JSON is an error", "[codegen]") {
  CHECK_FALSE(KernelMetadataFromJson("{").ok());
  CHECK_FALSE(KernelMetadataFromJson("{\"target\": \"sm_90a\"}").ok());
}

}  // namespace
}  // namespace argus::codegen
