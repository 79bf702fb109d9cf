// base/flags.h: command-line flags for Argus programs.
//
// A FlagSet is declared per program (or per CLI verb), then parsed once.
// Accepts `--name=value`, `--name value`, `--bool` and `--no-bool`; a flag
// that was not declared is an error that names it, never ignored. Positional
// arguments are returned in order. `--help` is recognised and reported via
// help_requested().
//
// Thread safety: not thread-safe; parse before starting threads.
#ifndef ARGUS_BASE_FLAGS_H_
#define ARGUS_BASE_FLAGS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace argus {

class FlagSet {
 public:
  explicit FlagSet(std::string program, std::string usage = "");

  // Declare a flag. `target` holds the default and receives the parsed value;
  // it must outlive Parse().
  void String(const std::string& name, std::string* target, const std::string& help);
  void Int(const std::string& name, int64_t* target, const std::string& help);
  void Double(const std::string& name, double* target, const std::string& help);
  void Bool(const std::string& name, bool* target, const std::string& help);
  // A flag that may be repeated; each occurrence appends.
  void List(const std::string& name, std::vector<std::string>* target, const std::string& help);

  // Parses argv[first..argc). Returns the positional arguments.
  absl::StatusOr<std::vector<std::string>> Parse(int argc, char** argv, int first = 1);
  absl::StatusOr<std::vector<std::string>> Parse(const std::vector<std::string>& args);

  bool help_requested() const { return help_requested_; }
  // Usage text listing every flag with its default and help.
  std::string Help() const;

 private:
  enum class Kind { kString, kInt, kDouble, kBool, kList };
  struct Flag {
    Kind kind;
    void* target;
    std::string help;
    std::string default_text;
  };
  absl::Status Set(const std::string& name, Flag& flag, const std::string& value);

  std::string program_;
  std::string usage_;
  std::map<std::string, Flag> flags_;
  bool help_requested_ = false;
};

}  // namespace argus

#endif  // ARGUS_BASE_FLAGS_H_
