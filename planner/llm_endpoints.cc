#include "planner/llm_endpoints.h"

#include <cstdlib>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/secret_file.h"
#include "nlohmann/json.hpp"

namespace argus::planner {
namespace {

using nlohmann::json;

absl::Status Bad(const std::string& field, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", why));
}

bool HostChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-';
}

// host[:port] of a URL: a DNS name or IPv4 address, or an [IPv6] literal.
absl::Status ValidateHostPort(const std::string& hp, const std::string& field) {
  if (hp.find('@') != std::string::npos) return Bad(field, "user info (user@host) is not allowed");
  std::string host = hp, port;
  if (!hp.empty() && hp[0] == '[') {
    size_t close = hp.find(']');
    if (close == std::string::npos) return Bad(field, "an unclosed [IPv6] host");
    host = hp.substr(1, close - 1);
    for (char c : host) {
      if (!absl::ascii_isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.')
        return Bad(field, "the [IPv6] host has a character other than hex digits, ':' and '.'");
    }
    if (close + 1 < hp.size()) {
      if (hp[close + 1] != ':') return Bad(field, "text after the [IPv6] host");
      port = hp.substr(close + 2);
    }
  } else if (size_t c = hp.rfind(':'); c != std::string::npos) {
    host = hp.substr(0, c);
    port = hp.substr(c + 1);
  }
  if (host.empty()) return Bad(field, "no host");
  if (hp[0] != '[') {
    for (char c : host) {
      if (!HostChar(c)) return Bad(field, "the host may hold only letters, digits, '.' and '-'");
    }
    if (host.front() == '.' || host.front() == '-' || host.find("..") != std::string::npos)
      return Bad(field, "the host is not a valid name");
  }
  if (hp.find(':') != std::string::npos && hp.back() != ']') {
    int n = 0;
    if (port.empty() || port.size() > 5 || !absl::SimpleAtoi(port, &n) || n < 1 || n > 65535 ||
        !absl::ascii_isdigit(static_cast<unsigned char>(port[0])))
      return Bad(field, absl::StrCat("port '", port, "' is not a number in 1..65535"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateLlmUrl(const std::string& url, const std::string& field) {
  if (url.empty()) return Bad(field, "empty");
  if (url.size() > 2048) return Bad(field, "longer than 2048 bytes");
  for (unsigned char c : url) {
    if (c <= 0x20 || c >= 0x7f) {
      return Bad(field, absl::StrCat("a control character, space or non-ASCII byte (0x",
                                     absl::Hex(c), ") is not allowed in a URL"));
    }
  }
  std::string lower = absl::AsciiStrToLower(url);
  if (lower.rfind("https://", 0) == 0) {
    return Bad(field,
               "https:// is not spoken by the built-in client; run a local gateway (e.g. a "
               "reverse proxy on 127.0.0.1) and give its http:// URL");
  }
  if (lower.rfind("http://", 0) != 0) return Bad(field, "the scheme must be http://");
  std::string rest = url.substr(7);
  if (url.find('#') != std::string::npos) return Bad(field, "a #fragment is not allowed");
  size_t end = rest.find_first_of("/?");
  return ValidateHostPort(rest.substr(0, end), field);
}

absl::StatusOr<std::vector<LlmEndpoint>> LoadLlmEndpoints(const std::string& path) {
  auto text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  json doc = json::parse(*text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("endpoints") ||
      !doc["endpoints"].is_array() || doc["endpoints"].empty()) {
    return Bad(path, "expected {\"endpoints\": [{\"name\": ..., \"url\": ...}, ...]}");
  }
  std::vector<LlmEndpoint> out;
  std::set<std::string> names;
  for (size_t i = 0; i < doc["endpoints"].size(); ++i) {
    const json& e = doc["endpoints"][i];
    std::string field = absl::StrCat(path, ": endpoints[", i, "]");
    if (!e.is_object()) return Bad(field, "not an object");
    for (const char* key : {"name", "url", "model", "api_key_file", "api_key_env"}) {
      if (e.contains(key) && !e[key].is_string()) return Bad(field + "." + key, "not a string");
    }
    for (const auto& [key, v] : e.items()) {
      static const std::set<std::string> kKnown = {
          "name", "url", "model", "api_key_file", "api_key_env", "max_reply_bytes"};
      if (!kKnown.count(key)) return Bad(field + "." + key, "unknown field");
    }
    LlmEndpoint ep;
    ep.name = e.value("name", "");
    ep.url = e.value("url", "");
    ep.model = e.value("model", "");
    if (ep.name.empty() || ep.name.size() > 64 ||
        !std::all_of(ep.name.begin(), ep.name.end(), HostChar))
      return Bad(field + ".name", "1 to 64 letters, digits, '.' or '-'");
    if (!names.insert(ep.name).second) return Bad(field + ".name", "'" + ep.name + "' twice");
    if (auto st = ValidateLlmUrl(ep.url, field + ".url"); !st.ok()) return st;
    if (e.contains("api_key_file")) {
      auto key = ReadSecretFile(e["api_key_file"].get<std::string>());
      if (!key.ok()) return Bad(field + ".api_key_file", std::string(key.status().message()));
      ep.api_key = *key;
    } else if (e.contains("api_key_env")) {
      const char* v = std::getenv(e["api_key_env"].get<std::string>().c_str());
      if (!v || !*v) return Bad(field + ".api_key_env", "the variable is not set");
      ep.api_key = v;
    }
    for (char c : ep.api_key) {
      if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) >= 0x7f)
        return Bad(field, "the API key holds a space or control character");
    }
    if (e.contains("max_reply_bytes")) {
      if (!e["max_reply_bytes"].is_number_integer() || e["max_reply_bytes"].get<int64_t>() < 1024 ||
          e["max_reply_bytes"].get<int64_t>() > (64 << 20))
        return Bad(field + ".max_reply_bytes", "an integer in [1024, 67108864]");
      ep.max_reply_bytes = e["max_reply_bytes"].get<int64_t>();
    }
    out.push_back(std::move(ep));
  }
  return out;
}

absl::StatusOr<LlmEndpoint> PickLlmEndpoint(const std::vector<LlmEndpoint>& endpoints,
                                            const std::string& name) {
  if (endpoints.empty()) {
    return absl::InvalidArgumentError(
        "spec.policy: llm needs an LLM endpoint configured on this server (argus-server "
        "--llm_endpoints FILE), and it has none");
  }
  if (name.empty()) return endpoints.front();
  std::vector<std::string> names;
  for (const auto& e : endpoints) {
    if (e.name == name) return e;
    names.push_back(e.name);
  }
  std::string shown = name.size() > 80 ? name.substr(0, 80) + "..." : name;
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "spec.llm_endpoint: '", shown, "' is not one of this server's LLM endpoints (",
      absl::StrJoin(names, ", "),
      "); a job names one of them, their URLs and keys are the operator's (argus-server "
      "--llm_endpoints)"));
}

}  // namespace argus::planner
