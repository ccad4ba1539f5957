// themis-sim's figures (titles on the image, round ticks, log axes over wide ranges) and its progress line.
#include <gtest/gtest.h>

#include "sim/progress_line.h"
#include "sim/svg_plot.h"

namespace themis::sim {
namespace {

TEST(PlotAxis, LinearFromZeroWithRoundTicks) {
  const Axis a = make_axis({1.3, 4.1});
  EXPECT_FALSE(a.log);
  EXPECT_EQ(a.ticks, (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_DOUBLE_EQ(a.hi, 5);
  const Axis b = make_axis({3399.9, 3401.2});  // GPU-hours: steps of 1000
  EXPECT_EQ(b.ticks, (std::vector<double>{0, 1000, 2000, 3000, 4000}));
  EXPECT_FALSE(make_axis({1.0, 10.0}).log);  // exactly 10×: still linear
}

TEST(PlotAxis, LogOverMoreThanTenfold) {
  const Axis a = make_axis({1.3, 22.4});
  EXPECT_TRUE(a.log);
  EXPECT_EQ(a.ticks, (std::vector<double>{1, 2, 5, 10, 20, 50, 100}));
  EXPECT_DOUBLE_EQ(a.fraction(10), 0.5);
  EXPECT_DOUBLE_EQ(a.fraction(1), 0);
}

TEST(PlotSvg, TitleIsDrawnAndWideBarsUseALogAxis) {
  const std::string svg = bar_svg("Maximum rho per policy", "max rho", {"themis", "fifo"}, {1.4, 22.5});
  EXPECT_NE(svg.find("font-weight=\"bold\">Maximum rho per policy</text>"), std::string::npos);
  EXPECT_NE(svg.find("max rho (log scale)"), std::string::npos);
  EXPECT_NE(svg.find(">20</text>"), std::string::npos);  // a round tick label
}

TEST(PlotSvg, LegendSitsRightOfThePlotSoItHidesNoLine) {
  const std::string svg = line_svg("t", "f", "max rho", {0, 0.5, 1}, {{"themis", {1, 2, 3}}, {"srtf", {2, 2, 2}}});
  // The plot spans x 70..490; legend rows start at x = 500.
  EXPECT_NE(svg.find("<line x1=\"500.00\""), std::string::npos);
  EXPECT_NE(svg.find("text-anchor=\"start\">themis</text>"), std::string::npos);
  EXPECT_NE(svg.find("text-anchor=\"start\">srtf</text>"), std::string::npos);
}

TEST(ProgressLine, NamesTheRunAndTheSweepPoint) {
  EXPECT_EQ(progress_text("themis f=0.8", 12.34 * 3600, 37, 100), "themis f=0.8: 37/100 apps finished, virtual time 12.3 h");
  EXPECT_STREQ(kClearLine, "\r\x1b[K");
}

}  // namespace
}  // namespace themis::sim
