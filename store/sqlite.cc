#include "store/sqlite.h"

#include "absl/strings/str_cat.h"
#include "base/status.h"

namespace argus::store {

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

Statement& Statement::Bind(int index, int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) bind_error_ = db_->Error("bind");
  return *this;
}
Statement& Statement::Bind(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) bind_error_ = db_->Error("bind");
  return *this;
}
Statement& Statement::Bind(int index, const std::string& value) {
  if (sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                        SQLITE_TRANSIENT) != SQLITE_OK) {
    bind_error_ = db_->Error("bind");
  }
  return *this;
}
Statement& Statement::BindBlob(int index, const std::string& bytes) {
  if (sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()),
                        SQLITE_TRANSIENT) != SQLITE_OK) {
    bind_error_ = db_->Error("bind");
  }
  return *this;
}
Statement& Statement::BindNull(int index) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) bind_error_ = db_->Error("bind");
  return *this;
}

absl::StatusOr<bool> Statement::Step() {
  if (!bind_error_.ok()) return bind_error_;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->Error("step");
}

absl::Status Statement::Run() {
  auto r = Step();
  if (!r.ok()) return r.status();
  return absl::OkStatus();
}

int64_t Statement::Int(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::Double(int col) const { return sqlite3_column_double(stmt_, col); }
bool Statement::IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
std::string Statement::Text(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  return p ? std::string(static_cast<const char*>(p), n) : std::string();
}

absl::StatusOr<std::unique_ptr<Db>> Db::Open(const std::string& path) {
  sqlite3* raw = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    if (raw) sqlite3_close(raw);
    return absl::FailedPreconditionError(absl::StrCat("cannot open database ", path, ": ", msg));
  }
  std::unique_ptr<Db> db(new Db(raw));
  sqlite3_busy_timeout(raw, 5000);
  sqlite3_extended_result_codes(raw, 1);
  // A corrupt or foreign file is detected here, on the first read.
  auto st = db->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;");
  if (!st.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot use database ", path, ": ", st.message()));
  }
  if (sqlite3_db_readonly(raw, "main") == 1) {
    return absl::FailedPreconditionError(absl::StrCat("database ", path, " is read-only"));
  }
  return db;
}

absl::StatusOr<std::unique_ptr<Db>> Db::OpenReader(const std::string& path) {
  sqlite3* raw = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    if (raw) sqlite3_close(raw);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open a reader on database ", path, ": ", msg));
  }
  std::unique_ptr<Db> db(new Db(raw));
  sqlite3_busy_timeout(raw, 5000);
  sqlite3_extended_result_codes(raw, 1);
  // query_only: a bug that writes through a reader fails instead of racing the writer.
  RETURN_IF_ERROR(db->Exec("PRAGMA query_only=1;"));
  return db;
}

Db::~Db() { sqlite3_close_v2(db_); }

absl::StatusOr<Statement> Db::Prepare(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr) !=
      SQLITE_OK) {
    return Error(absl::StrCat("prepare '", sql.substr(0, 60), "'"));
  }
  return Statement(this, stmt);
}

absl::Status Db::Exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    int code = sqlite3_extended_errcode(db_);
    if ((code & 0xff) == SQLITE_READONLY || (code & 0xff) == SQLITE_FULL ||
        (code & 0xff) == SQLITE_IOERR) {
      return absl::UnavailableError(absl::StrCat("database: ", msg));
    }
    return absl::InternalError(absl::StrCat("database: ", msg));
  }
  return absl::OkStatus();
}

absl::Status Db::Error(const std::string& what) const {
  int code = sqlite3_extended_errcode(db_);
  std::string msg = absl::StrCat("database ", what, ": ", sqlite3_errmsg(db_));
  switch (code & 0xff) {
    case SQLITE_READONLY:
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(msg);
    case SQLITE_CONSTRAINT:
      return absl::AlreadyExistsError(msg);
    default:
      return absl::InternalError(msg);
  }
}

absl::StatusOr<std::unique_ptr<Transaction>> Transaction::Begin(Db* db) {
  auto st = db->Exec("BEGIN IMMEDIATE");
  if (!st.ok()) return st;
  return std::unique_ptr<Transaction>(new Transaction(db));
}

Transaction::~Transaction() {
  if (!done_) db_->Exec("ROLLBACK").IgnoreError();
}

absl::Status Transaction::Commit() {
  auto st = db_->Exec("COMMIT");
  if (st.ok()) done_ = true;
  return st;
}

}  // namespace argus::store
