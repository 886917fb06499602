#include "tests/analyzer/clients/client_run.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace incise::testing {
namespace {

const std::string kClients = INCISE_CLIENTS_DIR;

std::string quote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string chromium() {
  const char* path = getenv("CHROMIUM");
  return path && *path ? path : "/usr/bin/chromium";
}

}  // namespace

bool clientsRequired() {
  const char* ci = getenv("CI");
  return ci && std::string(ci) == "true";
}

std::string clientsUnavailableReason() {
  if (std::system("node --version >/dev/null 2>&1") != 0) return "node is not installed";
  for (const char* package : {"puppeteer-core", "speedscope"}) {
    if (!std::filesystem::exists(kClients + "/node_modules/" + package))
      return std::string(package) + " is not installed in tools/clients (tools/setup runs npm ci)";
  }
  if (access(chromium().c_str(), X_OK) != 0) return chromium() + " is not installed";
  return "";
}

std::string tempPath(const std::string& suffix) {
  std::string pattern = "/tmp/incise-client-XXXXXX" + suffix;
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  int fd = mkstemps(buffer.data(), static_cast<int>(suffix.size()));
  if (fd >= 0) close(fd);
  return buffer.data();
}

nlohmann::json runClient(const std::string& script, const std::vector<std::string>& args,
                         std::string* error) {
  std::string out = tempPath(".json"), err = tempPath(".err");
  std::string line = "node " + quote(kClients + "/" + script);
  for (const auto& arg : args) line += " " + quote(arg);
  line += " >" + quote(out) + " 2>" + quote(err);
  int status = std::system(line.c_str());
  std::stringstream text, problems;
  text << std::ifstream(out).rdbuf();
  problems << std::ifstream(err).rdbuf();
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  if (error) *error = "exit status " + std::to_string(status) + ": " + problems.str();
  if (status != 0) return nlohmann::json::value_t::discarded;
  return nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
}

}  // namespace incise::testing
