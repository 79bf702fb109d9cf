// store/sqlite.h: a thin RAII layer over the SQLite C API.
//
// Db owns one connection; Statement owns one prepared statement. Errors come
// back as absl::Status carrying SQLite's message. Transaction commits
// explicitly and rolls back in its destructor otherwise, so an early return
// leaves nothing half-written.
//
// Thread safety: a Db is not thread-safe; the JobStore serializes access to
// its writer with a mutex and hands each reader to one thread at a time.
#ifndef ARGUS_STORE_SQLITE_H_
#define ARGUS_STORE_SQLITE_H_

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace argus::store {

class Db;

class Statement {
 public:
  Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_) {
    other.stmt_ = nullptr;
  }
  Statement(const Statement&) = delete;
  ~Statement();

  // Binders take 1-based parameter indexes, as SQLite does.
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, double value);
  Statement& Bind(int index, const std::string& value);
  Statement& Bind(int index, const char* value) { return Bind(index, std::string(value)); }
  Statement& BindBlob(int index, const std::string& bytes);
  Statement& BindNull(int index);
  Statement& Bind(int index, const std::optional<std::string>& value) {
    return value ? Bind(index, *value) : BindNull(index);
  }

  // Advances: true while a row is available, false when done.
  absl::StatusOr<bool> Step();
  // Ends the current execution (required before COMMIT while rows remain).
  void Reset() { sqlite3_reset(stmt_); }
  // Runs a statement that returns no rows.
  absl::Status Run();

  int64_t Int(int col) const;
  double Double(int col) const;
  std::string Text(int col) const;
  bool IsNull(int col) const;

 private:
  friend class Db;
  Statement(Db* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Db* db_;
  sqlite3_stmt* stmt_;
  absl::Status bind_error_;
};

class Db {
 public:
  // Opens (creating if needed) a database file with WAL journaling.
  static absl::StatusOr<std::unique_ptr<Db>> Open(const std::string& path);
  // Opens a query-only connection to a database that Open() made: under WAL
  // it reads the last commit without waiting for (or blocking) the writer.
  static absl::StatusOr<std::unique_ptr<Db>> OpenReader(const std::string& path);
  ~Db();

  absl::StatusOr<Statement> Prepare(const std::string& sql);
  absl::Status Exec(const std::string& sql);
  int64_t Changes() const { return sqlite3_changes64(db_); }
  absl::Status Error(const std::string& what) const;
  sqlite3* raw() { return db_; }

 private:
  explicit Db(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

// BEGIN IMMEDIATE ... COMMIT; rolls back on destruction unless committed.
class Transaction {
 public:
  static absl::StatusOr<std::unique_ptr<Transaction>> Begin(Db* db);
  ~Transaction();
  absl::Status Commit();

 private:
  explicit Transaction(Db* db) : db_(db) {}
  Db* db_;
  bool done_ = false;
};

}  // namespace argus::store

#endif  // ARGUS_STORE_SQLITE_H_
