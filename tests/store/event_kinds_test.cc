// The one table of event kinds: CamelCase names, every name the coordinator writes is in it, the end events
// of every final state, and schema 8 renaming rows written under the old names.
#include "coordinator/store/event_kinds.h"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "coordinator/store/database.h"
#include "coordinator/store/migrations.h"
#include "tests/store/temp_dir.h"

namespace themis::store {
namespace {

bool camel_case(std::string_view name) {
  if (name.empty() || !std::isupper(static_cast<unsigned char>(name[0]))) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (!std::isalpha(static_cast<unsigned char>(name[i]))) return false;
    // No run of two capitals followed by a third: "AppCOMPLETED" is not CamelCase.
    if (i >= 2 && std::isupper(static_cast<unsigned char>(name[i])) && std::isupper(static_cast<unsigned char>(name[i - 1])) &&
        std::isupper(static_cast<unsigned char>(name[i - 2]))) {
      return false;
    }
  }
  return true;
}

TEST(EventKinds, AreCamelCaseAndUnique) {
  std::set<std::string_view> seen;
  for (const auto& k : event_kinds()) {
    EXPECT_TRUE(camel_case(k.name)) << k.name;
    EXPECT_TRUE(seen.insert(k.name).second) << k.name << " twice";
    EXPECT_FALSE(k.meaning.empty()) << k.name;
  }
  EXPECT_FALSE(camel_case("AppCOMPLETED"));
  EXPECT_FALSE(camel_case("FAILED"));
}

TEST(EventKinds, EndEventsOfEveryFinalState) {
  for (const char* s : {"PENDING", "COMPLETED", "FAILED", "CANCELLED"}) EXPECT_TRUE(is_event_kind(job_end_event(s))) << s;
  for (const char* s : {"COMPLETED", "FAILED", "CANCELLED"}) EXPECT_TRUE(is_event_kind(app_end_event(s))) << s;
  EXPECT_EQ(app_end_event("COMPLETED"), "AppCompleted");
  EXPECT_EQ(job_end_event("PENDING"), "Requeued");
  EXPECT_THROW(app_end_event("RUNNING"), std::invalid_argument);
  EXPECT_THROW(job_end_event("RUNNING"), std::invalid_argument);
}

TEST(EventKinds, EveryKindTheCoordinatorWritesIsInTheTable) {
  const std::regex call(R"re(event\([^;]*?,\s*"([A-Za-z]+)")re");
  int found = 0;
  for (const auto& entry : std::filesystem::directory_iterator(THEMIS_SOURCE_DIR "/coordinator")) {
    if (entry.path().extension() != ".cc") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string source = text.str();
    for (std::sregex_iterator m(source.begin(), source.end(), call), end; m != end; ++m) {
      ++found;
      EXPECT_TRUE(is_event_kind((*m)[1].str())) << (*m)[1] << " in " << entry.path();
    }
  }
  EXPECT_GT(found, 30);
}

TEST(EventKinds, SchemaEightRenamesOldRows) {
  testing::TempDir dir;
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(dir.file("t.db").c_str(), &raw), SQLITE_OK);
    for (std::size_t v = 0; v < 7; ++v) ASSERT_EQ(sqlite3_exec(raw, migrations()[v].c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << v;
    std::string rows = "INSERT INTO events(ts, kind, message) VALUES (1, 'Submitted', '')";
    for (const auto& r : renamed_event_kinds()) rows += ", (1, '" + std::string(r.old_name) + "', '')";
    ASSERT_EQ(sqlite3_exec(raw, (rows + "; PRAGMA user_version=7;").c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
  }
  Database db(dir.file("t.db"));
  EXPECT_EQ(db.user_version(), kSchemaVersion);
  auto st = db.prepare("SELECT kind FROM events ORDER BY id");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.text(0), "Submitted");
  for (const auto& r : renamed_event_kinds()) {
    ASSERT_TRUE(st.step());
    EXPECT_EQ(st.text(0), r.name);
    EXPECT_TRUE(is_event_kind(st.text(0))) << st.text(0);
  }
  // Still append-only.
  EXPECT_THROW(db.exec("UPDATE events SET kind = 'X'"), DatabaseError);
}

}  // namespace
}  // namespace themis::store
