// Table: the one terminal table renderer every report prints through.
//
// Columns have a title, an alignment and an optional maximum width; cells
// longer than that are cut and end in "..". Cells are escaped for the
// terminal (terminal_text.h): a name from a trace cannot carry an escape
// sequence through a table. Widths count UTF-8 code points,
// so demangled names with non-ASCII characters line up. Columns are two
// spaces apart; the last column is not padded (no trailing blanks).
//
//   Table table({{"SELF%", Align::kRight}, {"FUNCTION", Align::kLeft, 60}});
//   table.addRow({formatPercent(12.5), "parse_request"});
//   table.render(std::cout);
//   // SELF%  FUNCTION
//   // 12.50  parse_request
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace incise::analyzer {

enum class Align { kLeft, kRight };

struct Column {
  std::string title;
  Align align = Align::kLeft;
  size_t max_width = 0;  // 0 = no limit
};

class Table {
 public:
  explicit Table(std::vector<Column> columns);
  // Missing cells are empty; extra cells are an error of the caller and dropped.
  void addRow(std::vector<std::string> cells);
  size_t rows() const { return rows_; }
  void render(std::ostream& out) const;

 private:
  std::string_view cell(size_t row, size_t column) const;

  std::vector<Column> columns_;
  // Every cell's text back to back, and where each ends (columns_.size() per
  // row): a top with --limit 0 has tens of thousands of rows, and a string
  // per cell was most of its memory.
  std::string text_;
  std::vector<size_t> cell_ends_;
  size_t rows_ = 0;
};

// Display width in code points.
size_t displayWidth(const std::string& text);
// Cut to at most `width` code points, ending in ".." when cut.
std::string truncate(const std::string& text, size_t width);

// Number formats shared by reports.
std::string formatPercent(double percent);        // "12.34"
std::string formatDurationNs(uint64_t ns);        // "950 ns", "1.250 us", "12.500 ms", "3.000 s"
std::string formatCount(uint64_t count);          // "1234567" (no separators: easy to paste)
std::string formatBytes(uint64_t bytes);          // "512 B", "16.0 KiB", "64.1 MiB", "1.25 GiB"
double percentOf(uint64_t part, uint64_t whole);  // 0 when whole is 0
// ns since the epoch, in UTC, through strftime's `format`.
std::string utcText(uint64_t wall_ns, const char* format);

}  // namespace incise::analyzer
