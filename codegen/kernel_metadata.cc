#include "codegen/kernel_metadata.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace argus::codegen {

using nlohmann::json;

std::string KernelMetadataToJson(const KernelMetadata& m, int indent) {
  json params = json::array();
  for (const KernelParam& p : m.params) {
    json jp = {{"name", p.name}, {"kind", p.kind}};
    if (!p.dtype.empty()) jp["dtype"] = p.dtype;
    if (p.kind == "tensormap") {
      jp["tensor"] = p.tensor;
      jp["box"] = p.box;
      jp["swizzle"] = p.swizzle;
    }
    params.push_back(jp);
  }
  const KernelResources& r = m.resources;
  json j = {
      {"symbol", m.symbol},
      {"target", m.target},
      {"format", m.format},
      {"artifact", m.artifact},
      {"params", params},
      {"grid", m.grid},
      {"block", m.block},
      {"dynamic_shared_bytes", m.dynamic_shared_bytes},
      {"resources",
       {{"registers", r.registers},
        {"sgprs", r.sgprs},
        {"agprs", r.agprs},
        {"spill_stores", r.spill_stores},
        {"spill_loads", r.spill_loads},
        {"sgpr_spills", r.sgpr_spills},
        {"vgpr_spills", r.vgpr_spills},
        {"static_shared_bytes", r.static_shared_bytes},
        {"scratch_bytes", r.scratch_bytes},
        {"barriers", r.barriers},
        {"max_threads", r.max_threads},
        {"kernarg_bytes", r.kernarg_bytes},
        {"wavefront_size", r.wavefront_size}}},
  };
  return j.dump(indent);
}

absl::StatusOr<KernelMetadata> KernelMetadataFromJson(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("kernel metadata is not a JSON object");
  }
  try {
    KernelMetadata m;
    m.symbol = j.at("symbol").get<std::string>();
    m.target = j.value("target", "");
    m.format = j.value("format", "");
    m.artifact = j.value("artifact", "");
    for (const json& p : j.value("params", json::array())) {
      KernelParam kp{p.at("name").get<std::string>(),
                     p.at("kind").get<std::string>(),
                     p.value("dtype", ""),
                     p.value("tensor", ""),
                     {},
                     p.value("swizzle", "")};
      if (p.contains("box")) kp.box = p["box"].get<std::vector<int64_t>>();
      m.params.push_back(kp);
    }
    if (j.contains("grid")) m.grid = j["grid"].get<std::array<int, 3>>();
    if (j.contains("block")) m.block = j["block"].get<std::array<int, 3>>();
    m.dynamic_shared_bytes = j.value("dynamic_shared_bytes", 0);
    const json r = j.value("resources", json::object());
    KernelResources& k = m.resources;
    k.symbol = m.symbol;
    k.registers = r.value("registers", -1);
    k.sgprs = r.value("sgprs", -1);
    k.agprs = r.value("agprs", -1);
    k.spill_stores = r.value("spill_stores", -1);
    k.spill_loads = r.value("spill_loads", -1);
    k.sgpr_spills = r.value("sgpr_spills", -1);
    k.vgpr_spills = r.value("vgpr_spills", -1);
    k.static_shared_bytes = r.value("static_shared_bytes", -1);
    k.scratch_bytes = r.value("scratch_bytes", -1);
    k.barriers = r.value("barriers", -1);
    k.max_threads = r.value("max_threads", -1);
    k.kernarg_bytes = r.value("kernarg_bytes", -1);
    k.wavefront_size = r.value("wavefront_size", -1);
    return m;
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("bad kernel metadata: ", e.what()));
  }
}

}  // namespace argus::codegen
