// Tests of the front end: lexer, parser, checker, diagnostics, IR dump.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "dsl/check.h"
#include "dsl/interp.h"
#include "dsl/lexer.h"
#include "dsl/parser.h"

namespace argus::dsl {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::StatusOr<ir::Module> CompileText(const std::string& text, CheckOptions opt = {}) {
  return Compile(std::make_shared<SourceFile>("t.py", text), opt);
}

std::string ErrorOf(const std::string& text, CheckOptions opt = {}) {
  auto m = CompileText(text, opt);
  if (m.ok()) return "";
  return std::string(m.status().message());
}

TEST_CASE("lexer handles indentation, comments, numbers, strings") {
  SourceFile src("t.py",
                 "def f():\n    x = 0x1F + 1_000 + 2.5e-1  # c\n    \"\"\"doc\nmore\"\"\"\n    if "
                 "(x <\n        3):\n        pass\n");
  auto toks = Tokenize(src);
  REQUIRE(toks.ok());
  int indents = 0, dedents = 0;
  bool saw_hex = false, saw_float = false, saw_doc = false;
  for (const Token& t : *toks) {
    indents += t.kind == Tok::kIndent;
    dedents += t.kind == Tok::kDedent;
    saw_hex |= t.kind == Tok::kInt && t.ival == 31;
    saw_float |= t.kind == Tok::kFloat && t.fval == 0.25;
    saw_doc |= t.kind == Tok::kString && t.text == "doc\nmore";
  }
  CHECK(indents == 2);
  CHECK(dedents == 2);
  CHECK(saw_hex);
  CHECK(saw_float);
  CHECK(saw_doc);
}

TEST_CASE("diagnostics carry file:line:col, source line, caret and hint") {
  std::string e = ErrorOf(
      "@kernel(threads=32)\ndef k(X: Tensor[f32, \"N\"]):\n    grid(1)\n    y = X[0] ** 2\n");
  CHECK(e.find("t.py:4:14: error: '**' (power) is not in the DSL subset") == 0);
  CHECK(e.find("\n        y = X[0] ** 2\n") != std::string::npos);
  CHECK(e.find("\n                 ^\n") != std::string::npos);
  CHECK(e.find("\nhint: ") != std::string::npos);
}

TEST_CASE("constructs outside the subset are rejected") {
  const char* cases[] = {
      "import os\n",
      "class A:\n    pass\n",
      "@kernel(threads=32)\ndef k():\n    grid(1)\n    try:\n        pass\n",
      "@kernel(threads=32)\ndef k():\n    grid(1)\n    with x:\n        pass\n",
      "@kernel(threads=32)\ndef k():\n    grid(1)\n    x = [i for i in range(3)]\n",
      "@kernel(threads=32)\ndef k():\n    grid(1)\n    x = {1: 2}\n",
      "@kernel(threads=32)\ndef k(*a):\n    grid(1)\n",
  };
  for (const char* c : cases) {
    std::string e = ErrorOf(c);
    INFO(c);
    CHECK(e.find("not in the DSL subset") != std::string::npos);
  }
}

TEST_CASE("deep nesting is an error, not a crash") {
  std::string deep =
      "@kernel(threads=32)\ndef k():\n    grid(1)\n    x = " + std::string(5000, '(') + "1" +
      std::string(5000, ')') + "\n";
  CHECK(ErrorOf(deep).find("nested too deeply") != std::string::npos);
  std::string unary =
      "@kernel(threads=32)\ndef k():\n    grid(1)\n    x = " + std::string(100000, '-') + "1\n";
  CHECK(ErrorOf(unary).find("nesting too deep") != std::string::npos);
  std::string blocks = "@kernel(threads=32)\ndef k():\n    grid(1)\n";
  for (int i = 0; i < 100; ++i) blocks += std::string(4 * (i + 1), ' ') + "if True:\n";
  blocks += std::string(404, ' ') + "pass\n";
  CHECK(ErrorOf(blocks).find("nest") != std::string::npos);
}

TEST_CASE("constants fold and overrides apply") {
  CheckOptions opt;
  opt.consts["BM"] = "64";
  auto m = CompileText(
      "@kernel(threads=BM)\ndef k(X: Tensor[f32, \"N\"], BM: const = 128, H: const = BM // 2 + "
      "1):\n"
      "    grid(cdiv(N, BM))\n    s = shared(f32, (H, BM * 2))\n    X[0] = s[0, 0]\n",
      opt);
  REQUIRE(m.ok());
  const ir::Function& k = m->functions[0];
  CHECK(k.threads == 64);
  CHECK(k.consts[0].ival == 64);
  CHECK(k.consts[0].overridden);
  CHECK(k.consts[1].ival == 33);
  std::string dump = ir::Dump(k);
  CHECK(dump.find("shared f32[33,128]") != std::string::npos);
  opt.consts = {{"NOPE", "1"}};
  CHECK(ErrorOf("@kernel(threads=32)\ndef k():\n    grid(1)\n", opt).find("NOPE") !=
        std::string::npos);
}

TEST_CASE("type, shape and memory-space errors are located") {
  struct Case {
    const char* src;
    const char* expect;
  } cases[] = {
      {"@device\ndef f(x: f32) -> f32:\n    s = shared(f32, (4,))\n    return "
       "x\n@kernel(threads=32)\ndef k():\n    grid(1)\n",
       "3:9: error: shared() is only allowed in a @kernel"},
      {"@kernel(threads=32)\ndef k(X: Tensor[f32, \"N\"]):\n    grid(1)\n    X[0] = X[0, 1]\n",
       "4:14: error: too many indices"},
      {"@kernel(threads=32)\ndef k(X: Tensor[f32, \"N\"]):\n    grid(1)\n    i = 3 / 2\n",
       "'/' on integers"},
      {"@kernel(threads=32)\ndef k(X: Tensor[i32, \"N\"]):\n    grid(1)\n    X[0] = 1.5\n",
       "stored value has type f32, expected i32"},
      {"@kernel(threads=32)\ndef k():\n    grid(1)\n    barrier(1)\n",
       "barrier() takes at most 0 arguments"},
      {"@kernel(threads=32)\ndef k():\n    grid(1)\n    x = shfl_xor(1.0)\n",
       "missing argument 'mask'"},
      {"@kernel(threads=32)\ndef k():\n    grid(1)\n    print(1)\n", "'print' is host Python"},
      {"@kernel(threads=32)\ndef k():\n    grid(1)\n    x = y + 1\n", "undefined name 'y'"},
      {"@kernel(threads=32)\ndef k():\n    grid(thread_id())\n", "grid() cannot call 'thread_id'"},
      {"@kernel(threads=64)\ndef k():\n    grid(1)\n    a = fragment(f32, (64, 64), "
       "mma=\"mma_sync_m16n8k16_bf16\", warps=(2, 2))\n",
       "warps 2x2 of 32 lanes is 128 threads, the block has 64"},
      {"@kernel(threads=128)\ndef k():\n    grid(1)\n    a = fragment(f32, (64, 64), "
       "mma=\"mfma_f32_32x32x8_bf16\", warps=(2, 2))\n",
       "is a gfx942 instruction; this kernel targets sm_90a"},
      {"@kernel(threads=32)\ndef k(A: Tensor[f32, \"M\", \"K\"]):\n    grid(1)\n    s = "
       "shared(f32, (16, 16))\n    copy_async(s, A.tile((16, 16), (0, 0)), thread_layout((4, "
       "8)))\n",
       "copy_async() copies global to shared"},
      {"@kernel(threads=32)\ndef k():\n    grid(1)\n    for i in range(4):\n        i = 2\n",
       "cannot assign to loop variable 'i'"},
      {"@kernel(threads=32)\ndef k():\n    grid(1)\n    return\n",
       "return is not allowed in a kernel"},
  };
  for (const Case& c : cases) {
    std::string e = ErrorOf(c.src);
    INFO(c.src << "\n=> " << e);
    CHECK(e.find(c.expect) != std::string::npos);
  }
}

TEST_CASE("docs/dsl.md examples parse, check and run") {
  std::string doc = ReadFile(std::string(ARGUS_SOURCE_DIR) + "/docs/dsl.md");
  std::regex block("```python\n([\\s\\S]*?)```");
  int n = 0;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), block); it != std::sregex_iterator();
       ++it) {
    std::string text = (*it)[1];
    ++n;
    INFO(text);
    std::smatch run;
    std::string first = text.substr(0, text.find('\n'));
    CheckOptions opt;
    LaunchArgs la;
    if (std::regex_search(first, run, std::regex("# run: dims (\\S+)( arch (\\S+))?"))) {
      std::stringstream ss(run[1].str());
      std::string kv;
      while (std::getline(ss, kv, ','))
        la.dims[kv.substr(0, kv.find('='))] = std::stoll(kv.substr(kv.find('=') + 1));
      if (run[3].matched) opt.arch = run[3];
    }
    auto m = Compile(std::make_shared<SourceFile>("doc.py", text), opt);
    REQUIRE(m.ok());
    if (la.dims.empty()) continue;
    const ir::Function& k = m->functions.back();
    auto ts = MakeTensors(k, la);
    REQUIRE(ts.ok());
    FillRandom(&*ts, 7);
    absl::Status st = Run(*m, k, la, &*ts);
    INFO(st.message());
    CHECK(st.ok());
  }
  CHECK(n >= 6);
}

TEST_CASE("every example compiles") {
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(ARGUS_SOURCE_DIR) + "/examples")) {
    if (e.path().extension() != ".py") continue;
    auto m = CompileFile(e.path().string(), {});
    INFO(e.path() << ": " << m.status().message());
    CHECK(m.ok());
  }
}

// Golden IR dumps. Regenerate with ARGUS_UPDATE_GOLDEN=1.
TEST_CASE("IR dump golden files") {
  struct G {
    const char* example;
    const char* golden;
    std::map<std::string, std::string> consts;
  } gs[] = {
      {"vector_add.py", "vector_add.ir", {}},
      {"../kb/templates/gemm_mma.py", "gemm_mma_bm64.ir", {{"BM", "64"}, {"BN", "128"}}},
      {"softmax.py", "softmax.ir", {}},
      {"gemm_wgmma.py", "gemm_wgmma.ir", {{"STAGES", "2"}}},
  };
  for (const G& g : gs) {
    CheckOptions opt;
    opt.consts = g.consts;
    auto m = CompileFile(std::string(ARGUS_SOURCE_DIR) + "/examples/" + g.example, opt);
    REQUIRE(m.ok());
    std::string dump = ir::Dump(*m);
    std::string path = std::string(ARGUS_SOURCE_DIR) + "/tests/dsl/golden/" + g.golden;
    if (std::getenv("ARGUS_UPDATE_GOLDEN")) {
      std::ofstream(path) << dump;
    }
    INFO(path);
    CHECK(dump == ReadFile(path));
  }
}

// tests/dsl/errors/*.py: each must fail; its first line is `# expect: L:C: error: substring`.
TEST_CASE("error suite") {
  int n = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(ARGUS_SOURCE_DIR) + "/tests/dsl/errors")) {
    if (e.path().extension() != ".py") continue;
    ++n;
    std::string text = ReadFile(e.path().string());
    std::string first = text.substr(0, text.find('\n'));
    REQUIRE(first.rfind("# expect: ", 0) == 0);
    std::string expect = first.substr(10);
    std::string loc = expect.substr(0, expect.find(" error: "));
    std::string msg = expect.substr(expect.find(" error: ") + 8);
    auto m = Compile(std::make_shared<SourceFile>(e.path().filename().string(), text), {});
    INFO(e.path().filename() << " => " << m.status().message());
    REQUIRE(!m.ok());
    std::string got(m.status().message());
    CHECK(got.rfind(e.path().filename().string() + ":" + loc + " error: ", 0) == 0);
    CHECK(got.find(msg) != std::string::npos);
    CHECK(got.find("\nhint: ") != std::string::npos);
  }
  CHECK(n >= 20);
}

}  // namespace
}  // namespace argus::dsl
