// ITP (ElasticFlow raw) traces: read with file:line errors, one app per job, models by the paper's mix,
// deterministic. Input: a real excerpt (tests/sim/data/README.md).
#include <gtest/gtest.h>

#include <map>

#include "sim/itp_trace.h"
#include "sim/model_catalog.h"

namespace themis::sim {
namespace {

const std::string kExcerpt = std::string(THEMIS_SIM_TEST_DATA) + "/itp_cluster10_excerpt.csv";

std::string error_of(const std::string& text) {
  try {
    parse_itp_csv(text, "i.csv");
  } catch (const TraceError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ItpTrace, ReadsTheRawTrace) {
  const auto jobs = load_itp_csv(kExcerpt);
  ASSERT_EQ(jobs.size(), 20u);
  EXPECT_EQ(jobs[0].id, "5dc7d9cd-c300-9a4f-c3cd-dc2cc0935548");
  EXPECT_EQ(jobs[0].submit, 2266647);
  EXPECT_EQ(jobs[0].duration, 604);
  EXPECT_EQ(jobs[0].gpus, 16);
  EXPECT_EQ(jobs[0].line, 2);
}

TEST(ItpImport, OneAppPerJobSortedRebasedWithItsWork) {
  const auto jobs = load_itp_csv(kExcerpt);
  const ItpImport imported = itp_to_apps(jobs, {});
  ASSERT_EQ(imported.apps.size(), jobs.size());
  Seconds earliest = jobs[0].submit;
  for (const ItpJob& j : jobs) earliest = std::min(earliest, j.submit);
  EXPECT_EQ(imported.rebased_by, earliest);
  EXPECT_EQ(imported.apps[0].arrival, 0);
  std::map<std::string, const ItpJob*> by_id;
  for (const ItpJob& j : jobs) by_id[j.id] = &j;
  for (std::size_t k = 0; k < imported.apps.size(); ++k) {
    const AppSpec& app = imported.apps[k];
    if (k > 0) {
      EXPECT_LE(imported.apps[k - 1].arrival, app.arrival);
    }
    const ItpJob& source = *by_id.at(app.name);
    ASSERT_EQ(app.jobs.size(), 1u);
    const JobSpec& job = app.jobs[0];
    EXPECT_EQ(app.arrival, source.submit - earliest);
    EXPECT_EQ(job.gpus, source.gpus);
    // On its own GPUs of one machine the job lasts its recorded duration.
    EXPECT_DOUBLE_EQ(static_cast<double>(job.iterations) * job.serial_iter_time / job.gpus, source.duration);
    const ModelInfo* model = find_model(job.model);
    ASSERT_NE(model, nullptr) << job.model;
    EXPECT_EQ(job.slowdown, model->slowdown);
  }
  // The round trip through our format keeps every app.
  EXPECT_EQ(trace_to_jsonl(parse_trace(trace_to_jsonl(imported.apps), "o")), trace_to_jsonl(imported.apps));
}

TEST(ItpImport, SameSeedSameTraceOtherSeedOtherModels) {
  const auto jobs = load_itp_csv(kExcerpt);
  ItpImportOptions one, two;
  two.seed = 2;
  EXPECT_EQ(trace_to_jsonl(itp_to_apps(jobs, one).apps), trace_to_jsonl(itp_to_apps(load_itp_csv(kExcerpt), one).apps));
  EXPECT_NE(trace_to_jsonl(itp_to_apps(jobs, one).apps), trace_to_jsonl(itp_to_apps(jobs, two).apps));
}

TEST(ItpImport, ModelsFollowThePapersMix) {
  std::vector<ItpJob> jobs;
  for (int k = 0; k < 6000; ++k) jobs.push_back({"j" + std::to_string(k), static_cast<Seconds>(k), 600, 1, k + 2});
  std::map<ModelCategory, int> count;
  for (const AppSpec& app : itp_to_apps(jobs, {}).apps) ++count[find_model(app.jobs[0].model)->category];
  EXPECT_NEAR(count[ModelCategory::kCV] / 6000.0, 0.1, 0.02);
  EXPECT_NEAR(count[ModelCategory::kNLP] / 6000.0, 0.6, 0.02);
  EXPECT_NEAR(count[ModelCategory::kSpeech] / 6000.0, 0.3, 0.02);
}

TEST(ItpImport, WindowAndMaxJobs) {
  const auto jobs = load_itp_csv(kExcerpt);
  ItpImportOptions o;
  o.from_time = 2266647;
  o.until_time = 2400000;
  std::size_t inside = 0;
  for (const ItpJob& j : jobs) inside += j.submit >= o.from_time && j.submit < o.until_time;
  const auto windowed = itp_to_apps(jobs, o);
  EXPECT_EQ(windowed.apps.size(), inside);
  EXPECT_GT(inside, 0u);
  EXPECT_LT(inside, jobs.size());
  o.max_jobs = 1;
  const auto first = itp_to_apps(jobs, o);
  ASSERT_EQ(first.apps.size(), 1u);
  EXPECT_EQ(first.apps[0].name, windowed.apps[0].name);
}

TEST(ItpTrace, BadRowsNameFileLineAndField) {
  const std::string header = "job_id,submission_time,duration,num_gpu\n";
  EXPECT_EQ(error_of("id,t\n"), "i.csv:1: header: expected 'job_id,submission_time,duration,num_gpu'");
  EXPECT_EQ(error_of(header + "a,1,600\n"), "i.csv:2: row: expected 4 comma-separated fields, got 3");
  EXPECT_EQ(error_of(header + ",1,600,1\n"), "i.csv:2: job_id: must not be empty");
  EXPECT_EQ(error_of(header + "a,-1,600,1\n"), "i.csv:2: submission_time: must be a number of seconds >= 0, got '-1'");
  EXPECT_EQ(error_of(header + "a,1,long,1\n"), "i.csv:2: duration: must be a number of seconds >= 0, got 'long'");
  EXPECT_EQ(error_of(header + "a,1,0,1\n"), "i.csv:2: duration: must be > 0");
  EXPECT_EQ(error_of(header + "a,1,600,0\n"), "i.csv:2: num_gpu: must be a positive integer, got '0'");
  EXPECT_EQ(error_of(header + "a,1,600,1\nb,2,600,1\na,3,600,1\n"), "i.csv:4: job_id: duplicate 'a' (first on line 2)");
  EXPECT_EQ(error_of(header), "i.csv:2: trace: no jobs");
  EXPECT_EQ(error_of(""), "i.csv:1: header: empty file");
  try {
    load_itp_csv("/nonexistent/i.csv");
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/i.csv:0: file: cannot open (no such file)");
  }
}

}  // namespace
}  // namespace themis::sim
