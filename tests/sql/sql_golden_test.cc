#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "coordinator/store/database.h"
#include "tests/store/temp_dir.h"

namespace themis::store {
namespace {

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs every statement of `sql`, printing the rows of those that return any.
std::string run_script(Database& db, const std::string& sql) {
  std::string out;
  const char* tail = sql.c_str();
  while (*tail) {
    sqlite3_stmt* stmt = nullptr;
    const char* next = nullptr;
    if (sqlite3_prepare_v2(db.handle(), tail, -1, &stmt, &next) != SQLITE_OK) {
      throw DatabaseError(std::string("prepare: ") + sqlite3_errmsg(db.handle()) + " near: " + std::string(tail).substr(0, 60));
    }
    tail = next;
    if (!stmt) continue;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
        if (c) out += '|';
        const auto* v = sqlite3_column_text(stmt, c);
        out += v ? reinterpret_cast<const char*>(v) : "NULL";
      }
      out += '\n';
    }
    const std::string error = rc == SQLITE_DONE ? "" : sqlite3_errmsg(db.handle());
    sqlite3_finalize(stmt);
    if (!error.empty()) throw DatabaseError("step: " + error);
  }
  return out;
}

TEST(SqlGolden, EveryCaseMatchesItsReference) {
  int cases = 0;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(THEMIS_SQL_DIR)) {
    if (entry.path().extension() == ".sql") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& sql : files) {
    auto reference = sql;
    reference.replace_extension(".reference");
    ASSERT_TRUE(std::filesystem::exists(reference)) << reference << " missing";
    testing::TempDir dir;
    Database db(dir.file("golden.db"));
    run_script(db, read(std::filesystem::path(THEMIS_SQL_DIR) / "fixture.data"));
    EXPECT_EQ(run_script(db, read(sql)), read(reference)) << "case " << sql.filename();
    ++cases;
  }
  EXPECT_GE(cases, 4);
}

}  // namespace
}  // namespace themis::store
