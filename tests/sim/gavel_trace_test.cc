// Gavel traces: both formats read, imported with Gavel's throughputs, exported in the 10-field format
// and read back; errors name file:line. Inputs are real excerpts (tests/sim/data/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "policy/arbiter/policies/registry.h"
#include "core/cluster_presets.h"
#include "sim/gavel_trace.h"
#include "sim/simulator.h"

namespace themis::sim {
namespace {

const std::string kData = THEMIS_SIM_TEST_DATA;

const GavelThroughputs& table() {
  static const GavelThroughputs t = GavelThroughputs::load(kData + "/gavel_throughputs.csv");
  return t;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const TraceError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GavelThroughputs, ReadsEveryRowOfTheDerivedTable) {
  EXPECT_EQ(table().size(), 83u);
  const GavelThroughput* lm = table().find("LM (batch size 10)", 2);
  ASSERT_NE(lm, nullptr);
  EXPECT_DOUBLE_EQ(lm->consolidated[static_cast<int>(GavelGpu::kV100)], 163.12902048608936);
  EXPECT_DOUBLE_EQ(lm->unconsolidated[static_cast<int>(GavelGpu::kK80)], 21.144463279750546);
  EXPECT_EQ(table().find("CycleGAN", 8), nullptr);
  EXPECT_TRUE(table().knows_job_type("CycleGAN"));
  EXPECT_FALSE(table().knows_job_type("GPT-9"));
  // Not measured: 0.0 and an empty cell (ResNet-50 at batch size 128 does not fit a K80).
  const GavelThroughput* r50 = table().find("ResNet-50 (batch size 128)", 2);
  ASSERT_NE(r50, nullptr);
  EXPECT_EQ(r50->consolidated[static_cast<int>(GavelGpu::kK80)], 0);
  EXPECT_EQ(r50->unconsolidated[static_cast<int>(GavelGpu::kK80)], 0);
  EXPECT_GT(r50->consolidated[static_cast<int>(GavelGpu::kV100)], 0);
}

TEST(GavelImport, AJobNotMeasuredOnTheChosenGpuIsDropped) {
  const auto jobs = parse_gavel_trace("ResNet-50 (batch size 128)\tc\td\t-n\t1\t100\t2\t1\t-1\t0\n", "t");
  EXPECT_EQ(gavel_to_apps(jobs, table(), {}, "t").apps.size(), 1u);
  GavelImportOptions k80;
  k80.gpu = GavelGpu::kK80;
  const GavelImport on_k80 = gavel_to_apps(jobs, table(), k80, "t");
  EXPECT_TRUE(on_k80.apps.empty());
  EXPECT_EQ(on_k80.dropped, 1);
}

TEST(GavelThroughputs, BadRowsNameFileLineAndField) {
  const std::string header =
      "job_type,model,batch_size,scale_factor,v100_steps_per_s,p100_steps_per_s,k80_steps_per_s,"
      "v100_unconsolidated_steps_per_s,p100_unconsolidated_steps_per_s,k80_unconsolidated_steps_per_s\n";
  EXPECT_EQ(error_of([&] { GavelThroughputs::parse("a,b\n", "t.csv"); }).substr(0, 21), "t.csv:1: header: expe");
  EXPECT_EQ(error_of([&] { GavelThroughputs::parse(header + "A3C,A3C,,1,1,2,3,4,5\n", "t.csv"); }),
            "t.csv:2: row: expected 10 comma-separated fields, got 9");
  EXPECT_EQ(error_of([&] { GavelThroughputs::parse(header + "A3C,A3C,,0,1,2,3,4,5,6\n", "t.csv"); }),
            "t.csv:2: scale_factor: must be a positive integer, got '0'");
  EXPECT_EQ(error_of([&] { GavelThroughputs::parse(header + "A3C,A3C,,1,1,x,3,4,5,6\n", "t.csv"); }),
            "t.csv:2: p100_steps_per_s: must be a number >= 0 or empty, got 'x'");
  EXPECT_EQ(error_of([&] { GavelThroughputs::parse(header + "A3C,A3C,,1,1,2,3,4,5,6\nA3C,A3C,,1,1,2,3,4,5,6\n", "t.csv"); }),
            "t.csv:3: job_type: duplicate row for 'A3C' at scale factor 1");
  EXPECT_EQ(error_of([] { GavelThroughputs::load("/nonexistent/t.csv"); }), "/nonexistent/t.csv:0: file: cannot open (no such file)");
}

TEST(GavelTrace, ReadsThePhysicalClusterFormat) {
  const auto jobs = load_gavel_trace(kData + "/gavel_artifact_evaluation.trace");
  ASSERT_EQ(jobs.size(), 15u);
  EXPECT_EQ(jobs[0].job_type, "ResNet-50 (batch size 64)");
  EXPECT_EQ(jobs[0].working_directory, "image_classification/imagenet");
  EXPECT_EQ(jobs[0].num_steps_arg, "--num_minibatches");
  EXPECT_EQ(jobs[0].total_steps, 2931);
  EXPECT_EQ(jobs[0].scale_factor, 1);
  EXPECT_EQ(jobs[0].slo, -1);
  EXPECT_EQ(jobs[1].scale_factor, 2);
  EXPECT_EQ(jobs[14].job_type, "A3C");
  EXPECT_FALSE(jobs[14].needs_data_dir);
  EXPECT_EQ(jobs[14].line, 15);
}

TEST(GavelTrace, ReadsTheOlderMsrFormat) {
  const auto jobs = load_gavel_trace(kData + "/gavel_msr_2869ce_excerpt.trace");
  ASSERT_EQ(jobs.size(), 24u);
  EXPECT_EQ(jobs[0].job_type, "Transformer (batch size 256)");
  EXPECT_EQ(jobs[0].working_directory, "");
  EXPECT_EQ(jobs[0].num_steps_arg, "-step");
  EXPECT_EQ(jobs[0].total_steps, 981830);
  EXPECT_EQ(jobs[0].arrival, 352430);
  EXPECT_EQ(jobs[0].scale_factor, 4);
  EXPECT_EQ(jobs[18].scale_factor, 32);
}

TEST(GavelImport, DropsAndCountsJobsWithoutAThroughputAndRebasesArrivals) {
  const auto jobs = load_gavel_trace(kData + "/gavel_msr_2869ce_excerpt.trace");
  const GavelImport imported = gavel_to_apps(jobs, table(), {}, "x.trace");
  // Lines 7, 20, 24 (CycleGAN at 8 and 32), 17, 23 (Recommendation at 8), 19, 21 (LM, ResNet-50 at 32).
  EXPECT_EQ(imported.dropped, 7);
  EXPECT_EQ(imported.apps.size(), 17u);
  EXPECT_EQ(imported.rebased_by, 352430);
  EXPECT_EQ(imported.apps[0].arrival, 0);
  EXPECT_EQ(imported.apps[1].arrival, 352712 - 352430);
  EXPECT_EQ(imported.apps[0].name, "g1");
  const std::vector<std::string> want = {"CycleGAN at scale factor 32: 1", "CycleGAN at scale factor 8: 2",
                                         "LM (batch size 80) at scale factor 32: 1",
                                         "Recommendation (batch size 2048) at scale factor 8: 1",
                                         "Recommendation (batch size 8192) at scale factor 8: 1",
                                         "ResNet-50 (batch size 128) at scale factor 32: 1"};
  EXPECT_EQ(imported.dropped_kinds, want);
}

TEST(GavelImport, IterationTimeAndSlowdownComeFromTheThroughputs) {
  const std::string text =
      "LM (batch size 10)\tcmd\tdir\t--steps\t1\t1000\t2\t1\t-1\t50\n"
      "ResNet-50 (batch size 64)\tcmd\tdir\t--steps\t1\t500\t1\t1\t-1\t60\n";
  GavelImportOptions v100;
  const auto apps = gavel_to_apps(parse_gavel_trace(text, "t"), table(), v100, "t").apps;
  ASSERT_EQ(apps.size(), 2u);
  const JobSpec& lm = apps[0].jobs[0];
  EXPECT_EQ(lm.gpus, 2);
  EXPECT_EQ(lm.iterations, 1000);
  EXPECT_DOUBLE_EQ(lm.serial_iter_time, 2 / 163.12902048608936);
  const double s = 163.12902048608936 / 35.14049049611691;
  EXPECT_DOUBLE_EQ(lm.slowdown[0], 1.0);
  EXPECT_DOUBLE_EQ(lm.slowdown[1], 1.0);
  EXPECT_DOUBLE_EQ(lm.slowdown[2], s);
  EXPECT_DOUBLE_EQ(lm.slowdown[3], 1 + 3 * (s - 1));
  EXPECT_DOUBLE_EQ(apps[1].jobs[0].serial_iter_time, 1 / 4.394774823323071);
  EXPECT_EQ(apps[1].arrival, 10);

  GavelImportOptions k80;
  k80.gpu = GavelGpu::kK80;
  const auto on_k80 = gavel_to_apps(parse_gavel_trace(text, "t"), table(), k80, "t").apps;
  EXPECT_DOUBLE_EQ(on_k80[0].jobs[0].serial_iter_time, 2 / 29.984857868091424);
  EXPECT_DOUBLE_EQ(on_k80[0].jobs[0].slowdown[2], 29.984857868091424 / 21.144463279750546);
}

// The exported trace, read by the same reader, has the source's jobs: type, steps, GPUs, arrival.
void expect_same_jobs(const std::vector<GavelJob>& source, const std::vector<GavelJob>& back, Seconds rebase) {
  ASSERT_EQ(source.size(), back.size());
  for (std::size_t k = 0; k < source.size(); ++k) {
    SCOPED_TRACE("job " + std::to_string(k));
    EXPECT_EQ(back[k].job_type, source[k].job_type);
    EXPECT_EQ(back[k].total_steps, source[k].total_steps);
    EXPECT_EQ(back[k].scale_factor, source[k].scale_factor);
    EXPECT_DOUBLE_EQ(back[k].arrival, source[k].arrival - rebase);
    EXPECT_EQ(back[k].num_steps_arg, source[k].num_steps_arg);
    EXPECT_EQ(back[k].needs_data_dir, source[k].needs_data_dir);
  }
}

TEST(GavelRoundTrip, PhysicalClusterTraceThroughOursAndBack) {
  const auto source = load_gavel_trace(kData + "/gavel_artifact_evaluation.trace");
  const GavelImport imported = gavel_to_apps(source, table(), {}, "a.trace");
  ASSERT_EQ(imported.dropped, 0);
  const auto ours = parse_trace(trace_to_jsonl(imported.apps), "ours.jsonl");
  const std::string exported = apps_to_gavel(ours, table());
  const auto back = parse_gavel_trace(exported, "back.trace");
  expect_same_jobs(source, back, 0);
  for (std::size_t k = 0; k < source.size(); ++k) {
    EXPECT_EQ(back[k].working_directory, source[k].working_directory);
    // Gavel's ResNet-50 (batch size 64) line loads data with "-j 2"; the exported command uses "-j 8" as
    // its other ResNet-50 lines do.
    if (source[k].job_type != "ResNet-50 (batch size 64)") {
      EXPECT_EQ(back[k].command, source[k].command);
    }
  }
  // A second pass is a fixed point, byte for byte.
  const auto again = gavel_to_apps(back, table(), {}, "a.trace");
  EXPECT_EQ(apps_to_gavel(again.apps, table()), exported);
}

TEST(GavelRoundTrip, MsrTraceBecomesTheTenFieldFormatWithItsJobs) {
  const auto source = load_gavel_trace(kData + "/gavel_msr_2869ce_excerpt.trace");
  const GavelImport imported = gavel_to_apps(source, table(), {}, "m.trace");
  const auto back = parse_gavel_trace(apps_to_gavel(parse_trace(trace_to_jsonl(imported.apps), "o"), table()), "b");
  std::vector<GavelJob> kept;
  for (const GavelJob& j : source)
    if (table().find(j.job_type, j.scale_factor) != nullptr) kept.push_back(j);
  expect_same_jobs(kept, back, 352430);
  EXPECT_EQ(back[0].working_directory, "translation");
}

TEST(GavelImport, SameInputSameTrace) {
  const auto jobs = load_gavel_trace(kData + "/gavel_msr_2869ce_excerpt.trace");
  EXPECT_EQ(trace_to_jsonl(gavel_to_apps(jobs, table(), {}, "m").apps),
            trace_to_jsonl(gavel_to_apps(load_gavel_trace(kData + "/gavel_msr_2869ce_excerpt.trace"), table(), {}, "m").apps));
}

TEST(GavelImport, MaxJobsKeepsTheEarliest) {
  GavelImportOptions o;
  o.max_jobs = 3;
  const auto apps = gavel_to_apps(load_gavel_trace(kData + "/gavel_msr_2869ce_excerpt.trace"), table(), o, "m").apps;
  ASSERT_EQ(apps.size(), 3u);
  EXPECT_EQ(apps[2].name, "g3");
}

TEST(GavelImport, ConvertedTraceRunsToTheEnd) {
  const auto apps = gavel_to_apps(load_gavel_trace(kData + "/gavel_artifact_evaluation.trace"), table(), {}, "a").apps;
  const Cluster cluster(*cluster_preset("paper-testbed-64"));
  auto policy = arbiter::policies::make_policy("themis");
  const SimResult result = simulate(cluster, apps, *policy, SimSettings{});
  ASSERT_EQ(result.apps.size(), 15u);
  for (const AppResult& a : result.apps) {
    EXPECT_TRUE(a.finished) << a.name;
    // 15 jobs on 64 GPUs: each runs alone on its own GPUs, for its Gavel duration steps / (steps/s).
    const JobSpec& job = apps[static_cast<std::size_t>(a.id)].jobs[0];
    EXPECT_NEAR(a.jct, static_cast<double>(job.iterations) * job.serial_iter_time / job.gpus, 1e-3) << a.name;
  }
}

TEST(GavelExport, RefusesWhatGavelCannotReplay) {
  const auto trace = [](const std::string& job, const std::string& extra = "") {
    return parse_trace(R"({"name":"a","arrival":0)" + extra + R"(,"jobs":[)" + job + "]}", "t");
  };
  EXPECT_EQ(error_of([&] {
              apps_to_gavel(trace(R"({"model":"VGG16","gpus":1,"serial_iter_time":1,"iterations":5})"), table());
            }),
            "app 'a': jobs[0].model: 'VGG16' is not a Gavel job type (such as 'ResNet-50 (batch size 64)')");
  EXPECT_EQ(error_of([&] {
              apps_to_gavel(trace(R"({"model":"CycleGAN","gpus":4,"serial_iter_time":1,"iterations":5,"slowdown":[1,1,1,1]})"),
                            table());
            }),
            "app 'a': jobs[0].gpus: Gavel has no throughput for 'CycleGAN' at scale factor 4");
  EXPECT_EQ(error_of([&] {
              apps_to_gavel(trace(R"({"model":"CycleGAN","gpus":1,"serial_iter_time":1,"iterations":5,"slowdown":[1,1,1,1]})",
                                  R"(,"scheme":"successive_halving")"),
                            table());
            }),
            "app 'a': scheme: successive halving has no Gavel equivalent");
}

struct BadGavelRow {
  std::string line;
  std::string message;
};

class GavelTraceErrors : public ::testing::TestWithParam<BadGavelRow> {};

TEST_P(GavelTraceErrors, NameFileLineFieldAndReason) {
  const std::string good = "A3C\tcmd\trl\t--max-steps\t0\t100\t1\t1\t-1\t0\n";
  EXPECT_EQ(error_of([&] { parse_gavel_trace(good + GetParam().line + "\n", "g.trace"); }), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    EachError, GavelTraceErrors,
    ::testing::Values(
        BadGavelRow{"A3C\tcmd\trl", "g.trace:2: row: expected 10 tab-separated fields (physical_cluster) or 7 (msr), got 3"},
        BadGavelRow{"\tcmd\trl\t-n\t0\t100\t1\t1\t-1\t0", "g.trace:2: job_type: must not be empty"},
        BadGavelRow{"A3C\tcmd\trl\t-n\t2\t100\t1\t1\t-1\t0", "g.trace:2: needs_data_dir: must be 0 or 1, got '2'"},
        BadGavelRow{"A3C\tcmd\trl\t-n\t0\tlots\t1\t1\t-1\t0", "g.trace:2: total_steps: must be an integer, got 'lots'"},
        BadGavelRow{"A3C\tcmd\trl\t-n\t0\t0\t1\t1\t-1\t0", "g.trace:2: total_steps: must be > 0, got '0'"},
        BadGavelRow{"A3C\tcmd\trl\t-n\t0\t100\t0\t1\t-1\t0", "g.trace:2: scale_factor: must be a positive GPU count, got '0'"},
        BadGavelRow{"A3C\tcmd\trl\t-n\t0\t100\t1\t0\t-1\t0", "g.trace:2: priority_weight: must be > 0, got '0'"},
        BadGavelRow{"A3C\tcmd\trl\t-n\t0\t100\t1\t1\tx\t0", "g.trace:2: SLO: must be a number, got 'x'"},
        BadGavelRow{"A3C\tcmd\trl\t-n\t0\t100\t1\t1\t-1\t-5", "g.trace:2: arrival_time: must be >= 0"},
        BadGavelRow{"A3C\tcmd\t-n\t0\t100\tsoon\t1", "g.trace:2: arrival_time: must be a number, got 'soon'"},
        BadGavelRow{"A3C\tcmd\t-n\t0\t100\t5\t1.5", "g.trace:2: scale_factor: must be an integer, got '1.5'"}));

TEST(GavelTrace, FileLevelErrors) {
  EXPECT_EQ(error_of([] { parse_gavel_trace("\n\n", "e.trace"); }), "e.trace:1: trace: no jobs");
  EXPECT_EQ(error_of([] { load_gavel_trace("/nonexistent/g.trace"); }), "/nonexistent/g.trace:0: file: cannot open (no such file)");
  const auto jobs = parse_gavel_trace("A3C\tcmd\trl\t-n\t0\t100\t1\t1\t-1\t0\n\nGPT-9\tcmd\tx\t-n\t0\t100\t1\t1\t-1\t0\n", "u.trace");
  EXPECT_EQ(error_of([&] { gavel_to_apps(jobs, table(), {}, "u.trace"); }),
            "u.trace:3: job_type: 'GPT-9' is not in Gavel's throughput table");
}

}  // namespace
}  // namespace themis::sim
