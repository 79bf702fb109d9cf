// tests/reliability/store_count.h: counting rows in a job store from a test.
//
// Opens the SQLite file read-only beside the running server (WAL lets both
// read) and returns one integer: the tests count jobs and tasks themselves
// rather than trusting the server's answers.
//
// Thread safety: each call opens its own connection.
#ifndef ARGUS_TESTS_RELIABILITY_STORE_COUNT_H_
#define ARGUS_TESTS_RELIABILITY_STORE_COUNT_H_

#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <string>

namespace argus::reliability {

inline int64_t Count(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  REQUIRE(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_busy_timeout(h, 5000);
  sqlite3_stmt* st = nullptr;
  INFO(sql << ": " << sqlite3_errmsg(h));
  REQUIRE(sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
  int64_t v = -1;
  if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return v;
}

}  // namespace argus::reliability

#endif  // ARGUS_TESTS_RELIABILITY_STORE_COUNT_H_
