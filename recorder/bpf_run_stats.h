// BpfRunStats: how long the kernel spent in the recorder's BPF programs
// (`--bpf-stats`). The programs run in the recorded threads' context, so
// their run time is what the recording costs the workload beyond the
// recorder's own CPU; unlike a workload's wall time it is measured by the
// kernel per program run and stays meaningful on a loaded box.
//
// Enabling holds a BPF_ENABLE_STATS descriptor (the kernel counts
// run_time_ns/run_cnt only while one is open, for every program, so it is
// opt-in); reading walks the loaded programs of each source's BPF object.
//
//   BpfRunStats stats;
//   if (Status s = stats.enable(); !s) warn(s);
//   ... load and attach ...
//   for (auto& source : sources) stats.add(source->bpfObject());
//   stats.print(stderr, seconds_recorded);
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

struct bpf_object;

namespace incise::recorder {

struct BpfProgramRuns {
  std::string name;
  uint64_t runs = 0;
  uint64_t run_time_ns = 0;
};

class BpfRunStats {
 public:
  BpfRunStats() = default;
  BpfRunStats(const BpfRunStats&) = delete;
  BpfRunStats& operator=(const BpfRunStats&) = delete;

  Status enable();
  bool enabled() const { return bool(stats_fd_); }
  // The counters of every loaded program of `object` that ran at least once.
  void add(const bpf_object* object);
  const std::vector<BpfProgramRuns>& programs() const { return programs_; }
  // One line per program: "incise-record: bpf NAME: RUNS runs (R/s), NS ns/run, MS ms/s",
  // rates over `seconds` of recording.
  void print(std::FILE* out, double seconds) const;

 private:
  UniqueFd stats_fd_;  // statistics are collected while it is open
  std::vector<BpfProgramRuns> programs_;
};

}  // namespace incise::recorder
