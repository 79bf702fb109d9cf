// argus-codegen-hashes: prints one line per compiled kernel — every kernel of
// every examples/*.py and concrete kb/templates/*.py and every KB template at its default knobs —
// with the digest of what codegen emitted (PTX for sm_90a, the code object for gfx942), or of the
// error message where compilation is refused.
//
//   argus-codegen-hashes SOURCE_ROOT KB_DIR
//
// scripts/codegen-identical runs it on two checkouts and compares the lines:
// a restructuring of the compiler must leave every line as it was. Keys name
// kernels, not files ("source:gemm_wgmma:sm_90a"), so a kernel that moved
// between files still compares with itself.
//
// Thread safety: a single-threaded program.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/dsl_compile.h"
#include "kb/kb.h"
#include "planner/candidate.h"
#include "planner/problems.h"

namespace {

namespace fs = std::filesystem;
using argus::codegen::CompileDslSource;
using argus::codegen::DslArtifacts;
using argus::codegen::DslCompileOptions;

// FNV-1a, 64 bits, and the length: a change of any byte shows.
std::string Digest(const std::string& bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  std::ostringstream out;
  out << std::hex << h << "/" << std::dec << bytes.size();
  return out.str();
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The hash of one compilation: of the artifact, or of the refusal.
std::string HashOf(const absl::StatusOr<DslArtifacts>& a, const std::string& target) {
  if (!a.ok()) return "error:" + Digest(std::string(a.status().message()));
  return Digest(target == "gfx942" ? a->code_object : a->ptx);
}

std::vector<std::string> KernelNames(const std::string& text) {
  static const std::regex kDef(R"(@kernel[^\n]*\n\s*def\s+(\w+))");
  std::vector<std::string> names;
  for (std::sregex_iterator it(text.begin(), text.end(), kDef), end; it != end; ++it) {
    names.push_back((*it)[1]);
  }
  return names;
}

// Every kernel of the concrete sources in `dir` (templates with ${NAME}
// placeholders are hashed through the KB instead). A kernel already hashed
// from an earlier folder is not hashed again, so a kernel that moved from
// examples/ to kb/templates/ keeps its key.
void HashSources(const fs::path& dir, std::map<std::string, std::string>* out) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".py") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::string text = ReadFile(f);
    if (text.find("${") != std::string::npos) continue;
    for (const std::string& kernel : KernelNames(text)) {
      if (out->count("source:" + kernel + ":sm_90a")) continue;
      for (const char* target : {"sm_90a", "gfx942"}) {
        DslCompileOptions o;
        o.target = target;
        o.kernel = kernel;
        o.assemble = false;
        (*out)["source:" + kernel + ":" + target] =
            HashOf(CompileDslSource(f.filename().string(), text, o), target);
      }
    }
  }
}

// Shapes to instantiate templates at: the family's interpreter shape, then
// shapes that fit the tensor-core templates' tiles.
std::vector<std::map<std::string, int64_t>> ShapesFor(const argus::planner::Family& f) {
  std::vector<std::map<std::string, int64_t>> shapes = {f.interp_shape};
  if (f.name == "gemm") {
    shapes.push_back({{"M", 4096}, {"N", 4096}, {"K", 4096}});
    shapes.push_back({{"M", 4096}, {"N", 14336}, {"K", 8192}});  // the split-K tail
  }
  if (f.name == "attention") {
    shapes.push_back({{"B", 1}, {"H", 8}, {"S", 1024}, {"D", 128}});
    shapes.push_back({{"B", 1}, {"H", 8}, {"S", 1024}, {"D", 64}});
  }
  if (f.name == "moe") {
    shapes.push_back({{"T", 256}, {"D", 2048}, {"F", 1024}, {"E", 8}, {"TOPK", 2}});
  }
  return shapes;
}

void HashTemplates(const argus::kb::Kb& kb, std::map<std::string, std::string>* out) {
  namespace pl = argus::planner;
  for (const argus::kb::Template& t : kb.templates()) {
    const pl::Family* fam = pl::FindFamily(t.family);
    if (!fam || t.dtypes.empty()) continue;
    int compiled = 0;
    std::string why;
    for (const auto& shape : ShapesFor(*fam)) {
      auto problem = pl::MakeProblem(t.family, shape, t.dtypes.front(), {});
      if (!problem.ok()) {
        why = std::string(problem.status().message());
        continue;
      }
      pl::Config config = pl::DefaultConfig(t, *problem);
      auto inst = pl::Instantiate(t, config, *problem);
      if (!inst.ok()) {
        why = std::string(inst.status().message());
        continue;
      }
      ++compiled;
      std::ostringstream shape_key;
      for (const auto& [k, v] : shape) shape_key << k << v;
      for (const std::string& target : t.targets) {
        if (target == "interp") continue;
        std::vector<std::string> kernels = inst->pipeline;
        if (kernels.empty()) kernels.push_back(inst->kernel);
        for (const std::string& kernel : kernels) {
          DslCompileOptions o;
          o.target = target;
          o.kernel = kernel;
          o.assemble = false;
          for (const auto& [k, v] : inst->constants) o.consts[k] = std::to_string(v);
          o.dims = inst->dims;
          (*out)["template:" + t.id + ":" + kernel + ":" + shape_key.str() + ":" + target] =
              HashOf(CompileDslSource(t.id + ".py", inst->source, o), target);
        }
      }
    }
    if (compiled == 0) std::cerr << "not compiled: template " << t.id << ": " << why << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: argus-codegen-hashes SOURCE_ROOT KB_DIR\n";
    return 2;
  }
  std::map<std::string, std::string> hashes;
  HashSources(fs::path(argv[1]) / "examples", &hashes);
  HashSources(argv[2] + std::string("/templates"), &hashes);
  auto kb = argus::kb::Kb::Load(argv[2]);
  if (!kb.ok()) {
    std::cerr << "argus-codegen-hashes: " << kb.status() << "\n";
    return 1;
  }
  HashTemplates(*kb, &hashes);
  for (const auto& [key, hash] : hashes) std::cout << key << " " << hash << "\n";
  return 0;
}
