// tests/security/proto_mutator.h: structured mutation of protobuf messages
// through reflection, for fuzzing services with any request type.
//
// A ProtoMutator changes a message field by field: integers to boundary and
// random values, enums to known and unknown numbers, strings and bytes to
// values from a pool of hostile strings (path traversal, SQL, format
// directives, bytes that are not UTF-8, NULs, long runs, megabyte blobs) or
// to ids the server handed out earlier (Remember), or to byte-level edits of
// their old value; repeated and map fields grow and shrink; nested messages
// are mutated in turn or cleared. RawBytes gives a byte-level mutation of a
// serialized message (often not a valid message at all).
//
// Thread safety: a ProtoMutator is not thread-safe; use one per thread.
#ifndef ARGUS_TESTS_SECURITY_PROTO_MUTATOR_H_
#define ARGUS_TESTS_SECURITY_PROTO_MUTATOR_H_

#include <google/protobuf/message.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace argus::security {

class ProtoMutator {
 public:
  explicit ProtoMutator(uint64_t seed) : rng_(seed) {}

  // Mutates a few fields of `m` (recursively, to a bounded depth).
  void Mutate(google::protobuf::Message* m);
  // Fills every field of `m` with fresh values (a random message).
  void Randomize(google::protobuf::Message* m, int depth = 0);
  // A byte-level mutation of `bytes` (flips, inserts, truncation, splices).
  std::string RawBytes(std::string bytes);
  // Adds every string field named "id" or ending in "_id" of `m` (and its
  // submessages) to the pool of values strings are drawn from.
  void Remember(const google::protobuf::Message& m);

  uint64_t Next() { return rng_(); }
  bool OneIn(uint64_t n) { return n <= 1 || rng_() % n == 0; }

 private:
  void MutateField(google::protobuf::Message* m, const google::protobuf::FieldDescriptor* f,
                   int depth);
  void SetRandom(google::protobuf::Message* m, const google::protobuf::FieldDescriptor* f,
                 int depth);
  void AddRandom(google::protobuf::Message* m, const google::protobuf::FieldDescriptor* f,
                 int depth);
  int64_t Int();
  std::string String(const std::string& old);

  std::mt19937_64 rng_;
  std::vector<std::string> ids_;  // ids the server handed out
};

}  // namespace argus::security

#endif  // ARGUS_TESTS_SECURITY_PROTO_MUTATOR_H_
