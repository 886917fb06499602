// TabSeparated: ClickHouse's text format for inserts and results, and SQL
// string literals.
//
// Rows are lines, fields are separated by tabs; in a field, backslash, tab
// and line breaks are escaped with a backslash. Arrays are written as
// literals, ['a','b'] or [1,2], whose strings are quoted SQL-style.
//
//   TabSeparatedRow row;
//   row.add("db1").add(uint64_t{42}).addArray(std::vector<std::string>{"main", "parse"});
//   body += row.line();                             // "db1\t42\t['main','parse']\n"
//   std::vector<std::vector<std::string>> rows = parseTabSeparated(response);
//   std::string sql = "host = " + sqlString("it's");  // host = 'it\'s'
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace incise::analyzer {

// A quoted SQL string literal: '...' with quote and backslash escaped.
std::string sqlString(std::string_view text);

class TabSeparatedRow {
 public:
  TabSeparatedRow& add(std::string_view text);
  TabSeparatedRow& add(uint64_t value);
  TabSeparatedRow& addArray(const std::vector<std::string>& values);
  TabSeparatedRow& addArray(const std::vector<uint64_t>& values);
  // The fields joined by tabs, ending in a newline.
  std::string line() const { return line_ + "\n"; }

 private:
  void separate();
  std::string line_;
  bool first_ = true;
};

// Parses a TabSeparated response (without names) into fields, unescaped.
std::vector<std::vector<std::string>> parseTabSeparated(std::string_view text);

}  // namespace incise::analyzer
