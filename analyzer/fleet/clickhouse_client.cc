#include "analyzer/fleet/clickhouse_client.h"

#include <curl/curl.h>

#include <memory>

namespace incise::analyzer {
namespace {

size_t appendBody(char* data, size_t size, size_t count, void* body) {
  static_cast<std::string*>(body)->append(data, size * count);
  return size * count;
}

// libcurl wants one global init per process before the first handle.
void initCurlOnce() {
  static const bool initialised = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  (void)initialised;
}

// The server's exception text is long and ends in a stack trace in some
// versions: keep its first line.
std::string firstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 600 ? line.substr(0, 600) + "..." : line;
}

}  // namespace

ClickHouseClient::ClickHouseClient(std::string url, ClickHouseTimeouts timeouts)
    : url_(std::move(url)), timeouts_(timeouts) {
  initCurlOnce();
  curl_ = curl_easy_init();
}

ClickHouseClient::~ClickHouseClient() {
  if (curl_) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

// A query travels in the body: no URL length limit for long IN lists.
Result<std::string> ClickHouseClient::query(const std::string& sql) {
  return post("", sql);
}

Status ClickHouseClient::insert(const std::string& statement, const std::string& data) {
  auto response = post(statement, data);
  if (!response) return response.error();
  return Status();
}

Result<std::string> ClickHouseClient::post(const std::string& statement, const std::string& body) {
  CURL* curl = static_cast<CURL*>(curl_);
  if (!curl) return Error("ClickHouse at " + url_ + ": cannot create a libcurl handle");
  std::string target = url_;
  if (!statement.empty()) {
    std::unique_ptr<char, decltype(&curl_free)> escaped(
        curl_easy_escape(curl, statement.data(), static_cast<int>(statement.size())), &curl_free);
    if (!escaped) return Error("ClickHouse at " + url_ + ": cannot URL-encode the statement");
    target +=
        (url_.find('?') == std::string::npos ? "?" : "&") + std::string("query=") + escaped.get();
  }
  std::string response;
  char curl_error[CURL_ERROR_SIZE] = {};
  curl_easy_reset(curl);
  curl_easy_setopt(curl, CURLOPT_URL, target.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, timeouts_.connect_seconds);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, timeouts_.request_seconds);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &appendBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_error);
  // "Expect: 100-continue" costs a round trip per large batch for nothing.
  struct curl_slist* headers = curl_slist_append(nullptr, "Expect:");
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  if (code != CURLE_OK) {
    return Error("ClickHouse at " + url_ + ": " +
                 (curl_error[0] ? std::string(curl_error) : curl_easy_strerror(code)));
  }
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  if (status != 200) {
    return Error("ClickHouse at " + url_ + " refused (HTTP " + std::to_string(status) +
                 "): " + firstLine(response));
  }
  return response;
}

}  // namespace incise::analyzer
