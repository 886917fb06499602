#include "analyzer/model/loss_summary.h"

namespace incise::analyzer {
namespace {
uint64_t sum(const std::map<std::string, uint64_t>& counts) {
  uint64_t total = 0;
  for (const auto& [name, count] : counts) total += count;
  return total;
}
}  // namespace

uint64_t LossSummary::lost() const {
  return sum(lost_by_source);
}
uint64_t LossSummary::rows() const {
  return sum(rows_by_kind);
}
uint64_t LossSummary::used() const {
  return sum(used_by_kind);
}

double LossSummary::percentLost() const {
  uint64_t produced = rows() + lost();
  return produced == 0 ? 0.0 : 100.0 * static_cast<double>(lost()) / static_cast<double>(produced);
}

}  // namespace incise::analyzer
