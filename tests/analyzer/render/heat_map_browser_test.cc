// The latency heat map in a real browser: headless Chromium through
// puppeteer-core (tools/clients; tools/setup installs both) loads a page
// written by writeHeatMapsHtml with known cells, and check_heat_map.js reports what the page shows
// and does: the calls per map, the tooltip of a hovered cell, a drag that zooms, reset, the name
// filter, console errors. Skips with the reason where Chromium or Node is missing, except under
// CI=true.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "analyzer/render/heat_map.h"

namespace incise::analyzer {
namespace {

bool inCi() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}

std::string missingTool() {
  if (access("/usr/bin/chromium", X_OK) != 0) return "no /usr/bin/chromium";
  if (std::system("command -v node >/dev/null 2>&1") != 0) return "no node";
  if (!std::filesystem::exists(INCISE_CLIENTS_DIR "/node_modules/puppeteer-core"))
    return "no puppeteer-core in " INCISE_CLIENTS_DIR " (tools/setup installs it)";
  return "";
}

std::map<std::string, std::string> runCheck(const std::string& html, const std::string& term) {
  std::string out = html + ".out";
  std::string command = "node '" INCISE_CLIENTS_DIR "/check_heat_map.js' '" + html + "' '" + term +
                        "' >'" + out + "' 2>&1";
  int status = std::system(command.c_str());
  std::map<std::string, std::string> values;
  std::ifstream in(out);
  std::string line, all;
  while (std::getline(in, line)) {
    all += line + "\n";
    size_t eq = line.find('=');
    if (eq != std::string::npos) values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  std::filesystem::remove(out);
  if (status != 0) values["failure"] = all;
  return values;
}

TEST(HeatMapBrowser, ShowsCountsZoomsResetsAndFilters) {
  std::string why = missingTool();
  if (!why.empty()) {
    if (inCi()) FAIL() << "CI=true but " << why;
    GTEST_SKIP() << why;
  }
  HeatMap parse{
      .name = "parse_request", .summary = "7 calls", .column_ns = 10'000'000, .first_bucket = 12};
  parse.cells.assign(100, std::vector<uint64_t>(10, 0));
  parse.cells[0][0] = 3;   // 4.1 us
  parse.cells[40][8] = 4;  // 1.05 ms
  HeatMap read{.name = "read", .summary = "5 calls", .column_ns = 10'000'000, .first_bucket = 19};
  read.cells.assign(100, std::vector<uint64_t>(2, 0));
  read.cells[99][1] = 5;
  std::string path = std::filesystem::temp_directory_path() /
                     ("incise_heat_map_" + std::to_string(getpid()) + ".html");
  {
    std::ofstream out(path);
    writeHeatMapsHtml({parse, read}, "test <trace>", out);
  }
  auto values = runCheck(path, "parse");
  std::filesystem::remove(path);
  ASSERT_EQ(values.count("failure"), 0u) << values["failure"];
  EXPECT_EQ(values["maps"], "2");
  EXPECT_EQ(values["calls"], "7,5");
  EXPECT_EQ(values["tooltip_display"], "block");
  EXPECT_NE(values["tooltip"].find("3 calls"), std::string::npos) << values["tooltip"];
  EXPECT_NE(values["tooltip"].find("4.10 us"), std::string::npos) << values["tooltip"];
  EXPECT_FALSE(values["zoomed"].empty());
  EXPECT_EQ(values["viewbox_changed"], "1");
  EXPECT_EQ(values["reset"], "1");
  EXPECT_EQ(values["shown"], "1");
  EXPECT_EQ(values["errors"], "0") << values["error_text"];
}

}  // namespace
}  // namespace incise::analyzer
