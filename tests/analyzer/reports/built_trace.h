// A TraceBuilder's file opened as the reports open traces (no progress
// bar), for analysis tests; null, with a test failure, when it cannot be.
//
//   TraceBuilder t;  ...
//   std::unique_ptr<Trace> trace = openBuiltTrace(t);
//   ASSERT_TRUE(trace);
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "analyzer/model/trace.h"
#include "tests/analyzer/reports/trace_builder.h"

namespace incise::analyzer::testing {

inline std::unique_ptr<Trace> openBuiltTrace(TraceBuilder& builder) {
  auto written = builder.write();
  EXPECT_TRUE(written) << written.error().message();
  if (!written) return nullptr;
  TraceOptions options;
  options.progress = false;
  auto opened = Trace::open(*written, options);
  EXPECT_TRUE(opened) << opened.error().message();
  return opened ? std::move(*opened) : nullptr;
}

}  // namespace incise::analyzer::testing
