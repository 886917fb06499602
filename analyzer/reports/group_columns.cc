#include "analyzer/reports/group_columns.h"

namespace incise::analyzer {

std::vector<std::string> GroupColumns::cells(const SampleGroupKey& key) const {
  if (!context) return {std::to_string(key.first), std::to_string(key.second)};
  const std::optional<uint64_t> value = contextValueOf(key);
  return {value ? values.text(*value) : "-"};
}

nlohmann::json GroupColumns::fields(const SampleGroupKey& key) const {
  if (!context) return {{"pid", key.first}, {"goid", key.second}};
  return {{"value", contextValueJson(values, contextValueOf(key))}};
}

nlohmann::json contextValueJson(const ContextValueText& values, std::optional<uint64_t> value) {
  if (!value) return nullptr;
  if (values.isHex()) return values.text(*value);
  return *value;
}

GroupColumns goroutineColumns() {
  return {.by = "goroutine",
          .list = "goroutines",
          .singular = "goroutine",
          .plural = "goroutines",
          .legend = "goroutine 0: outside any goroutine, or not a Go program",
          .headers = {{"PID", Align::kRight}, {"GOROUTINE", Align::kRight}}};
}

GroupColumns contextColumns(const std::string& name, const ContextValueText& values) {
  return {.by = "context:" + name,
          .list = "values",
          .singular = "value of " + name,
          .plural = "values of " + name,
          .legend = "-: unknown, before the thread's first read of " + name +
                    " or in a process without it",
          .headers = {{name, Align::kRight}},
          .context = true,
          .values = values};
}

std::optional<std::string> contextGrouping(const std::string& by) {
  constexpr std::string_view kPrefix = "context:";
  if (by.rfind(kPrefix, 0) != 0) return std::nullopt;
  return by.substr(kPrefix.size());
}

}  // namespace incise::analyzer
