#include "analyzer/reports/stack_weights.h"

#include "analyzer/model/stack_namer.h"

namespace incise::analyzer {
namespace {
constexpr uint64_t kNarrowIdLimit = uint64_t{1} << 32;
}  // namespace

void StackWeights::add(uint32_t pid, uint64_t stack_id, uint64_t time, uint64_t weight) {
  Entry& entry = stack_id < kNarrowIdLimit ? entries_[key(pid, stack_id)] : wide_[pid][stack_id];
  if (entry.events == 0) entry.first_time = time;
  entry.weight += weight;
  entry.events += 1;
  total_ += weight;
}

std::vector<WeightedStack> StackWeights::named(StackNamer& namer,
                                               const std::string& no_stack_name) const {
  std::vector<WeightedStack> stacks;
  stacks.reserve(entries_.size());
  auto emit = [&](uint32_t pid, uint64_t stack_id, const Entry& entry) {
    WeightedStack stack;
    stack.root_first = namer.rootFirstOnce(pid, stack_id, entry.first_time);
    if (stack.root_first.empty()) stack.root_first = {no_stack_name};
    stack.weight = entry.weight;
    stack.events = entry.events;
    stacks.push_back(std::move(stack));
  };
  for (const auto& [k, entry] : entries_) {
    emit(static_cast<uint32_t>(k & 0xffffffffu), k >> 32, entry);
  }
  for (const auto& [pid, by_stack] : wide_) {
    for (const auto& [stack_id, entry] : by_stack)
      emit(static_cast<uint32_t>(pid), stack_id, entry);
  }
  return stacks;
}

}  // namespace incise::analyzer
