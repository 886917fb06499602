// ClickHouseClient: statements and inserts over ClickHouse's HTTP interface
// (port 8123 style), through libcurl.
//
// Every call is one POST: a query travels as the body; an insert's statement
// travels in the `query` URL parameter and its data (TabSeparated) as the body. Failures are
// values, never hangs: the connection attempt and the whole request have timeouts, and an error
// names the server's URL and the reason (curl's, or the server's exception
// text with its HTTP status).
//
//   ClickHouseClient client("http://127.0.0.1:8123/");
//   Result<std::string> rows = client.query("SELECT 1 FORMAT TabSeparated");
//   Status sent = client.insert("INSERT INTO incise.samples FORMAT TabSeparated", tsv_rows);
#pragma once

#include <string>

#include "base/status.h"

namespace incise::analyzer {

struct ClickHouseTimeouts {
  long connect_seconds = 5;
  long request_seconds = 300;  // an insert batch or a diff over many traces
};

class ClickHouseClient {
 public:
  explicit ClickHouseClient(std::string url, ClickHouseTimeouts timeouts = {});
  ~ClickHouseClient();
  ClickHouseClient(const ClickHouseClient&) = delete;
  ClickHouseClient& operator=(const ClickHouseClient&) = delete;

  // Runs `sql` and returns the response body (the result, in the format the
  // statement asks for).
  Result<std::string> query(const std::string& sql);
  // Runs `statement` (an INSERT ... FORMAT ...) with `data` as its input.
  Status insert(const std::string& statement, const std::string& data);

  const std::string& url() const { return url_; }

 private:
  // `statement` empty: `body` is the query.
  Result<std::string> post(const std::string& statement, const std::string& body);

  std::string url_;
  ClickHouseTimeouts timeouts_;
  void* curl_ = nullptr;  // CURL*, reused so the connection is kept alive between batches
};

}  // namespace incise::analyzer
