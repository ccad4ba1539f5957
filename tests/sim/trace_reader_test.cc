#include <gtest/gtest.h>

#include "sim/trace.h"

namespace themis::sim {
namespace {

const char* kGood =
    R"({"name":"a","arrival":5,"jobs":[{"model":"VGG16","gpus":4,"serial_iter_time":1.5,"iterations":100}]})";

std::string error_of(const std::string& text) {
  try {
    parse_trace(text, "t.jsonl");
  } catch (const TraceError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TraceReader, ReadsAGoodLineWithCatalogSlowdown) {
  const auto apps = parse_trace(std::string("# comment\n\n") + kGood + "\n", "t.jsonl");
  ASSERT_EQ(apps.size(), 1u);
  EXPECT_EQ(apps[0].name, "a");
  EXPECT_EQ(apps[0].arrival, 5);
  EXPECT_EQ(apps[0].scheme, HyperScheme::kSingle);
  ASSERT_EQ(apps[0].jobs.size(), 1u);
  EXPECT_EQ(apps[0].jobs[0].gpus, 4);
  EXPECT_DOUBLE_EQ(apps[0].jobs[0].slowdown[2], 1.289);
}

TEST(TraceReader, RoundTrips) {
  const auto apps = parse_trace(kGood, "t");
  const auto again = parse_trace(trace_to_jsonl(apps), "t2");
  EXPECT_EQ(trace_to_jsonl(apps), trace_to_jsonl(again));
}

TEST(TraceReader, SortsByArrival) {
  const std::string text = std::string(R"({"name":"late","arrival":9,"jobs":[{"model":"VGG16","gpus":1,"serial_iter_time":1,"iterations":1}]})") +
                           "\n" + kGood + "\n";
  const auto apps = parse_trace(text, "t");
  EXPECT_EQ(apps[0].name, "a");
  EXPECT_EQ(apps[1].name, "late");
}

struct BadRow {
  std::string line;
  std::string message;
};

class TraceErrors : public ::testing::TestWithParam<BadRow> {};

TEST_P(TraceErrors, NameFileLineFieldAndReason) {
  const std::string text = std::string(kGood) + "\n" + GetParam().line + "\n";
  const std::string got = error_of(text);
  EXPECT_EQ(got.substr(0, GetParam().message.size()), GetParam().message) << got;
}

INSTANTIATE_TEST_SUITE_P(
    EachError, TraceErrors,
    ::testing::Values(
        BadRow{"{not json", "t.jsonl:2: json: not valid JSON ("},
        BadRow{"[1,2]", "t.jsonl:2: json: each line must be one JSON object"},
        BadRow{R"({"arrival":0,"jobs":[]})", "t.jsonl:2: name: missing"},
        BadRow{R"({"name":"","arrival":0,"jobs":[]})", "t.jsonl:2: name: must be a non-empty string"},
        BadRow{R"({"name":"a","arrival":0,"jobs":[{"model":"VGG16","gpus":1,"serial_iter_time":1,"iterations":1}]})",
               "t.jsonl:2: name: duplicate app name 'a' (first on line 1)"},
        BadRow{R"({"name":"b","jobs":[]})", "t.jsonl:2: arrival: missing"},
        BadRow{R"({"name":"b","arrival":-1,"jobs":[]})", "t.jsonl:2: arrival: must be >= 0"},
        BadRow{R"({"name":"b","arrival":"x","jobs":[]})", "t.jsonl:2: arrival: must be a number"},
        BadRow{R"({"name":"b","arrival":0,"scheme":"grid","jobs":[]})",
               "t.jsonl:2: scheme: must be \"single\" or \"successive_halving\""},
        BadRow{R"({"name":"b","arrival":0,"jobs":[]})", "t.jsonl:2: jobs: must be a non-empty array"},
        BadRow{R"({"name":"b","arrival":0,"colour":1,"jobs":[]})", "t.jsonl:2: colour: unknown field"},
        BadRow{R"({"name":"b","arrival":0,"jobs":[{"gpus":1,"serial_iter_time":1,"iterations":1}]})",
               "t.jsonl:2: jobs[0].model: missing"},
        BadRow{R"({"name":"b","arrival":0,"jobs":[{"model":"Nope","gpus":1,"serial_iter_time":1,"iterations":1}]})",
               "t.jsonl:2: jobs[0].model: unknown model 'Nope' (give \"slowdown\" or use a catalog model)"},
        BadRow{R"({"name":"b","arrival":0,"jobs":[{"model":"VGG16","gpus":0,"serial_iter_time":1,"iterations":1}]})",
               "t.jsonl:2: jobs[0].gpus: must be a positive integer"},
        BadRow{R"({"name":"b","arrival":0,"jobs":[{"model":"VGG16","gpus":1.5,"serial_iter_time":1,"iterations":1}]})",
               "t.jsonl:2: jobs[0].gpus: must be a positive integer"},
        BadRow{R"({"name":"b","arrival":0,"jobs":[{"model":"VGG16","gpus":1,"serial_iter_time":0,"iterations":1}]})",
               "t.jsonl:2: jobs[0].serial_iter_time: must be > 0"},
        BadRow{R"({"name":"b","arrival":0,"jobs":[{"model":"VGG16","gpus":1,"serial_iter_time":1}]})",
               "t.jsonl:2: jobs[0].iterations: missing"},
        BadRow{R"({"name":"b","arrival":0,"jobs":[{"model":"X","gpus":1,"serial_iter_time":1,"iterations":1,"slowdown":[1,1,0.5,1]}]})",
               "t.jsonl:2: jobs[0].slowdown[2]: must be >= 1"},
        BadRow{R"({"name":"b","arrival":0,"jobs":[{"model":"X","gpus":1,"serial_iter_time":1,"iterations":1,"slowdown":[1,1]}]})",
               "t.jsonl:2: jobs[0].slowdown: must be an array of 4 numbers [same_slot, same_machine, same_rack, cross_rack]"},
        BadRow{R"({"name":"b","arrival":0,"jobs":[{"model":"VGG16","gpus":1,"serial_iter_time":1,"iterations":1,"loss":{"a":1,"z":2}}]})",
               "t.jsonl:2: jobs[0].loss.z: unknown field"},
        BadRow{R"({"name":"b","arrival":0,"max_job_gpus":0,"jobs":[]})", "t.jsonl:2: max_job_gpus: must be a positive integer"}));

TEST(TraceReader, EmptyTraceIsAnError) { EXPECT_EQ(error_of("# nothing\n"), "t.jsonl:1: trace: no apps"); }

TEST(TraceReader, MissingFileNamesIt) {
  try {
    load_trace("/nonexistent/x.jsonl");
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/x.jsonl:0: file: cannot open (no such file)");
  }
}

TEST(TraceReader, ADirectoryIsNamedAsOneNotReadAsAnEmptyTrace) {
  const std::string dir = ::testing::TempDir();
  try {
    load_trace(dir);
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()), dir + ":0: file: cannot open (a directory)");
  }
}

}  // namespace
}  // namespace themis::sim
