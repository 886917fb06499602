// The words of `incise correlate`: a correlation (correlate_analysis.h) as a
// short report, or as JSON with every figure.
//
// Text: the lock mode in a sentence; at most `limit` findings ranked by the
// waiting each explains (correlate_findings.h), one sentence each; what was
// left out (waits that blame no holder) and why a finding may be missing (no
// scheduler events); then the longest waits' wake chains as one indented
// tree, each wait once (wake_chains_tree.h).
//
// JSON: the headline ("summary": the first 10 findings' sentences and the
// notes), the findings (rank, kind, weight, sentence, whose), the groups
// behind them ("preemption": holders switched out inside sections,
// "inside_sections": samples and faults inside, each up to `limit`, 0 = all),
// the wake chains link by link and as the tree, and the waits left out.
//
//   CorrelateStory story(trace, correlation, sites);
//   story.print(std::cout, /*limit=*/10);
//   nlohmann::json doc = story.json(/*limit=*/10);
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "analyzer/analyses/correlate/correlate_analysis.h"
#include "analyzer/analyses/correlate/correlate_findings.h"
#include "analyzer/analyses/locks/wake_chains_tree.h"
#include "analyzer/reports/lock_report_text.h"

namespace incise::analyzer {

class CorrelateStory {
 public:
  CorrelateStory(Trace& trace, const Correlation& correlation, const LockSites& sites);

  void print(std::ostream& out, size_t limit) const;
  nlohmann::json json(size_t limit) const;

 private:
  std::string sentence(const Finding& finding) const;
  std::string offCpuSentence(const HeldLock& h) const;
  std::string onCpuSentence(const HeldLock& h, uint64_t waited_ns) const;
  std::string longestWaitSentence(const WakeChain& chain) const;
  std::vector<std::string> notes(bool findings_left_out) const;
  std::string waitText(const LockWait& wait) const;
  std::string wakerText(const WakeLink& link) const;
  std::string heldText(const HeldLock& h) const;
  std::string topStack(const HeldLock& h, const StackCounts& stacks) const;
  void printTree(std::ostream& out) const;

  nlohmann::json findingJson(const Finding& finding, size_t rank) const;
  nlohmann::json heldJson(const HeldLock& h) const;
  nlohmann::json linkJson(const WakeLink& link) const;
  nlohmann::json stacksJson(const HeldLock& h, const StackCounts& stacks) const;

  Trace& trace_;
  const Correlation& correlation_;
  const LockSites& sites_;
  LockNames names_;
  std::vector<WakeTreeNode> tree_;
};

// "mutex", "rwlock", "spinlock", "futex", "lock": how a kind is named.
std::string lockNoun(uint64_t kind);

}  // namespace incise::analyzer
