#include "recorder/bpf_run_stats.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>

#include "recorder/libbpf_error.h"
#include "recorder/loaded_programs.h"

namespace incise::recorder {

Status BpfRunStats::enable() {
  if (stats_fd_) return Status::ok();
  int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (fd < 0) return libbpfError("--bpf-stats: enable BPF run-time statistics", errno);
  stats_fd_.reset(fd);
  return Status::ok();
}

void BpfRunStats::add(const bpf_object* object) {
  forEachLoadedProgram(object, [this](const bpf_program* program, int, const bpf_prog_info& info) {
    if (info.run_cnt == 0) return;
    programs_.push_back(BpfProgramRuns{
        .name = bpf_program__name(program), .runs = info.run_cnt, .run_time_ns = info.run_time_ns});
  });
}

void BpfRunStats::print(std::FILE* out, double seconds) const {
  for (const auto& p : programs_) {
    double per_second = seconds > 0 ? static_cast<double>(p.runs) / seconds : 0.0;
    double ms_per_second = seconds > 0 ? static_cast<double>(p.run_time_ns) / 1e6 / seconds : 0.0;
    std::fprintf(out, "incise-record: bpf %s: %" PRIu64 " runs (%.0f/s), %.0f ns/run, %.2f ms/s\n",
                 p.name.c_str(), p.runs, per_second,
                 static_cast<double>(p.run_time_ns) / static_cast<double>(p.runs), ms_per_second);
  }
}

}  // namespace incise::recorder
