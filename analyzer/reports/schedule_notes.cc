#include "analyzer/reports/schedule_notes.h"

#include "analyzer/model/trace.h"

namespace incise::analyzer {

ScheduleNotes::ScheduleNotes(Trace& trace, const ScheduleConsistency& consistency,
                             bool bystanders_shown)
    : consistency_(consistency),
      bystanders_shown_(bystanders_shown),
      follows_everything_(RecordedThreads::of(trace).followsEverything()) {}

std::vector<std::string> ScheduleNotes::lines() const {
  std::vector<std::string> lines;
  const ScheduleConsistency& c = consistency_;
  if (c.bystanders != 0 && !bystanders_shown_) {
    lines.push_back(std::to_string(c.bystanders) +
                    " threads the recorder did not follow (seen only as the other side of a "
                    "followed thread's switch or wake-up) are left out; --bystanders shows what "
                    "was seen of them");
  }
  if (c.bystanders != 0 && bystanders_shown_) {
    lines.push_back("bystanders count only runs seen from switch-in to switch-out on one cpu");
  }
  if (c.missing_switch_ins != 0) {
    lines.push_back(std::to_string(c.missing_switch_ins) +
                    " switch-ins of followed threads are missing (switched out while not "
                    "running; the kernel did not report them): each is taken to have run from "
                    "its cpu's previous recorded switch");
  }
  if (c.missing_switch_outs != 0) {
    lines.push_back(std::to_string(c.missing_switch_outs) +
                    " switch-outs of followed threads are missing (left a cpu unseen): their "
                    "runs since the previous switch-in are not counted");
  }
  if (c.summarized_blocks != 0) {
    lines.push_back(std::to_string(c.summarized_blocks) +
                    " off-CPU intervals shorter than the recording's --sched-min-block were "
                    "counted by the recorder, not written (" +
                    std::to_string(c.summarized_ns / 1'000'000) +
                    " ms): their time is in the totals, per thread and stack, not in timelines");
  }
  return lines;
}

nlohmann::json ScheduleNotes::json() const {
  const ScheduleConsistency& c = consistency_;
  return {
      {"follows_every_thread", follows_everything_},  {"bystander_threads", c.bystanders},
      {"bystanders_shown", bystanders_shown_},        {"missing_switch_ins", c.missing_switch_ins},
      {"missing_switch_outs", c.missing_switch_outs}, {"reordered_switches", c.reordered_switches},
      {"summarized_blocks", c.summarized_blocks},     {"summarized_ns", c.summarized_ns}};
}

}  // namespace incise::analyzer
