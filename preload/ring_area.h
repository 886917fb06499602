// The library's view of the recorder's ring area (preload/ring_layout.h):
// attached once by the library's constructor, in every process that loads
// it, after checking that the descriptor the environment names is the
// recorder's memfd (magic, version, sizes and the token). A process whose
// environment lacks the variable, whose descriptor was closed or reused, or
// that was started by something other than incise-record gets no area: the
// library then only forwards calls. Nothing is carried across exec but the
// variable and the descriptor, and both are checked again there.
//
//   if (preload::AreaHeader* area = preload::ringArea()) ...   // null: not recording
#pragma once

#include "preload/ring_layout.h"

namespace incise::preload {

enum class AreaState { kNotYet, kAttached, kAbsent };

// kNotYet until the constructor ran (calls made by other libraries'
// constructors before ours are forwarded, not recorded).
AreaState areaState();
AreaHeader* ringArea();  // null unless kAttached

// From the constructor; again in a fork child (the mapping is inherited).
void attachRingArea();

}  // namespace incise::preload
