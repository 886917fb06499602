// Words shared by `incise locks` and `incise correlate`: how a lock, a
// thread and the recording mode are named in tables, stories and JSON.
//
//   LockNames names(trace, sites);
//   names.lock(group.lock, group.site);     // "0x7ffd1000 (update_account)"
//   names.thread(pid, tid, time);           // "worker-3 (1235)"
//   lockModeSentence(timeline.mode);        // "contended: only futex waits were recorded; ..."
//   names.namedText(group.blamed, {"wait", "waits"});   // holders, posters, with their stacks
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyzer/analyses/locks/critical_sections.h"
#include "analyzer/analyses/locks/lock_sites.h"
#include "analyzer/analyses/locks/lock_stats.h"
#include "base/hex.h"

namespace incise::analyzer {

class Trace;

// What the recording mode means for the figures, one sentence.
std::string lockModeSentence(LockRecordingMode mode);
// What a trace's Go mutex holds are (go_mutex_holds.h); "" when it has none.
std::string goHoldsSentence(const GoHoldCounts& holds);
// {"holds", "exact", "after_previous", "episode_start"}: Go mutex holds by where they start.
nlohmann::json goHoldsJson(const GoHoldCounts& holds);
nlohmann::json distributionJson(const Distribution& d);

// "running 8, runnable 2, sleeping 1" (states with no waits left out); "" when none.
std::string holderStatesText(const HolderStateCounts& states);
// {"running": 8, "runnable": 2, ...}: every state, 0 included.
nlohmann::json holderStatesJson(const HolderStateCounts& states);

class LockNames {
 public:
  LockNames(Trace& trace, const LockSites& sites) : trace_(trace), sites_(sites) {}
  std::string lock(const LockId& lock, uint64_t site) const;
  std::string thread(uint64_t tid, uint64_t time) const;
  nlohmann::json threadJson(uint64_t pid, uint64_t tid, uint64_t time) const;
  const LockSites& sites() const { return sites_; }
  // Threads waits name, one line each: "worker-2 (1235) 40.000 ms in 12 waits
  // (exact), from sem_post <- LWLockRelease". `what`: singular, plural.
  std::vector<std::string> namedText(const std::vector<NamedThread>& threads,
                                     std::pair<const char*, const char*> what) const;
  nlohmann::json namedJson(const std::vector<NamedThread>& threads) const;

 private:
  Trace& trace_;
  const LockSites& sites_;
};

}  // namespace incise::analyzer
