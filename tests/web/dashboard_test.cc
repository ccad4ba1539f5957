// The dashboard (docs/admin.md "Metrics and dashboard") loaded in headless Chromium against a running cluster:
// its script reads the JSON API and draws the cluster map, the apps with ρ, and the rounds with their
// explanation; the DOM it leaves is checked against the database.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "web_cluster.h"

namespace themis::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// The text of the element that opens at `marker` (e.g. data-gpu="2"), up to the end of its row or box.
std::string element_text(const std::string& dom, const std::string& marker, const std::string& end) {
  const auto start = dom.find(marker);
  if (start == std::string::npos) return "";
  return dom.substr(start, dom.find(end, start) - start);
}

class Dashboard : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = find_program("chromium");
    if (chromium_.empty()) chromium_ = find_program("chromium-browser");
    if (chromium_.empty()) {
      if (std::getenv("CI")) FAIL() << "chromium is not installed (scripts/install-deps installs it)";
      GTEST_SKIP() << "chromium is not installed";
    }
  }
  // Chromium runs the page's script, waits for its requests (virtual time), then prints the DOM. Its own
  // profile directory: tests run in parallel.
  std::string load(const WebCluster& web, const std::string& extra = "") {
    const std::string url = "http://127.0.0.1:" + std::to_string(web.coordinator_port) + "/";
    std::vector<std::string> argv = {find_program("timeout"), "30", chromium_, "--headless", "--no-sandbox", "--disable-gpu",
                                     "--user-data-dir=" + web.cluster->dir() + "/chromium", "--virtual-time-budget=2000",
                                     "--dump-dom", url};
    if (!extra.empty()) argv.insert(argv.end() - 2, extra);
    const auto loaded = run_command(argv);
    EXPECT_EQ(loaded.code, 0) << loaded.out;
    return loaded.stdout_text;
  }
  std::string chromium_;
};

TEST_F(Dashboard, ShowsGpuHoldersAppsWithRhoAndRoundsWithTheirExplanation) {
  WebCluster web;
  TestCluster& cluster = *web.cluster;
  const std::string resnet = web.submit("resnet-a", 2);
  const std::string bert = web.submit("bert-b", 1);
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM jobs WHERE state = 'RUNNING'") == "2"; }, 15s))
      << read_text(cluster.coordinator_log());
  ASSERT_TRUE(cluster.wait_for([&] { return cluster.sql("SELECT count(*) FROM apps WHERE rho IS NULL") == "0"; }, 5s));

  // The JSON API the page reads says what the database says.
  const json api = json::parse(http_get(web.coordinator_port, "/api/cluster").body);
  ASSERT_EQ(api["gpus"].size(), static_cast<std::size_t>(WebCluster::kGpus)) << api.dump();
  for (const auto& gpu : api["gpus"]) {
    const std::string holder = cluster.sql("SELECT app_id FROM leases WHERE state = 'active' AND gpu = " + gpu["gpu"].dump());
    EXPECT_EQ(gpu["app"].is_null() ? "" : gpu["app"].dump(), holder) << gpu.dump();
  }

  const auto started = std::chrono::steady_clock::now();
  const std::string dom = load(web);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_LT(seconds, 20) << "loading the dashboard took " << seconds << " s";
  ASSERT_NE(dom.find("data-loaded=\"true\""), std::string::npos) << "the page's script did not finish:\n" << dom;

  // The cluster map: each GPU leased to resnet-a shows it as holder, with the lease's expiry.
  const std::string resnet_gpus = cluster.sql("SELECT group_concat(gpu) FROM leases WHERE state = 'active' AND app_id = " + resnet);
  ASSERT_EQ(resnet_gpus.size(), 3u) << resnet_gpus;  // "a,b"
  for (const char gpu : {resnet_gpus.front(), resnet_gpus.back()}) {
    const std::string box = element_text(dom, "data-gpu=\"" + std::string(1, gpu) + "\"", "</span></span>");
    EXPECT_NE(box.find("app " + resnet + " (resnet-a) job 0"), std::string::npos) << box;
    EXPECT_NE(box.find("lease expires "), std::string::npos) << box;
  }
  const std::string free_gpu = cluster.sql("SELECT min(gpu) FROM gpus WHERE gpu NOT IN (SELECT gpu FROM leases WHERE state = 'active')");
  const std::string free_box = element_text(dom, "data-gpu=\"" + free_gpu + "\"", "</span></span>");
  EXPECT_NE(free_box.find("class=\"holder\">free"), std::string::npos) << "GPU " << free_gpu << ": " << free_box;

  // The apps table: name, ρ as the database has it (3 decimals), and explain's verdict.
  for (const auto& [id, name] : {std::pair{resnet, "resnet-a"}, std::pair{bert, "bert-b"}}) {
    const std::string row = element_text(dom, "<tr data-app=\"" + id + "\"", "</tr>");
    EXPECT_NE(row.find(std::string(">") + name + "<"), std::string::npos) << row;
    const std::string rho = cluster.sql("SELECT printf('%.3f', rho) FROM apps WHERE id = " + id);
    EXPECT_NE(row.find(">" + rho + "<"), std::string::npos) << "ρ " << rho << " not in " << row;
    EXPECT_NE(row.find("app " + id + " (" + name + ") is RUNNING: it holds"), std::string::npos) << row;
  }
  // The ρ chart: one line per app, from the rounds' records.
  EXPECT_NE(dom.find("<polyline points=\""), std::string::npos) << dom;
  EXPECT_NE(dom.find("app " + resnet + " resnet-a ρ "), std::string::npos);

  // The rounds: each with explain's account of the offer and the grants.
  const std::string round = cluster.sql("SELECT max(id) FROM rounds WHERE granted > 0");
  const std::string row = element_text(dom, "<tr data-round=\"" + round + "\"", "</tr>");
  const std::string trigger = cluster.sql("SELECT trigger FROM rounds WHERE id = " + round);
  EXPECT_NE(row.find("round " + round + " ("), std::string::npos) << row;
  EXPECT_NE(row.find(", " + trigger + "): " + cluster.sql("SELECT free_gpus FROM rounds WHERE id = " + round) + " GPU(s) offered"),
            std::string::npos)
      << row;
  EXPECT_NE(row.find("Grants: app "), std::string::npos) << row;

  // For the documentation's picture: THEMIS_DASHBOARD_SCREENSHOT=/path/dashboard.png.
  if (const char* shot = std::getenv("THEMIS_DASHBOARD_SCREENSHOT")) {
    load(web, "--window-size=1280,1100");
    const auto taken = run_command({find_program("timeout"), "30", chromium_, "--headless", "--no-sandbox", "--disable-gpu",
                                    "--user-data-dir=" + cluster.dir() + "/chromium", "--virtual-time-budget=2000",
                                    "--window-size=1280,1100", "--hide-scrollbars", std::string("--screenshot=") + shot,
                                    "http://127.0.0.1:" + std::to_string(web.coordinator_port) + "/"});
    EXPECT_EQ(taken.code, 0) << taken.out;
  }
}

TEST_F(Dashboard, TheEndpointIsReadOnly) {
  WebCluster web;
  for (const std::string path : {"/", "/api/apps", "/api/cluster", "/api/rounds", "/metrics"}) {
    EXPECT_EQ(http_get(web.coordinator_port, path).status, 200) << path;
    EXPECT_EQ(http_request(web.coordinator_port, "POST", path).status, 405) << path;
    EXPECT_EQ(http_request(web.coordinator_port, "DELETE", path).status, 405) << path;
  }
  EXPECT_EQ(http_get(web.coordinator_port, "/api/rounds?limit=x").status, 400);
  EXPECT_EQ(http_request(web.coordinator_port, "GET", "/api/apps", "attacker.example").status, 403);
  // The page loads only its own files: no CDN, nothing from elsewhere (and its CSP says so to the browser).
  const auto page = http_get(web.coordinator_port, "/");
  EXPECT_NE(page.headers.find("Content-Security-Policy: default-src 'self'"), std::string::npos) << page.headers;
  int links = 0;
  for (const std::string attribute : {"src=\"", "href=\""}) {
    for (auto at = page.body.find(attribute); at != std::string::npos; at = page.body.find(attribute, at + 1)) {
      EXPECT_EQ(page.body[at + attribute.size()], '/') << page.body.substr(at, 40);
      ++links;
    }
  }
  EXPECT_EQ(links, 3);  // the stylesheet, the script, the link to /metrics
  EXPECT_EQ(http_get(web.coordinator_port, "/dashboard.js").body.find("https:"), std::string::npos);
}

}  // namespace
}  // namespace themis::testing
