#include "analyzer/model/context_value_text.h"

#include <gtest/gtest.h>

namespace incise::analyzer {
namespace {

format::ContextVariable variable(std::string name, std::string symbol, std::string reading) {
  return {.name = std::move(name),
          .object = "",
          .symbol = std::move(symbol),
          .reading = std::move(reading)};
}

TEST(ContextValueText, AnIntegerIsWrittenInDecimal) {
  const ContextValueText text = ContextValueText::of(variable("req", "request_id", ""));
  EXPECT_EQ(text.form(), ContextValueText::Form::kNumber);
  EXPECT_FALSE(text.isHex());
  EXPECT_EQ(text.text(42), "42");
}

TEST(ContextValueText, OtelIdsAreWrittenAsW3cHex) {
  ContextValueText trace = ContextValueText::of(
      variable("trace_id", "otel_thread_ctx_v1", std::string(format::kContextReadingOtelTraceId)));
  const ContextValueText span = ContextValueText::of(
      variable("span_id", "otel_thread_ctx_v1", std::string(format::kContextReadingOtelSpanId)));
  EXPECT_TRUE(trace.isHex());
  EXPECT_EQ(span.text(0x00f067aa0ba902b7u), "00f067aa0ba902b7");
  trace.noteHigh(0xa3ce929d0e0e4736u, 0x4bf92f3577b34da6u);
  EXPECT_EQ(trace.highOf(0xa3ce929d0e0e4736u), 0x4bf92f3577b34da6u);
  EXPECT_EQ(trace.text(0xa3ce929d0e0e4736u), "4bf92f3577b34da6a3ce929d0e0e4736");
  // A value no row carried has no first half to show: zeros, as W3C pads.
  EXPECT_EQ(trace.highOf(1), std::nullopt);
  EXPECT_EQ(trace.text(1), "00000000000000000000000000000001");
}

// Files before 2.11 say no reading and kept only the trace id's last 8 bytes.
TEST(ContextValueText, AnOlderFilesOtelValuesAreKnownByTheirSymbol) {
  ContextValueText trace = ContextValueText::of(variable("trace_id", "otel_thread_ctx_v1", ""));
  EXPECT_EQ(trace.form(), ContextValueText::Form::kOtelTraceLow8);
  trace.noteHigh(5, 9);
  EXPECT_EQ(trace.text(5), "0000000000000005");
  EXPECT_EQ(ContextValueText::of(variable("span_id", "otel_thread_ctx_v1", "")).form(),
            ContextValueText::Form::kOtelSpanId);
  EXPECT_EQ(ContextValueText::of(variable("trace_id", "my_trace", "")).form(),
            ContextValueText::Form::kNumber);
}

}  // namespace
}  // namespace incise::analyzer
