#include "worker/report_format.h"

#include <gtest/gtest.h>

#include <cmath>

namespace themis::worker {
namespace {

TEST(ReportFormat, IterationLineRoundTripsExactly) {
  std::string out;
  append_iteration_line(out, "42_3", 2, {17, 0.012345678901234567, 0.6931471805599453});
  EXPECT_EQ(out, "{\"job\":\"42_3\",\"rank\":2,\"iter\":17,\"sec\":0.012345678901234567,\"loss\":0.6931471805599453}\n");
  const Report r = parse_report_line(out.substr(0, out.size() - 1));
  EXPECT_EQ(r.job, "42_3");
  EXPECT_EQ(r.rank, 2);
  ASSERT_TRUE(r.iteration.has_value());
  EXPECT_FALSE(r.event.has_value());
  EXPECT_EQ(r.iteration->iteration, 17);
  EXPECT_EQ(r.iteration->seconds, 0.012345678901234567);
  EXPECT_EQ(r.iteration->loss, 0.6931471805599453);
}

TEST(ReportFormat, NonFiniteLossBecomesNull) {
  std::string out;
  append_iteration_line(out, "j", 0, {1, 0.5, std::nan("")});
  EXPECT_NE(out.find("\"loss\":null"), std::string::npos);
  EXPECT_TRUE(std::isnan(parse_report_line(out).iteration->loss));
}

TEST(ReportFormat, EventLineEscapesAndRoundTrips) {
  std::string out;
  append_event_line(out, "job \"x\"\\", 1, {"exit", 9, {{"status", "preempted"}, {"message", "line1\nline2\t"}}});
  const Report r = parse_report_line(out);
  EXPECT_EQ(r.job, "job \"x\"\\");
  ASSERT_TRUE(r.event.has_value());
  EXPECT_EQ(r.event->event, "exit");
  EXPECT_EQ(r.event->iteration, 9);
  EXPECT_EQ(r.event->fields.at("status"), "preempted");
  EXPECT_EQ(r.event->fields.at("message"), "line1\nline2\t");
}

TEST(ReportFormat, BadLinesSayWhatIsWrong) {
  auto message = [](std::string_view line) -> std::string {
    try {
      parse_report_line(line);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "parsed";
  };
  EXPECT_NE(message("{not json").find("not JSON"), std::string::npos);
  EXPECT_NE(message("[1,2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(message(R"({"rank":0,"iter":1,"sec":1,"loss":1})").find("missing \"job\""), std::string::npos);
  EXPECT_NE(message(R"({"job":"j","rank":0,"iter":1,"loss":1})").find("missing \"sec\""), std::string::npos);
  EXPECT_NE(message(R"({"job":"j","rank":"zero","iter":1,"sec":1,"loss":1})").find("wrong field type"),
            std::string::npos);
}

}  // namespace
}  // namespace themis::worker
