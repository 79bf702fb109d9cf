#include "tests/security/proto_mutator.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <limits>

namespace argus::security {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

constexpr int kMaxDepth = 4;
constexpr size_t kMaxIds = 256;

const char* const kHostile[] = {
    "",
    "../../../etc/passwd",
    "/",
    "'; DROP TABLE jobs; --",
    "\" OR 1=1 --",
    "%s%s%s%n%x",
    "{{7*7}}${7*7}",
    "\r\nX-Injected: 1\r\n",
    "http://127.0.0.1:1/v1",
    "file:///etc/shadow",
    "\xff\xfe\xfd invalid utf-8 \xc0\x80",
    "gemm",
    "softmax",
    "interp",
    "sm_90a",
    "gfx942",
    "probe",
    "candidate",
    "builtin",
    "llm",
    "{\"outcome\":\"ok\",\"speedup\":1e308}",
    "{\"outcome\":",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    "@kernel\ndef k(X: Tensor[f32, \"N\"]):\n    pass\n",
    "\xe2\x80\xae\xe2\x80\x8b",
};

}  // namespace

int64_t ProtoMutator::Int() {
  static const int64_t kEdges[] = {0,
                                   1,
                                   -1,
                                   2,
                                   16,
                                   255,
                                   1 << 20,
                                   std::numeric_limits<int32_t>::max(),
                                   std::numeric_limits<int32_t>::min(),
                                   std::numeric_limits<int64_t>::max(),
                                   std::numeric_limits<int64_t>::min(),
                                   std::numeric_limits<int64_t>::max() / 1000,
                                   1'000'000'000'000};
  switch (rng_() % 3) {
    case 0:
      return kEdges[rng_() % std::size(kEdges)];
    case 1:
      return static_cast<int64_t>(rng_() % 2000) - 1000;
    default:
      return static_cast<int64_t>(rng_());
  }
}

std::string ProtoMutator::String(const std::string& old) {
  switch (rng_() % 8) {
    case 0:
    case 1:
      if (!ids_.empty()) return ids_[rng_() % ids_.size()];
      [[fallthrough]];
    case 2:
      return kHostile[rng_() % std::size(kHostile)];
    case 3:
      return std::string(1 + rng_() % 4096, static_cast<char>('A' + rng_() % 26));
    case 4:
      // Rarely, past the server's message limit (8 MiB) or near it.
      return OneIn(8) ? std::string((9 << 20) + rng_() % 4096, 'x')
                      : std::string(rng_() % (300 << 10), 'y');
    case 5:
      return std::string("a\0b", 3);  // a NUL inside
    default:
      return RawBytes(old);
  }
}

std::string ProtoMutator::RawBytes(std::string b) {
  int edits = 1 + static_cast<int>(rng_() % 8);
  for (int i = 0; i < edits; ++i) {
    switch (rng_() % 5) {
      case 0:
        if (!b.empty()) b[rng_() % b.size()] ^= static_cast<char>(1 << (rng_() % 8));
        break;
      case 1:
        b.insert(b.begin() + (b.empty() ? 0 : rng_() % (b.size() + 1)),
                 static_cast<char>(rng_() % 256));
        break;
      case 2:
        if (!b.empty()) b.resize(rng_() % b.size());
        break;
      case 3:
        if (!b.empty()) {
          size_t at = rng_() % b.size();
          b.insert(at, b.substr(at, rng_() % (b.size() - at + 1)));
        }
        break;
      default:
        if (b.empty()) b.push_back(0);
        b[rng_() % b.size()] = static_cast<char>(rng_() % 256);
        break;
    }
  }
  return b;
}

void ProtoMutator::SetRandom(Message* m, const FieldDescriptor* f, int depth) {
  const Reflection* r = m->GetReflection();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      r->SetInt32(m, f, static_cast<int32_t>(Int()));
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      r->SetInt64(m, f, Int());
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      r->SetUInt32(m, f, static_cast<uint32_t>(Int()));
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      r->SetUInt64(m, f, static_cast<uint64_t>(Int()));
      break;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      r->SetDouble(
          m, f,
          OneIn(4) ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(Int()) / 7.0);
      break;
    case FieldDescriptor::CPPTYPE_FLOAT:
      r->SetFloat(
          m, f,
          OneIn(4) ? std::numeric_limits<float>::infinity() : static_cast<float>(Int()) / 7.0f);
      break;
    case FieldDescriptor::CPPTYPE_BOOL:
      r->SetBool(m, f, rng_() % 2);
      break;
    case FieldDescriptor::CPPTYPE_ENUM: {
      const auto* e = f->enum_type();
      // Known values mostly, unknown numbers too (proto3 enums are open).
      r->SetEnumValue(m, f,
                      OneIn(4) ? static_cast<int>(Int())
                               : e->value(static_cast<int>(rng_() % e->value_count()))->number());
      break;
    }
    case FieldDescriptor::CPPTYPE_STRING:
      r->SetString(m, f, String(r->GetString(*m, f)));
      break;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      if (depth < kMaxDepth) Randomize(r->MutableMessage(m, f), depth + 1);
      break;
  }
}

void ProtoMutator::AddRandom(Message* m, const FieldDescriptor* f, int depth) {
  const Reflection* r = m->GetReflection();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      r->AddInt32(m, f, static_cast<int32_t>(Int()));
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      r->AddInt64(m, f, Int());
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      r->AddUInt32(m, f, static_cast<uint32_t>(Int()));
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      r->AddUInt64(m, f, static_cast<uint64_t>(Int()));
      break;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      r->AddDouble(m, f, static_cast<double>(Int()));
      break;
    case FieldDescriptor::CPPTYPE_FLOAT:
      r->AddFloat(m, f, static_cast<float>(Int()));
      break;
    case FieldDescriptor::CPPTYPE_BOOL:
      r->AddBool(m, f, rng_() % 2);
      break;
    case FieldDescriptor::CPPTYPE_ENUM:
      r->AddEnumValue(m, f, static_cast<int>(Int() % 8));
      break;
    case FieldDescriptor::CPPTYPE_STRING:
      r->AddString(m, f, String(""));
      break;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      // Map entries are messages too: a random key and value.
      if (depth < kMaxDepth) Randomize(r->AddMessage(m, f), depth + 1);
      break;
  }
}

void ProtoMutator::MutateField(Message* m, const FieldDescriptor* f, int depth) {
  const Reflection* r = m->GetReflection();
  if (f->is_repeated()) {
    int n = r->FieldSize(*m, f);
    switch (rng_() % 4) {
      case 0:
        r->ClearField(m, f);
        return;
      case 1:
        if (n > 0) r->RemoveLast(m, f);
        return;
      case 2: {
        // Now and then many elements (a list limit, a thread per entry).
        int add = OneIn(16) ? 1 + static_cast<int>(rng_() % 2000) : 1;
        for (int i = 0; i < add; ++i) AddRandom(m, f, depth);
        return;
      }
      default:
        if (n > 0 && f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && depth < kMaxDepth) {
          Message* sub = r->MutableRepeatedMessage(m, f, static_cast<int>(rng_() % n));
          Mutate(sub);
        } else {
          AddRandom(m, f, depth);
        }
        return;
    }
  }
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    if (OneIn(5)) {
      r->ClearField(m, f);
    } else if (depth < kMaxDepth) {
      Mutate(r->MutableMessage(m, f));
    }
    return;
  }
  if (OneIn(6)) {
    r->ClearField(m, f);
  } else {
    SetRandom(m, f, depth);
  }
}

void ProtoMutator::Mutate(Message* m) {
  const auto* d = m->GetDescriptor();
  if (d->field_count() == 0) return;
  int changes = 1 + static_cast<int>(rng_() % 3);
  for (int i = 0; i < changes; ++i) {
    MutateField(m, d->field(static_cast<int>(rng_() % d->field_count())), 1);
  }
}

void ProtoMutator::Randomize(Message* m, int depth) {
  const auto* d = m->GetDescriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (OneIn(3)) continue;  // left unset
    if (f->is_repeated()) {
      int n = static_cast<int>(rng_() % 4);
      for (int k = 0; k < n; ++k) AddRandom(m, f, depth);
    } else {
      SetRandom(m, f, depth);
    }
  }
}

void ProtoMutator::Remember(const Message& m) {
  const auto* d = m.GetDescriptor();
  const Reflection* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) {
        for (int k = 0; k < r->FieldSize(m, f); ++k) Remember(r->GetRepeatedMessage(m, f, k));
      } else if (r->HasField(m, f)) {
        Remember(r->GetMessage(m, f));
      }
      continue;
    }
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_STRING || f->is_repeated()) continue;
    const std::string& name = f->name();
    bool id = name == "id" || (name.size() > 3 && name.compare(name.size() - 3, 3, "_id") == 0);
    std::string v = r->GetString(m, f);
    if (!id || v.empty()) continue;
    if (ids_.size() < kMaxIds) {
      ids_.push_back(v);
    } else {
      ids_[rng_() % ids_.size()] = v;
    }
  }
}

}  // namespace argus::security
