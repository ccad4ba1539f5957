// The store layer owns every SQL statement of the coordinator (docs/planner.md "The store layer"): no
// source file of the coordinator outside coordinator/store/ holds a statement, so a query cannot creep back
// into the logic unnoticed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

TEST(SqlLayering, NoSqlStatementInTheCoordinatorOutsideItsStore) {
  const std::filesystem::path root = std::filesystem::path(THEMIS_SOURCE_DIR) / "coordinator";
  ASSERT_TRUE(std::filesystem::is_directory(root)) << root;
  // A string literal that starts with a statement word (the code writes SQL in capitals; prose in a message
  // such as " with a different spec" is not SQL).
  const std::regex statement(R"re("\s*(SELECT|INSERT|UPDATE|DELETE|REPLACE|WITH|BEGIN|COMMIT|PRAGMA|CREATE|DROP|ALTER)\b)re");
  std::vector<std::string> offenders;
  int scanned = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    const auto& path = entry.path();
    if (!entry.is_regular_file() || (path.extension() != ".cc" && path.extension() != ".h")) continue;
    if (path.parent_path().filename() == "store") continue;
    ++scanned;
    std::ifstream in(path);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number)
      if (std::regex_search(line, statement)) offenders.push_back(path.string() + ":" + std::to_string(number) + ": " + line);
  }
  EXPECT_GT(scanned, 20) << "the coordinator's sources were not found under " << root;
  std::ostringstream shown;
  for (const auto& o : offenders) shown << o << "\n";
  EXPECT_TRUE(offenders.empty()) << "SQL outside coordinator/store/:\n" << shown.str();
}

}  // namespace
