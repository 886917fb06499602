#include "analyzer/fleet/clickhouse_client.h"

#include <curl/curl.h>

#include <charconv>
#include <memory>
#include <string_view>
#include <type_traits>

#include "analyzer/symbolize/lazy_library.h"

namespace incise::analyzer {
namespace {

// libcurl, opened on the first ClickHouse client (see lazy_library.h): linked,
// it would cost every incise command its thirty libraries at start-up.
struct Curl {
  decltype(&curl_global_init) global_init = nullptr;
  decltype(&curl_easy_init) easy_init = nullptr;
  decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&curl_easy_escape) easy_escape = nullptr;
  decltype(&curl_free) free = nullptr;
  decltype(&curl_easy_reset) easy_reset = nullptr;
  decltype(&curl_easy_setopt) easy_setopt = nullptr;
  decltype(&curl_slist_append) slist_append = nullptr;
  decltype(&curl_slist_free_all) slist_free_all = nullptr;
  decltype(&curl_easy_perform) easy_perform = nullptr;
  decltype(&curl_easy_strerror) easy_strerror = nullptr;
  decltype(&curl_easy_getinfo) easy_getinfo = nullptr;

  static LazyLibrary& library() {
    static LazyLibrary curl("libcurl.so.4");
    return curl;
  }
  // Null when libcurl cannot be loaded; library().error() says why.
  static const Curl* get() {
    static const Curl* const loaded = [] {
      static Curl api;
      auto load = [](auto& function, const char* name) {
        function = library().function<std::remove_reference_t<decltype(function)>>(name);
        return function != nullptr;
      };
      bool ok =
          load(api.global_init, "curl_global_init") && load(api.easy_init, "curl_easy_init") &&
          load(api.easy_cleanup, "curl_easy_cleanup") &&
          load(api.easy_escape, "curl_easy_escape") && load(api.free, "curl_free") &&
          load(api.easy_reset, "curl_easy_reset") && load(api.easy_setopt, "curl_easy_setopt") &&
          load(api.slist_append, "curl_slist_append") &&
          load(api.slist_free_all, "curl_slist_free_all") &&
          load(api.easy_perform, "curl_easy_perform") &&
          load(api.easy_strerror, "curl_easy_strerror") &&
          load(api.easy_getinfo, "curl_easy_getinfo");
      // libcurl wants one global init per process before the first handle.
      if (ok) (void)api.global_init(CURL_GLOBAL_DEFAULT);
      return ok ? &api : nullptr;
    }();
    return loaded;
  }
};

size_t appendBody(char* data, size_t size, size_t count, void* body) {
  static_cast<std::string*>(body)->append(data, size * count);
  return size * count;
}

// The server's exception text is long and ends in a stack trace in some
// versions: keep its first line.
std::string firstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 600 ? line.substr(0, 600) + "..." : line;
}

// A refusal's code from the server's own ("Code: 60. DB::Exception: ..."):
// an unknown table (60) or database (81) is kNotFound, so callers can tell
// "no archive here" from a failure without reading the words.
ErrorCode refusalCode(const std::string& response) {
  constexpr std::string_view kPrefix = "Code: ";
  if (response.compare(0, kPrefix.size(), kPrefix) != 0) return ErrorCode::kUnknown;
  int code = 0;
  const char* digits = response.data() + kPrefix.size();
  std::from_chars(digits, response.data() + response.size(), code);
  constexpr int kUnknownTable = 60;
  constexpr int kUnknownDatabase = 81;
  return code == kUnknownTable || code == kUnknownDatabase ? ErrorCode::kNotFound
                                                           : ErrorCode::kUnknown;
}

}  // namespace

ClickHouseClient::ClickHouseClient(std::string url, ClickHouseTimeouts timeouts)
    : url_(std::move(url)), timeouts_(timeouts) {
  if (const Curl* api = Curl::get()) curl_ = api->easy_init();
}

ClickHouseClient::~ClickHouseClient() {
  // A handle exists only if libcurl loaded.
  if (curl_) Curl::get()->easy_cleanup(static_cast<CURL*>(curl_));
}

// A query travels in the body: no URL length limit for long IN lists.
Result<std::string> ClickHouseClient::query(const std::string& sql) {
  return post("", sql);
}

Status ClickHouseClient::insert(const std::string& statement, const std::string& data) {
  INCISE_RETURN_IF_ERROR(post(statement, data));
  return Status();
}

Result<std::string> ClickHouseClient::post(const std::string& statement, const std::string& body) {
  CURL* curl = static_cast<CURL*>(curl_);
  if (!curl) {
    return Error("ClickHouse at " + url_ + ": " +
                 (Curl::get() ? "cannot create a libcurl handle" : Curl::library().error()));
  }
  const Curl& api = *Curl::get();
  std::string target = url_;
  if (!statement.empty()) {
    std::unique_ptr<char, decltype(api.free)> escaped(
        api.easy_escape(curl, statement.data(), static_cast<int>(statement.size())), api.free);
    if (!escaped) return Error("ClickHouse at " + url_ + ": cannot URL-encode the statement");
    target +=
        (url_.find('?') == std::string::npos ? "?" : "&") + std::string("query=") + escaped.get();
  }
  std::string response;
  char curl_error[CURL_ERROR_SIZE] = {};
  api.easy_reset(curl);
  api.easy_setopt(curl, CURLOPT_URL, target.c_str());
  api.easy_setopt(curl, CURLOPT_POST, 1L);
  api.easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  api.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  api.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, timeouts_.connect_seconds);
  api.easy_setopt(curl, CURLOPT_TIMEOUT, timeouts_.request_seconds);
  api.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  api.easy_setopt(curl, CURLOPT_WRITEFUNCTION, &appendBody);
  api.easy_setopt(curl, CURLOPT_WRITEDATA, &response);
  api.easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_error);
  // "Expect: 100-continue" costs a round trip per large batch for nothing.
  struct curl_slist* headers = api.slist_append(nullptr, "Expect:");
  api.easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  CURLcode code = api.easy_perform(curl);
  api.slist_free_all(headers);
  if (code != CURLE_OK) {
    return Error(ErrorCode::kUnavailable,
                 "ClickHouse at " + url_ + ": " +
                     (curl_error[0] ? std::string(curl_error) : api.easy_strerror(code)));
  }
  long status = 0;
  api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  if (status != 200) {
    return Error(refusalCode(response), "ClickHouse at " + url_ + " refused (HTTP " +
                                            std::to_string(status) + "): " + firstLine(response));
  }
  return response;
}

}  // namespace incise::analyzer
