// The one visible list of sources. A source the command line does not ask
// for is simply not created; each source decides for itself whether this
// kernel can run it (Source::open says why not).
#include "recorder/profile_source.h"
#include "recorder/sched_source.h"
#include "recorder/source.h"

namespace incise::recorder {

std::vector<std::unique_ptr<Source>> createSources(const RecordConfig& config) {
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(makeProfileSource());
  // Process life (fork/exec/exit/comm) comes from the scheduler program, which
  // also follows children of targets: it runs even with --no-sched and then
  // emits only process events.
  sources.push_back(makeSchedSource(config.sched));
  // R2: lock and page-fault sources are added here.
  return sources;
}

}  // namespace incise::recorder
