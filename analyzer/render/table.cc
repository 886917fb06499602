#include "analyzer/render/table.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <iterator>

#include "analyzer/render/terminal_text.h"

namespace incise::analyzer {

namespace {

size_t widthOf(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

}  // namespace

size_t displayWidth(const std::string& text) {
  return widthOf(text);
}

std::string truncate(const std::string& text, size_t width) {
  if (displayWidth(text) <= width) return text;
  if (width <= 2) return std::string(width, '.');
  size_t keep = width - 2, points = 0, i = 0;
  for (; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (points == keep) break;
      ++points;
    }
  }
  return text.substr(0, i) + "..";
}

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

void Table::addRow(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  for (size_t c = 0; c < cells.size(); ++c) {
    // Names from a trace may carry terminal escapes; a cell never does.
    if (!isTerminalSafe(cells[c])) cells[c] = terminalText(cells[c]);
    const size_t max_width = columns_[c].max_width;
    if (max_width != 0 && displayWidth(cells[c]) > max_width) {
      text_ += truncate(cells[c], max_width);
    } else {
      text_ += cells[c];
    }
    cell_ends_.push_back(text_.size());
  }
  ++rows_;
}

std::string_view Table::cell(size_t row, size_t column) const {
  const size_t index = row * columns_.size() + column;
  const size_t begin = index == 0 ? 0 : cell_ends_[index - 1];
  return std::string_view(text_).substr(begin, cell_ends_[index] - begin);
}

void Table::render(std::ostream& out) const {
  std::vector<size_t> widths(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    widths[c] = widthOf(columns_[c].title);
    for (size_t r = 0; r < rows_; ++r) widths[c] = std::max(widths[c], widthOf(cell(r, c)));
  }
  // One buffer for every line: a top with --limit 0 prints tens of thousands.
  std::string line;
  auto print = [&](auto cell_of) {
    line.clear();
    for (size_t c = 0; c < columns_.size(); ++c) {
      const std::string_view text = cell_of(c);
      size_t pad = widths[c] - widthOf(text);
      bool last = c + 1 == columns_.size();
      if (c != 0) line += "  ";
      if (columns_[c].align == Align::kRight) line.append(pad, ' ');
      line += text;
      if (columns_[c].align == Align::kLeft && !last) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    line += '\n';
    out << line;
  };
  print([&](size_t c) -> std::string_view { return columns_[c].title; });
  for (size_t r = 0; r < rows_; ++r) print([&](size_t c) { return cell(r, c); });
}

std::string formatPercent(double percent) {
  // Exactly printf's "%.2f" (both round the exact binary value), without its parsing.
  char buffer[32];
  const auto converted =
      std::to_chars(std::begin(buffer), std::end(buffer), percent, std::chars_format::fixed, 2);
  if (converted.ec == std::errc()) return std::string(buffer, converted.ptr);
  std::snprintf(buffer, sizeof buffer, "%.2f", percent);  // too long: printf's own truncation
  return buffer;
}

std::string formatDurationNs(uint64_t ns) {
  char buffer[48];
  if (ns < 1000) {
    std::snprintf(buffer, sizeof buffer, "%llu ns", static_cast<unsigned long long>(ns));
  } else if (ns < 1'000'000) {
    std::snprintf(buffer, sizeof buffer, "%.3f us", static_cast<double>(ns) / 1e3);
  } else if (ns < 1'000'000'000) {
    std::snprintf(buffer, sizeof buffer, "%.3f ms", static_cast<double>(ns) / 1e6);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.3f s", static_cast<double>(ns) / 1e9);
  }
  return buffer;
}

std::string formatCount(uint64_t count) {
  return std::to_string(count);
}

std::string formatBytes(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  for (; value >= 1024 && unit + 1 < std::size(kUnits); ++unit) value /= 1024;
  char text[32];
  std::snprintf(text, sizeof text, value < 100 ? "%.1f %s" : "%.0f %s", value, kUnits[unit]);
  return text;
}

double percentOf(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

std::string utcText(uint64_t wall_ns, const char* format) {
  std::time_t seconds = static_cast<std::time_t>(wall_ns / 1'000'000'000);
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char buffer[64];
  std::strftime(buffer, sizeof buffer, format, &parts);
  return buffer;
}

}  // namespace incise::analyzer
