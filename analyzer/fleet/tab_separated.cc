#include "analyzer/fleet/tab_separated.h"

namespace incise::analyzer {
namespace {

void appendEscaped(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\0':
        out += "\\0";
        break;
      default:
        out += c;
    }
  }
}

char unescaped(char c) {
  switch (c) {
    case 't':
      return '\t';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case '0':
      return '\0';
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    default:
      return c;
  }
}

}  // namespace

std::string sqlString(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

void TabSeparatedRow::separate() {
  if (!first_) line_ += '\t';
  first_ = false;
}

TabSeparatedRow& TabSeparatedRow::add(std::string_view text) {
  separate();
  appendEscaped(line_, text);
  return *this;
}

TabSeparatedRow& TabSeparatedRow::add(uint64_t value) {
  separate();
  line_ += std::to_string(value);
  return *this;
}

// The array literal is itself escaped as a field: a backslash inside a
// quoted element becomes \\ in the literal, then \\\\ in the field.
TabSeparatedRow& TabSeparatedRow::addArray(const std::vector<std::string>& values) {
  std::string literal = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) literal += ',';
    literal += sqlString(values[i]);
  }
  return add(literal + "]");
}

TabSeparatedRow& TabSeparatedRow::addArray(const std::vector<uint64_t>& values) {
  std::string literal = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) literal += ',';
    literal += std::to_string(values[i]);
  }
  return add(literal + "]");
}

std::vector<std::vector<std::string>> parseTabSeparated(std::string_view text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      field += unescaped(text[++i]);
    } else if (c == '\t') {
      row.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      row.push_back(std::move(field));
      field.clear();
      rows.push_back(std::move(row));
      row.clear();
    } else {
      field += c;
    }
  }
  if (!field.empty() || !row.empty()) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace incise::analyzer
