// mergeByTime: rows of several kinds in one time order, ties to the stream
// listed first, `before` told each row's time, streams of any length.
#include "analyzer/model/time_merge.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace incise::analyzer {
namespace {

struct Row {
  uint64_t time = 0;
  char kind = ' ';
};

class Rows {
 public:
  explicit Rows(std::vector<Row> rows) : rows_(std::move(rows)) {}
  const Row* peek() const { return next_ < rows_.size() ? &rows_[next_] : nullptr; }
  void pop() { ++next_; }

 private:
  std::vector<Row> rows_;
  size_t next_ = 0;
};

TEST(TimeMerge, EarliestFirstAndTiesToTheStreamListedFirst) {
  Rows wakeups({{5, 'w'}, {10, 'w'}, {30, 'w'}});
  Rows switches({{1, 's'}, {10, 's'}, {10, 's'}, {40, 's'}});
  Rows samples({{10, 'p'}, {20, 'p'}});
  std::string order;
  std::vector<uint64_t> times;
  auto visit = [&](const Row& row) { order += row.kind; };
  mergeByTime([&](uint64_t now) { times.push_back(now); }, timeStream(wakeups, visit),
              timeStream(switches, visit), timeStream(samples, visit));
  EXPECT_EQ(order, "swwssppws");
  EXPECT_EQ(times, (std::vector<uint64_t>{1, 5, 10, 10, 10, 10, 20, 30, 40}));
}

TEST(TimeMerge, EmptyAndSingleStreams) {
  Rows none({}), one({{7, 'a'}, {9, 'a'}});
  int visits = 0, befores = 0;
  mergeByTime([&](uint64_t) { ++befores; }, timeStream(none, [&](const Row&) { ++visits; }));
  EXPECT_EQ(visits + befores, 0);
  mergeByTime([&](uint64_t) { ++befores; }, timeStream(none, [&](const Row&) { ++visits; }),
              timeStream(one, [&](const Row&) { ++visits; }));
  EXPECT_EQ(visits, 2);
  EXPECT_EQ(befores, 2);
}

}  // namespace
}  // namespace incise::analyzer
