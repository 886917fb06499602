// ScheduleNotes: what a scheduler replay (ThreadStateMachine) left out or
// could not reconcile, as the notes sched and offcpu print under their
// header and the "schedule" object of their JSON.
//
//   ScheduleNotes notes(trace, machine.consistency(), /*bystanders_shown=*/false);
//   for (const auto& line : notes.lines()) out << "note: " << line << "\n";
//   doc["schedule"] = notes.json();
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzer/analyses/sched/thread_states.h"

namespace incise::analyzer {

class Trace;

class ScheduleNotes {
 public:
  ScheduleNotes(Trace& trace, const ScheduleConsistency& consistency, bool bystanders_shown);
  std::vector<std::string> lines() const;
  nlohmann::json json() const;

 private:
  ScheduleConsistency consistency_;
  bool bystanders_shown_ = false;
  bool follows_everything_ = true;
};

}  // namespace incise::analyzer
