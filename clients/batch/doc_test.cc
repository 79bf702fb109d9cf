#include "clients/batch/doc.h"

#include <catch2/catch.hpp>
#include <random>

namespace argus::batch {
namespace {

TEST_CASE("doc: YAML block mappings, lists, flow values, comments, lines") {
  auto n = ParseYaml(
      "# a batch\n"
      "name: llama  # trailing comment\n"
      "problems:\n"
      "  - name: qkv\n"
      "    shape: {M: 4096, N: 12288}\n"
      "    targets: [sm_90a, gfx942]\n"
      "  -\n"
      "    name: 'o proj'\n"
      "    tags:\n"
      "    - a\n"
      "    - \"b # not a comment\"\n");
  REQUIRE(n.ok());
  CHECK(n->Find("name")->scalar == "llama");
  const Node* p = n->Find("problems");
  REQUIRE(p->list.size() == 2);
  CHECK(p->line == 4);
  CHECK(p->list[0].Find("shape")->Find("N")->scalar == "12288");
  CHECK(p->list[0].Find("shape")->line == 5);
  CHECK(p->list[0].Find("targets")->list[1].scalar == "gfx942");
  CHECK(p->list[1].Find("name")->scalar == "o proj");
  CHECK(p->list[1].Find("name")->quoted);
  CHECK(p->list[1].Find("tags")->list[1].scalar == "b # not a comment");
  CHECK(p->list[1].Find("tags")->list[1].line == 11);
}

TEST_CASE("doc: YAML errors are located") {
  auto e = [](const std::string& text) {
    auto n = ParseYaml(text);
    REQUIRE(!n.ok());
    return std::string(n.status().message());
  };
  CHECK(e("a: 1\n  b: 2\n").rfind("2: unexpected indentation", 0) == 0);
  CHECK(e("a: 1\na: 2\n") == "2: duplicate key 'a'");
  CHECK(e("a:\n\t- x\n") == "2: tabs are not allowed for indentation");
  CHECK(e("a: [1, 2\n").rfind("1: ", 0) == 0);
  CHECK(e("a: |\n  text\n").rfind("1: block scalars", 0) == 0);
  CHECK(e("a: *ref\n").rfind("1: anchors", 0) == 0);
  CHECK(e("x: 1\n- y\n").rfind("2: ", 0) == 0);
  CHECK(e("a: \"open\n").rfind("1: unterminated", 0) == 0);
}

TEST_CASE("doc: strict JSON with lines and columns") {
  auto n = ParseJson("{\"a\": [1, -2.5e3, true, null, \"x\\u00e9\\n\"],\n \"b\": {}}");
  REQUIRE(n.ok());
  CHECK(n->Find("a")->list.size() == 5);
  CHECK(n->Find("a")->list[4].scalar == "x\xc3\xa9\n");
  CHECK(n->Find("b")->line == 2);
  CHECK(std::string(ParseJson("{\"a\": 1,\n \"b\" 2}").status().message()) ==
        "2:6: expected ':' after a key");
  CHECK(!ParseJson("{a: 1}").ok());
  CHECK(!ParseJson("[1, 2,]").ok());
  CHECK(!ParseJson("01x").ok());
  CHECK(!ParseJson("{\"a\": 1} x").ok());
  CHECK(!ParseJson(std::string(200, '[')).ok());  // depth bound, no stack overflow
}

TEST_CASE("doc: random input never crashes either parser") {
  std::mt19937 rng(11);
  const std::string alphabet = "ab:- \n\t#[]{},'\"\\1|&*";
  for (int i = 0; i < 3000; ++i) {
    std::string s(rng() % 80, ' ');
    for (auto& c : s) c = alphabet[rng() % alphabet.size()];
    (void)ParseYaml(s);
    (void)ParseJson(s);
  }
  SUCCEED();
}

}  // namespace
}  // namespace argus::batch
