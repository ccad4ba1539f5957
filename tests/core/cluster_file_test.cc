#include <gtest/gtest.h>

#include "core/cluster_file.h"

namespace themis {
namespace {

std::string error_of(std::string_view text) {
  try {
    parse_cluster_toml(text, "lab.toml");
  } catch (const ClusterFileError& e) {
    return e.what();
  }
  return "";
}

TEST(ClusterFile, ParsesSingleMachinesAndGroups) {
  ClusterSpec spec = parse_cluster_toml(R"(
name = "lab"
[[machine]]
name = "big"
rack = "r1"
slots = [4, 4]

[[machine]]
name = "k80-"
count = 3
racks = ["r1", "r2"]
slots = [2]
)");
  Cluster c(spec);
  EXPECT_EQ(c.name(), "lab");
  EXPECT_EQ(c.size(), 8 + 3 * 2);
  ASSERT_EQ(c.machines().size(), 4u);
  EXPECT_EQ(c.machines()[1].name, "k80-01");
  EXPECT_EQ(c.machines()[3].name, "k80-03");
  EXPECT_EQ(c.racks()[c.machines()[2].rack].name, "r2");
  EXPECT_EQ(c.racks()[c.machines()[3].rack].name, "r1");
}

TEST(ClusterFile, ErrorsNameFileLineAndField) {
  EXPECT_EQ(error_of("name = \"x\"\n[[machine]]\nname = \"a\"\nslots = [2, 0]\n"),
            "lab.toml:4:13: machine[0].slots: each slot holds 1 to 64 GPUs");
  EXPECT_EQ(error_of("name = \"x\"\n[[machine]]\nname = \"a\"\nslots = [1]\ngpu = 3\n"),
            "lab.toml:5:1: machine[0].gpu: unknown key (expected name, rack, racks, slots, count)");
  EXPECT_EQ(error_of("name = \"x\"\n[[machine]]\nname = \"a\"\nslots = [1]\n  rakc = \"r1\"\n"),
            "lab.toml:5:3: machine[0].rakc: unknown key (did you mean 'rack'?) (expected name, rack, racks, slots, count)");
  // Unknown keys and tables at the top are errors too, not ignored.
  EXPECT_EQ(error_of("name = \"x\"\nnmae = \"y\"\n[[machine]]\nname = \"a\"\nslots = [1]\n"),
            "lab.toml:2:1: nmae: unknown key (did you mean 'name'?) (expected name, [[machine]])");
  EXPECT_EQ(error_of("name = \"x\"\n[[machine]]\nname = \"a\"\nslots = [1]\n[[machines]]\nname = \"b\"\nslots = [1]\n"),
            "lab.toml:5:3: machines: unknown key (did you mean 'machine'?) (expected name, [[machine]])");
  EXPECT_NE(error_of("name = \"x\"\n[[machine]]\nname = \"a\"\nslots = [1]\n[[machine]]\nname = \"a\"\nslots = [1]\n")
                .find("listed twice"),
            std::string::npos);
  EXPECT_NE(error_of("name = = 3").find("lab.toml:1:8: syntax:"), std::string::npos);
  EXPECT_NE(error_of("name = \"x\"\n").find("machine: at least one"), std::string::npos);
  // A float where an integer belongs is refused, however large: converting 2.2e35 to an integer is undefined
  // behaviour in the TOML library (found by cluster_file_fuzz; core/toml_integer.h).
  EXPECT_EQ(error_of("name = \"x\"\n[[machine]]\nname = \"a\"\nslots = [2, 22222222222222E22]\n"),
            "lab.toml:4:13: machine[0].slots: each slot holds 1 to 64 GPUs");
  EXPECT_EQ(error_of("name = \"x\"\n[[machine]]\nname = \"a\"\nslots = [2]\ncount = 1e300\n"),
            "lab.toml:5:9: machine[0].count: must be an integer >= 1");
}

}  // namespace
}  // namespace themis
