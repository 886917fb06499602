// Group columns: how `--by goroutine` and `--by context:NAME` (top, offcpu)
// show a group's key (profile/sample_groups.h): its table columns, its JSON
// fields, and the words of the report's first line.
//
//   goroutine      PID, GOROUTINE; {"pid": 42, "goid": 7}, in "goroutines"
//   context:NAME   NAME (the value, "-" when unknown); {"value": 17 or null}, in "values"
//                  (an otel id's value is its hex text: {"value": "4bf92f35..."})
//
//   std::optional<std::string> name = contextGrouping("context:req");   // "req"
//   GroupColumns columns = name ? contextColumns(*name, timeline.text()) : goroutineColumns();
//   table.addRow(columns.cells(group.key));
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/analyses/profile/sample_groups.h"
#include "analyzer/model/context_value_text.h"
#include "analyzer/render/table.h"

namespace incise::analyzer {

struct GroupColumns {
  std::string by;        // the --by word: "goroutine", "context:req"
  std::string list;      // the JSON array of groups: "goroutines", "values"
  std::string singular;  // "goroutine", "value of req"
  std::string plural;    // "goroutines", "values of req"
  std::string legend;    // what the odd keys mean: goroutine 0, an unknown value
  std::vector<Column> headers;
  bool context = false;
  ContextValueText values;  // how a context's values are written

  std::vector<std::string> cells(const SampleGroupKey& key) const;
  nlohmann::json fields(const SampleGroupKey& key) const;
  std::string count(size_t groups) const {
    return std::to_string(groups) + " " + (groups == 1 ? singular : plural);
  }
};

GroupColumns goroutineColumns();
GroupColumns contextColumns(const std::string& name, const ContextValueText& values);

// A context value in JSON: null when unknown, a number, or an otel id's hex text.
nlohmann::json contextValueJson(const ContextValueText& values, std::optional<uint64_t> value);

// "context:NAME" -> NAME; nullopt for any other --by word.
std::optional<std::string> contextGrouping(const std::string& by);

}  // namespace incise::analyzer
