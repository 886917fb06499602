// The context timelines of a trace (model/context_timeline.h) read from its
// change rows: each row's window is replayed against the schedule for
// where its thread ran (the placement rule needs it), and thread exits end
// values. One schedule replay serves every context read at once.
//
// Rows pass the trace's thread filters (--pid, --tid, --comm), not its
// window: a value read before --time still holds inside it.
//
//   Result<ContextTimeline> req = readContextTimeline(trace, "req");
//   std::vector<ContextTimeline> all = readContextTimelines(trace);   // by slot
//   Status held = holdToWhere(trace);   // --where: install its conditions' timelines
#pragma once

#include <string_view>
#include <vector>

#include "analyzer/model/context_timeline.h"
#include "base/status.h"

namespace incise::analyzer {

class Trace;

// An Error when the trace has no context `name` (it names the ones it has).
Result<ContextTimeline> readContextTimeline(Trace& trace, std::string_view name);
// One timeline per context of the trace's header, in slot order.
std::vector<ContextTimeline> readContextTimelines(Trace& trace);
// Reads the timeline of each --where condition (trace.options().filter.where)
// and installs them (Trace::restrictToContexts), so rows are held to them;
// an Error "--where NAME: ..." when the trace lacks a condition's context.
Status holdToWhere(Trace& trace);

}  // namespace incise::analyzer
