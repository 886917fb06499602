// A kernel's view of three target threads and an outsider on two cpus, for
// the tests that compare a schedule written whole with the same schedule
// with its short blocks summarised (elided_schedule_test,
// kernel_decided_schedule_test): the targets sleep (mostly for tens of
// microseconds, sometimes for milliseconds) or are preempted, hand the cpu to
// each other or to the outsider or idle, and come back on either cpu once
// woken.
//
//   SimulatedSchedule schedule = simulateSchedule(seed, 4000);
//   ReplayedSchedule whole = replaySchedule(schedule.rows, schedule.end, {});
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <variant>
#include <vector>

#include "analyzer/analyses/sched/thread_states.h"
#include "format/event_kinds.h"

namespace incise::testing {

inline constexpr uint64_t kUs = 1000;
inline constexpr uint64_t kMinBlock = 1000 * kUs;
inline constexpr uint32_t kPid = 100, kA = 101, kB = 102, kC = 103;
inline constexpr uint32_t kOutsiderPid = 9, kOutsider = 900;
inline constexpr size_t kCpus = 2;
// The stack every simulated sleep's switch-out carries.
inline constexpr uint64_t kSleepStack = 7;

using ScheduleRow = std::variant<format::SchedSwitch, format::Wakeup>;

struct SimulatedSchedule {
  std::vector<ScheduleRow> rows;  // in time order
  uint64_t end = 0;
};

SimulatedSchedule simulateSchedule(uint32_t seed, int steps);

bool isSimulatedTarget(uint64_t tid);

struct ReplayedSchedule {
  std::map<uint32_t, analyzer::ThreadSchedStats> threads;
  analyzer::ScheduleConsistency consistency;
};

// `rows` in time order.
ReplayedSchedule replaySchedule(const std::vector<ScheduleRow>& rows, uint64_t end,
                                const std::vector<format::BlockSummary>& summaries);

// Expects the summarised replay to give each target the running time,
// off-CPU time (a summarised sleep's runqueue wait is in its blocked time),
// switches, wake-ups and runqueue waits of the whole one.
void expectSameThreadStates(const ReplayedSchedule& whole, const ReplayedSchedule& summarised,
                            const std::vector<ScheduleRow>& whole_rows);

// The time `tid` spent preempted: from each switch-out in state 0 to its next switch-in.
uint64_t preemptedNs(const std::vector<ScheduleRow>& rows, uint32_t tid);

// Sorts rows by time, stably: the analyzer reads every kind in time order.
void sortByTime(std::vector<ScheduleRow>& rows);

uint64_t timeOf(const ScheduleRow& row);

}  // namespace incise::testing
