#include "analyzer/analyses/summaries/trace_summaries.h"

#include "analyzer/analyses/summaries/summary_window.h"
#include "analyzer/model/trace.h"

namespace incise::analyzer {

namespace {

template <class Summary>
void forEachInWindow(Trace& trace, const std::function<void(const Summary&)>& visit) {
  const format::TimeWindow window = trace.window();
  trace.forEachRow<Summary>([&](const Summary& row) {
    Summary cut = row;
    if (cutToWindow(cut, window)) visit(cut);
  });
}

}  // namespace

void forEachBlockSummary(Trace& trace,
                         const std::function<void(const format::BlockSummary&)>& visit) {
  forEachInWindow(trace, visit);
}

void forEachWaitSummary(Trace& trace,
                        const std::function<void(const format::WaitSummary&)>& visit) {
  forEachInWindow(trace, visit);
}

}  // namespace incise::analyzer
