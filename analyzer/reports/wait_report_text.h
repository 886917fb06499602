// Tables, details and JSON of wait groups (WaitStatsBuilder), shared by
// `incise waits` and the semaphore section of `incise locks`.
//
// A group's named threads are called by what they did for its kind: a lock
// is "held by", a semaphore "posted by", a condvar "signalled by", a join
// waits on "the thread joined", a park is "unparked by", an unknown futex
// "woken by".
//
//   printWaitGroups(groups, names, WaitGrouping::kByObject, out);
//   doc["groups"] = waitGroupsJson(groups, names);
//   out << otherWaitsSentence(kinds);   // "other waits: condvar 5 (43.000 ms), join 5 ...: incise
//   waits"
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "analyzer/analyses/locks/wait_stats.h"
#include "analyzer/model/context_value_text.h"
#include "analyzer/reports/lock_report_text.h"

namespace incise::analyzer {

// "held by", "posted by", "signalled by", "joined thread", "unparked by", "woken by".
std::string_view namedRole(WaitKind kind);

// `values`: how the --by context's values are written (a number without one).
void printWaitGroups(const std::vector<WaitGroupStats>& groups, const LockNames& names,
                     WaitGrouping by, std::ostream& out, const ContextValueText& values = {});
nlohmann::json waitGroupsJson(const std::vector<WaitGroupStats>& groups, const LockNames& names,
                              const ContextValueText& values = {});
nlohmann::json waitKindsJson(const std::vector<WaitKindTotals>& kinds);
// "park 325 (385.367 ms), futex 2 (6.726 ms)": waits and time per kind.
std::string waitKindList(const std::vector<WaitKindTotals>& kinds);
// A lock report's first line when every wait is of another kind.
std::string noLockWaitsSentence();
// One line on the waits a lock report leaves out.
std::string otherWaitsSentence(const std::vector<WaitKindTotals>& kinds);

}  // namespace incise::analyzer
