// Names from a trace cannot drive the analyst's terminal, and cannot break
// JSON. A trace whose process, thread, module, function and kernel symbol
// names hold an OSC title sequence, CSI sequences, BEL, C1 controls, a bidi
// override and bytes that are not UTF-8 goes through every command that
// prints them: text output carries no control byte but newlines and no
// invalid UTF-8 (the escaped forms show instead), and every JSON output
// parses (invalid bytes read as U+FFFD).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/analyzer/reports/trace_builder.h"
#include "tests/hardening/run_incise.h"

namespace incise::testing {
namespace {

using analyzer::testing::TraceBuilder;

const std::string kTitle = "\x1b]0;PWNED\x07";    // retitles the window
const std::string kClear = "evil\x1b[2J\x1b[H";   // clears the screen
const std::string kModule = "lib\x1b[31mred.so";  // paints the rest red
const std::string kInvalid =
    "w\xff\xfe"
    "x";  // not UTF-8
const std::string kC1 =
    "c1\xc2\x9b"
    "31m";  // CSI as a C1 control
const std::string kBidi =
    "gnp.\xe2\x80\xae"
    "exe";                                    // RIGHT-TO-LEFT OVERRIDE
const std::string kKernel = "kfunc\x07\x08";  // BEL and backspace

std::string writeHostileTrace(TraceBuilder& b) {
  constexpr uint32_t kHolder = 201, kWaiter = 202;
  b.process(TraceBuilder::kPid, kTitle + kInvalid);
  b.thread(kHolder, kTitle);
  b.thread(kWaiter, kInvalid);
  b.function(kClear, kModule);
  b.function(kC1, kModule);
  b.function(kBidi);
  b.kernelFunction(kKernel);
  uint64_t hot = b.stack({kKernel, kClear, kC1, kBidi});
  uint64_t waits = b.stack({kC1, kBidi});
  for (uint64_t t = 1000; t < 20000; t += 1000) b.sample(t, kHolder, hot);
  b.lock(kHolder, 0x5000, 1000, 1000, 5000, hot);
  b.lock(kWaiter, 0x5000, 1500, 5000, 5500, waits, format::kLockContended);
  b.sched(2000, 0, kHolder, 0, kWaiter, hot);
  b.sched(3000, 0, kWaiter, 1, kHolder, waits);
  b.wakeup(4990, kHolder, kWaiter, 1, hot);
  b.fault(2500, kHolder, 0x7200, hot);
  b.setEnd(30000);
  auto path = b.write();
  return path ? *path : "";
}

// What a terminal would act on: a C0 control other than newline, DEL, a C1
// control, a bidi override, or a byte that is not part of valid UTF-8.
std::string firstHazard(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    auto byte = static_cast<unsigned char>(text[i]);
    if (byte == '\n' || (byte >= 0x20 && byte < 0x7F)) {
      ++i;
      continue;
    }
    if (byte < 0x20 || byte == 0x7F)
      return "control byte " + std::to_string(byte) + " at " + std::to_string(i);
    size_t length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC2 ? 2 : 0;
    if (length == 0 || i + length > text.size()) return "invalid UTF-8 at " + std::to_string(i);
    for (size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80)
        return "invalid UTF-8 at " + std::to_string(i);
    }
    if (byte == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0)
      return "C1 control at " + std::to_string(i);
    if (text.compare(i, 3, "\xe2\x80\xae") == 0) return "bidi override at " + std::to_string(i);
    i += length;
  }
  return "";
}

class HostileNames : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = writeHostileTrace(builder_);
    ASSERT_FALSE(path_.empty());
  }
  TraceBuilder builder_;
  std::string path_;
};

TEST_F(HostileNames, TextOutputOfEveryCommandIsInert) {
  const std::vector<std::vector<std::string>> commands = {
      {"info", path_},
      {"top", path_},
      {"top", path_, "--by", "module"},
      {"sched", path_},
      {"offcpu", path_},
      {"locks", path_},
      {"locks", path_, "--by", "site"},
      {"correlate", path_},
      {"dump", path_},
      {"dump", path_, "--kind", "metadata"},
      {"flame", path_},  // folded stacks on stdout
      {"export", path_, "--format", "folded"},
      {"check", path_},
      {"diff", path_, path_},
  };
  bool escaped_title_seen = false;
  for (const auto& args : commands) {
    Outcome run = runIncise(args);
    std::string what =
        args[0] + (args.size() > 2 ? " " + args[2] + (args.size() > 3 ? " " + args[3] : "") : "");
    EXPECT_EQ(run.exit_code, 0) << what << "\n" << run.err;
    EXPECT_EQ(firstHazard(run.out), "") << what << " stdout:\n" << run.out;
    EXPECT_EQ(firstHazard(run.err), "") << what << " stderr:\n" << run.err;
    escaped_title_seen |= run.out.find("\\x1b]0;PWNED\\x07") != std::string::npos;
  }
  EXPECT_TRUE(escaped_title_seen) << "the escaped name is shown, not dropped";
}

// XML 1.0 has no place for C0 controls or bytes that are not UTF-8: a frame
// name carrying them must reach the SVG escaped, or it is not well-formed.
TEST_F(HostileNames, SvgFlameGraphHoldsOnlyCharactersXmlAllows) {
  std::string svg_path = path_ + ".svg";
  Outcome run = runIncise({"flame", path_, "-o", svg_path});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::ifstream in(svg_path, std::ios::binary);
  std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(svg_path.c_str());
  EXPECT_EQ(firstHazard(svg), "") << svg;
  EXPECT_NE(svg.find("evil\\x1b[2J\\x1b[H"), std::string::npos) << svg;
}

TEST_F(HostileNames, NamesAreShownEscaped) {
  Outcome info = runIncise({"info", path_});
  EXPECT_NE(info.out.find("\\x1b]0;PWNED\\x07w\\xff\\xfex"), std::string::npos) << info.out;
  Outcome top = runIncise({"top", path_});
  EXPECT_NE(top.out.find("evil\\x1b[2J\\x1b[H"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("c1\\u{009b}31m"), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("gnp.\\u{202e}exe"), std::string::npos) << top.out;
  Outcome modules = runIncise({"top", path_, "--by", "module"});
  EXPECT_NE(modules.out.find("lib\\x1b[31mred.so"), std::string::npos) << modules.out;
  Outcome folded = runIncise({"export", path_, "--format", "folded"});
  EXPECT_NE(folded.out.find("kfunc\\x07\\x08"), std::string::npos) << folded.out;
}

TEST_F(HostileNames, JsonOutputParsesWithInvalidUtf8Replaced) {
  const std::vector<std::vector<std::string>> commands = {
      {"info", path_, "--json"},
      {"top", path_, "--json"},
      {"sched", path_, "--json"},
      {"offcpu", path_, "--json"},
      {"locks", path_, "--json"},
      {"correlate", path_, "--json"},
      {"diff", path_, path_, "--json"},
      {"export", path_, "--format", "chrome"},
      {"export", path_, "--format", "speedscope"},
  };
  for (const auto& args : commands) {
    Outcome run = runIncise(args);
    ASSERT_EQ(run.exit_code, 0) << args[0] << "\n" << run.err;
    EXPECT_EQ(firstHazard(run.out), "") << args[0];
    nlohmann::json doc = nlohmann::json::parse(run.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << args[0] << " wrote JSON that does not parse:\n" << run.out;
  }
  Outcome info = runIncise({"info", path_, "--json"});
  nlohmann::json doc = nlohmann::json::parse(info.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["processes"][0]["comm"], "\x1b]0;PWNED\x07w\xef\xbf\xbd\xef\xbf\xbdx");
}

TEST_F(HostileNames, JsonLinesOfDumpParse) {
  for (const char* kind : {"metadata", "cpu_sample", "stacks"}) {
    Outcome run = runIncise({"dump", path_, "--kind", kind, "--json", "--limit", "0"});
    ASSERT_EQ(run.exit_code, 0) << kind << "\n" << run.err;
    EXPECT_EQ(firstHazard(run.out), "") << kind;
    size_t lines = 0, start = 0;
    for (size_t end; (end = run.out.find('\n', start)) != std::string::npos; start = end + 1) {
      nlohmann::json line =
          nlohmann::json::parse(run.out.substr(start, end - start), nullptr, false);
      EXPECT_FALSE(line.is_discarded()) << kind << ": " << run.out.substr(start, end - start);
      ++lines;
    }
    EXPECT_GT(lines, 0u) << kind;
  }
}

}  // namespace
}  // namespace incise::testing
