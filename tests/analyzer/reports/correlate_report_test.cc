// `incise correlate` on traces built with the writer: exact JSON numbers
// for the preempted holder, the faults and samples under the lock and the
// wake-up chain of the longest wait; the findings' ranking and sentences;
// a chain of three waits shown once as a tree; a join not blamed on anyone;
// filters that keep the holder who explains a filtered thread's wait.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/analyzer/reports/lock_story_trace.h"
#include "tests/analyzer/reports/report_json_runner.h"
#include "tests/analyzer/reports/report_runner.h"

namespace incise::analyzer {
int runCorrelate(const std::vector<std::string>& args);

namespace {

using testing::buildLockStory;
using testing::kStoryHolder;
using testing::runReportJson;
using testing::TraceBuilder;

class CorrelateReport : public ::testing::TestWithParam<bool> {};

TEST(CorrelateReport, AllModeStory) {
  TraceBuilder b;
  buildLockStory(b, false);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  nlohmann::json doc;
  ASSERT_EQ(runReportJson(runCorrelate, {*path}, doc), 0);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["lock_mode"], "all");

  ASSERT_EQ(doc["preemption"].size(), 1u);
  const nlohmann::json& p = doc["preemption"][0];
  EXPECT_EQ(p["holder"]["name"], "holder");
  EXPECT_EQ(p["holder"]["tid"], 201);
  EXPECT_EQ(p["lock"]["address"], "0x5000");
  EXPECT_EQ(p["site"], "update_account");
  EXPECT_EQ(p["sections"], 1);
  EXPECT_EQ(p["held_ns"], 4000);
  EXPECT_EQ(p["preempted_switches"], 1);
  EXPECT_EQ(p["blocked_switches"], 1);
  EXPECT_EQ(p["off_cpu_preempted_ns"], 1000);
  EXPECT_EQ(p["off_cpu_blocked_ns"], 500);
  EXPECT_EQ(p["waiters_while_off_cpu"], 2);
  EXPECT_EQ(p["waiter_ns_while_off_cpu"], 2000);  // waiter-1 1500, waiter-2 500
  EXPECT_EQ(p["waiter_ns_while_held"], 5300);

  ASSERT_GE(doc["inside_sections"].size(), 1u);
  const nlohmann::json& in = doc["inside_sections"][0];
  EXPECT_EQ(in["holder"]["name"], "holder");
  EXPECT_EQ(in["faults"], 2);
  EXPECT_EQ(in["thread_faults"], 4);
  EXPECT_DOUBLE_EQ(in["faults_percent_of_thread"].get<double>(), 50.0);
  EXPECT_EQ(in["samples"], 2);
  EXPECT_EQ(in["thread_samples"], 3);
  EXPECT_DOUBLE_EQ(in["samples_percent_of_thread"].get<double>(), 66.67);
  ASSERT_EQ(in["fault_stacks"].size(), 1u);
  EXPECT_EQ(in["fault_stacks"][0]["count"], 2);
  EXPECT_EQ(in["fault_stacks"][0]["stack"], "memset <- update_account <- worker_main");

  ASSERT_EQ(doc["wake_chains"].size(), 2u);
  const nlohmann::json& link = doc["wake_chains"][0]["links"][0];
  EXPECT_EQ(link["waiter"]["name"], "waiter-1");
  EXPECT_EQ(link["wait_ns"], 3500);
  EXPECT_EQ(link["wait_start_ns"], 1500);
  EXPECT_EQ(link["source"], "wakeup");
  EXPECT_EQ(link["waker"]["name"], "holder");
  EXPECT_EQ(link["waker_stack"], "pthread_mutex_unlock <- update_account <- worker_main");

  // Ranked by the waiting each explains: waiter-1's 3.5-us wait; the 3.3 us
  // others waited while the holder held the lock on-CPU; the 2 us they lost
  // while it was off-CPU.
  const nlohmann::json& findings = doc["findings"];
  ASSERT_EQ(findings.size(), 3u) << findings.dump(2);
  EXPECT_EQ(findings[0]["kind"], "longest_wait");
  EXPECT_EQ(findings[0]["weight_ns"], 3500);
  EXPECT_EQ(findings[0]["text"],
            "The longest lock wait: waiter-1 (202) waited 3.500 us for mutex 0x5000 at "
            "update_account; holder (201) woke it (wake chain 1 below).");
  EXPECT_EQ(findings[1]["kind"], "holder_on_cpu");
  EXPECT_EQ(findings[1]["weight_ns"], 3300);
  EXPECT_EQ(findings[1]["text"],
            "holder (201) held mutex 0x5000 at update_account on-CPU while others waited "
            "3.300 us: 67% of its CPU samples (2 of 3) came inside, most at update_account, and "
            "50% of its page faults (2 of 4), most at memset.");
  EXPECT_EQ(findings[2]["kind"], "holder_off_cpu");
  EXPECT_EQ(findings[2]["weight_ns"], 2000);
  EXPECT_EQ(findings[2]["text"],
            "holder (201) was switched out 2 times (1 preempted, 1 blocked) while holding mutex "
            "0x5000 at update_account: 1.500 us off-CPU, while 2 waiters lost 2.000 us.");
  EXPECT_EQ(findings[2]["holder"]["tid"], 201);
  EXPECT_EQ(findings[2]["lock"]["address"], "0x5000");
  // The summary is the findings' sentences, then the notes.
  ASSERT_GE(doc["summary"].size(), 3u);
  EXPECT_EQ(doc["summary"][0], findings[0]["text"]);
  EXPECT_EQ(doc["unblamed_waits"]["count"], 0);
}

TEST(CorrelateReport, TextIsRankedFindingsThenTheWakeTree) {
  TraceBuilder b;
  buildLockStory(b, false);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  testing::ReportResult text = testing::runReport(runCorrelate, {*path});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  const std::string& out = text.output;
  size_t findings = out.find("Findings, by the waiting each explains\n  1. The longest lock wait:");
  size_t second = out.find("\n  2. holder (201) held mutex 0x5000 at update_account on-CPU");
  size_t third = out.find("\n  3. holder (201) was switched out 2 times");
  size_t tree = out.find("\nWake chains of the longest lock waits");
  ASSERT_NE(findings, std::string::npos) << out;
  EXPECT_LT(findings, second) << out;
  EXPECT_LT(second, third) << out;
  EXPECT_LT(third, tree) << out;
  // waiter-1's wait starts chain 1; waiter-2's (woken by waiter-1, whose
  // wait it then shows) chain 2, which ends at waiter-1's wait, shown once.
  EXPECT_NE(out.find("  1  waiter-1 (202) waited 3.500 us for mutex 0x5000 at update_account\n"
                     "     woken by holder (201) from pthread_mutex_unlock <- update_account <- "
                     "worker_main\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  2  waiter-2 (203) waited 2.300 us for mutex 0x5000 at update_account\n"
                     "     woken by waiter-1 (202) from pthread_mutex_unlock <- update_account <- "
                     "worker_main\n"
                     "     \u2514 waiter-1 (202)'s wait of 3.500 us: as in chain 1\n"),
            std::string::npos)
      << out;
}

TEST(CorrelateReport, ContendedModeInfersThePreemptedHolder) {
  TraceBuilder b;
  buildLockStory(b, true);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  nlohmann::json doc;
  ASSERT_EQ(runReportJson(runCorrelate, {*path}, doc), 0);
  EXPECT_EQ(doc["lock_mode"], "contended");
  ASSERT_EQ(doc["preemption"].size(), 1u);
  const nlohmann::json& p = doc["preemption"][0];
  // Inferred: holder held the lock from waiter-1's wait start [1500, 5000).
  EXPECT_EQ(p["holder"]["name"], "holder");
  EXPECT_TRUE(p["inferred"].get<bool>());
  EXPECT_EQ(p["held_ns"], 3500);
  EXPECT_EQ(p["off_cpu_preempted_ns"], 1000);
  EXPECT_EQ(p["off_cpu_blocked_ns"], 500);
  EXPECT_EQ(p["waiter_ns_while_off_cpu"], 2000);
  const nlohmann::json& in = doc["inside_sections"][0];
  EXPECT_EQ(in["faults"], 1);  // 2500; the one at 1000 came before the inferred start
  EXPECT_EQ(in["thread_faults"], 4);
}

TEST(CorrelateReport, TimeFilterNarrowsTheStory) {
  TraceBuilder b;
  buildLockStory(b, false);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  nlohmann::json doc;
  // Only events from 6 us on: no lock rows start there.
  ASSERT_EQ(runReportJson(runCorrelate, {*path, "--time", "0.000006.."}, doc), 0);
  EXPECT_TRUE(doc["preemption"].empty());
  EXPECT_TRUE(doc["findings"].empty());
  EXPECT_EQ(doc["summary"][0], "No lock events pass the filters: nothing to correlate.");
}

// The window [2.5 us, 3.8 us] cuts the holder's section: its preemption at
// 2 us started before the window and still counts from 2.5 us on; the
// blocked switch at 3.5 us is inside; samples and faults outside are not.
TEST(CorrelateReport, TimeWindowCutsSectionsButKeepsWhatCameBefore) {
  TraceBuilder b;
  buildLockStory(b, false);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  nlohmann::json doc;
  ASSERT_EQ(runReportJson(runCorrelate, {*path, "--time", "0.0000025..0.0000038"}, doc), 0);
  ASSERT_EQ(doc["preemption"].size(), 1u) << doc.dump(2);
  const nlohmann::json& p = doc["preemption"][0];
  EXPECT_EQ(p["holder"]["tid"], 201);
  EXPECT_EQ(p["held_ns"], 1301);              // [2500, 3801)
  EXPECT_EQ(p["off_cpu_preempted_ns"], 500);  // [2500, 3000)
  EXPECT_EQ(p["off_cpu_blocked_ns"], 301);    // [3500, 3801)
  EXPECT_EQ(p["preempted_switches"], 0);      // at 2000: before the window
  EXPECT_EQ(p["blocked_switches"], 1);
  // waiter-1 waits throughout, waiter-2 from 3.2 us: 500 + 301 + 301.
  EXPECT_EQ(p["waiter_ns_while_off_cpu"], 500 + 301 + 301);
  ASSERT_EQ(doc["inside_sections"].size(), 1u);
  EXPECT_EQ(doc["inside_sections"][0]["faults"], 1);         // at 2500
  EXPECT_EQ(doc["inside_sections"][0]["thread_faults"], 1);  // 500, 1000, 5000 are outside
  EXPECT_EQ(doc["inside_sections"][0]["samples"], 0);
}

// --tid picks whose story it is: waiter-1 (202) only waited, but the holder
// that was preempted while it waited is outside the filter and still
// explains its wait; what the filtered thread lost is said apart.
TEST(CorrelateReport, AHolderOutsideTheFilterExplainsAFilteredThreadsWait) {
  for (bool contended : {false, true}) {
    TraceBuilder b;
    buildLockStory(b, contended);
    auto path = b.write();
    ASSERT_TRUE(path) << path.error().message();
    nlohmann::json doc;
    ASSERT_EQ(runReportJson(runCorrelate, {*path, "--tid", "202"}, doc), 0);
    ASSERT_EQ(doc["preemption"].size(), 1u) << doc.dump(2);
    const nlohmann::json& p = doc["preemption"][0];
    EXPECT_EQ(p["holder"]["tid"], 201);
    EXPECT_FALSE(p["holder_in_focus"].get<bool>());
    EXPECT_EQ(p["preempted_switches"], 1);
    EXPECT_EQ(p["waiter_ns_while_off_cpu"], 2000);        // both waiters
    EXPECT_EQ(p["focus_waiter_ns_while_off_cpu"], 1500);  // waiter-1's part
    ASSERT_FALSE(doc["wake_chains"].empty());
    EXPECT_EQ(doc["wake_chains"][0]["links"][0]["waiter"]["tid"], 202);
    EXPECT_EQ(doc["wake_chains"][0]["links"][0]["waker"]["tid"], 201);
    for (const auto& chain : doc["wake_chains"]) {  // only the filtered thread's waits start chains
      EXPECT_EQ(chain["links"][0]["waiter"]["tid"], 202);
    }
    bool said = false;
    for (const auto& f : doc["findings"]) {
      if (f["kind"] != "holder_off_cpu") continue;
      said = f["text"].get<std::string>().find("(1.500 us of it the threads shown)") !=
             std::string::npos;
    }
    EXPECT_TRUE(said) << doc["findings"].dump(2);
    // With the old filter the holder's rows were gone: nothing to say.
    ASSERT_EQ(runReportJson(runCorrelate, {*path, "--tid", "203"}, doc), 0);
    ASSERT_EQ(doc["preemption"].size(), 1u);
    EXPECT_EQ(doc["preemption"][0]["focus_waiter_ns_while_off_cpu"], 500);
  }
}

// --where picks the story the same way by what the waiters were serving:
// waiter-1 (202) holds request 5 throughout, waiter-2 (203) request 6.
TEST(CorrelateReport, WhereKeepsTheWaitsOfThreadsHoldingTheValues) {
  TraceBuilder b;
  buildLockStory(b, false);
  b.context("req", "request_id");
  b.contextChange(0, 202, 0, 5);
  b.contextChange(0, 203, 0, 6);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  for (const auto& [where, focus_ns] :
       {std::pair{"req=5", 1500}, std::pair{"req=6", 500}, std::pair{"req=5,6", 2000}}) {
    SCOPED_TRACE(where);
    nlohmann::json doc;
    ASSERT_EQ(runReportJson(runCorrelate, {*path, "--where", where}, doc), 0);
    ASSERT_EQ(doc["preemption"].size(), 1u) << doc.dump(2);
    const nlohmann::json& p = doc["preemption"][0];
    EXPECT_EQ(p["holder"]["tid"], 201);
    EXPECT_FALSE(p["holder_in_focus"].get<bool>());  // it never read req
    EXPECT_EQ(p["waiter_ns_while_off_cpu"], 2000);
    EXPECT_EQ(p["focus_waiter_ns_while_off_cpu"], focus_ns);
  }
  nlohmann::json doc;
  ASSERT_EQ(runReportJson(runCorrelate, {*path, "--where", "req=7"}, doc), 0);
  EXPECT_EQ(doc["summary"][0], "No lock events pass the filters: nothing to correlate.");
  EXPECT_EQ(runReportJson(runCorrelate, {*path, "--where", "user=1"}, doc), 2);
}

TEST(CorrelateReport, TakesNoCpuFilter) {
  TraceBuilder b;
  buildLockStory(b, false);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  nlohmann::json doc;
  EXPECT_EQ(runReportJson(runCorrelate, {*path, "--cpu", "0"}, doc), 2);
}

// --limit keeps the heaviest findings, in text and JSON alike, and says
// that more were left out; --limit 0 keeps them all.
TEST(CorrelateReport, LimitKeepsTheHeaviestFindings) {
  TraceBuilder b;
  buildLockStory(b, false);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  const std::string more = "More findings: --limit 0 lists them all.";

  testing::ReportResult text = testing::runReport(runCorrelate, {*path, "--limit", "1"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("\n  1. The longest lock wait: waiter-1 (202)"), std::string::npos)
      << text.output;
  EXPECT_EQ(text.output.find("\n  2. "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find(more), std::string::npos) << text.output;

  nlohmann::json doc;
  ASSERT_EQ(runReportJson(runCorrelate, {*path, "--limit", "1"}, doc), 0);
  ASSERT_EQ(doc["findings"].size(), 1u) << doc["findings"].dump(2);
  EXPECT_EQ(doc["findings"][0]["kind"], "longest_wait");
  EXPECT_EQ(doc["findings"][0]["rank"], 1);
  EXPECT_NE(std::find(doc["notes"].begin(), doc["notes"].end(), more), doc["notes"].end())
      << doc["notes"].dump(2);

  ASSERT_EQ(runReportJson(runCorrelate, {*path, "--limit", "0"}, doc), 0);
  ASSERT_EQ(doc["findings"].size(), 3u) << doc["findings"].dump(2);
  EXPECT_EQ(doc["findings"][2]["kind"], "holder_off_cpu");
  EXPECT_EQ(std::find(doc["notes"].begin(), doc["notes"].end(), more), doc["notes"].end());
  text = testing::runReport(runCorrelate, {*path, "--limit", "0"});
  EXPECT_NE(text.output.find("\n  3. holder (201) was switched out"), std::string::npos)
      << text.output;
  EXPECT_EQ(text.output.find(more), std::string::npos) << text.output;
}

// A report filtered by name still reads the scheduler rows that explain the
// threads shown, and never asks for a recorder option that does not exist:
// only a trace recorded without the scheduler says so, naming --no-sched.
TEST(CorrelateReport, AFilteredReportUsesTheSchedulerEvents) {
  TraceBuilder b;
  buildLockStory(b, false);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  for (const char* comm : {"bank", "waiter-1"}) {
    nlohmann::json doc;
    ASSERT_EQ(runReportJson(runCorrelate, {*path, "--comm", comm}, doc), 0) << comm;
    ASSERT_EQ(doc["preemption"].size(), 1u) << comm << doc.dump(2);
    EXPECT_EQ(doc["preemption"][0]["preempted_switches"], 1) << comm;
    EXPECT_EQ(doc["preemption"][0]["blocked_switches"], 1) << comm;
    testing::ReportResult text = testing::runReport(runCorrelate, {*path, "--comm", comm});
    ASSERT_EQ(text.exit_code, 0) << text.output;
    EXPECT_NE(text.output.find("holder (201) was switched out 2 times"), std::string::npos)
        << comm << "\n"
        << text.output;
    EXPECT_EQ(text.output.find("scheduler events"), std::string::npos) << text.output;
    EXPECT_EQ(text.output.find("--sched"), std::string::npos) << text.output;
  }

  // Recorded with --no-sched: sections but no switches to place in them.
  TraceBuilder quiet;
  quiet.setSchedRecorded(false);
  quiet.process(TraceBuilder::kPid, "bank");
  quiet.thread(301, "A");
  quiet.thread(302, "B");
  quiet.function("pthread_mutex_lock", "libc.so.6");
  uint64_t acquire = quiet.stack({"pthread_mutex_lock", "transfer", "worker_main"});
  quiet.lock(301, 0x6000, 1000, 1000, 3000, acquire);
  quiet.lock(302, 0x6000, 1500, 3000, 3100, acquire, format::kLockContended);
  auto quiet_path = quiet.write();
  ASSERT_TRUE(quiet_path) << quiet_path.error().message();
  testing::ReportResult text = testing::runReport(runCorrelate, {*quiet_path});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("The trace has no scheduler events (recorded with --no-sched)"),
            std::string::npos)
      << text.output;
  EXPECT_EQ(text.output.find(" --sched"), std::string::npos) << text.output;
}

// Thread names come from the traced program: a name with terminal control
// sequences is printed escaped, in findings and in the wake tree alike.
TEST(CorrelateReport, NamesFromTheTraceAreEscaped) {
  TraceBuilder b;
  b.process(TraceBuilder::kPid, "bank");
  b.thread(301, "A\x1b]0;PWNED\x07");
  b.thread(302, "B\x1b[31m");
  b.function("pthread_mutex_lock", "libc.so.6");
  b.function("pthread_mutex_unlock", "libc.so.6");
  uint64_t acquire = b.stack({"pthread_mutex_lock", "transfer", "worker_main"});
  uint64_t release = b.stack({"pthread_mutex_unlock", "transfer", "worker_main"});
  b.lock(302, 0x6000, 900, 900, 4000, acquire);
  b.lock(301, 0x6000, 1000, 4000, 4100, acquire, format::kLockContended);
  b.wakeup(3990, 302, 301, 0, release);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  testing::ReportResult text = testing::runReport(runCorrelate, {*path});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_EQ(text.output.find('\x1b'), std::string::npos) << text.output;
  EXPECT_EQ(text.output.find('\x07'), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("1. The longest lock wait: A\\x1b]0;PWNED\\x07 (301) waited"),
            std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("woken by B\\x1b[31m (302) from"), std::string::npos) << text.output;
}

// A chain of three waits: A waits longest, woken by B, whose own wait was
// ended by C, whose wait was ended by D. The three are also the three
// longest waits: printed chain by chain they came three times (A-B-C,
// B-C, C); as a tree each is one node.
TEST(CorrelateReport, AChainOfThreeWaitsIsShownOnceAsATree) {
  TraceBuilder b;
  b.process(TraceBuilder::kPid, "bank");
  b.thread(301, "A");
  b.thread(302, "B");
  b.thread(303, "C");
  b.thread(304, "D");
  b.function("pthread_mutex_lock", "libc.so.6");
  b.function("pthread_mutex_unlock", "libc.so.6");
  uint64_t acquire = b.stack({"pthread_mutex_lock", "transfer", "worker_main"});
  uint64_t release = b.stack({"pthread_mutex_unlock", "transfer", "worker_main"});
  b.lock(303, 0x6000, 1000, 4000, 4100, acquire, format::kLockContended);  // C: 3.0 us
  b.lock(302, 0x6000, 1100, 4500, 4600, acquire, format::kLockContended);  // B: 3.4 us
  b.lock(301, 0x6000, 1200, 5000, 5100, acquire, format::kLockContended);  // A: 3.8 us
  b.lock(304, 0x6000, 900, 900, 4000, acquire);                            // D holds first
  b.wakeup(3990, 304, 303, 0, release);
  b.wakeup(4490, 303, 302, 0, release);
  b.wakeup(4990, 302, 301, 0, release);
  auto path = b.write();
  ASSERT_TRUE(path) << path.error().message();
  nlohmann::json doc;
  ASSERT_EQ(runReportJson(runCorrelate, {*path}, doc), 0);
  ASSERT_EQ(doc["wake_chains"].size(), 3u);  // A's, B's and C's waits (D never waited)
  const nlohmann::json& tree = doc["wake_tree"];
  ASSERT_EQ(tree.size(), 3u) << tree.dump(2);
  std::vector<uint64_t> tids, depths;
  for (const auto& node : tree) {
    tids.push_back(node["link"]["waiter"]["tid"]);
    depths.push_back(node["depth"]);
  }
  EXPECT_EQ(tids, (std::vector<uint64_t>{301, 302, 303}));
  EXPECT_EQ(depths, (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(tree[1]["ranks"], nlohmann::json::array({2}));
  EXPECT_EQ(tree[2]["ranks"], nlohmann::json::array({3}));
  EXPECT_EQ(tree[2]["link"]["waker"]["tid"], 304);

  testing::ReportResult text = testing::runReport(runCorrelate, {*path});
  ASSERT_EQ(text.exit_code, 0);
  size_t tree_at = text.output.find("Wake chains of the longest lock waits");
  ASSERT_NE(tree_at, std::string::npos) << text.output;
  const std::string tree_text = text.output.substr(tree_at);
  for (const char* waiter : {"A (301)", "B (302)", "C (303)"}) {
    size_t first = tree_text.find(std::string(waiter) + " waited");
    size_t had = tree_text.find(std::string(waiter) + " had waited");
    size_t at = first != std::string::npos ? first : had;
    ASSERT_NE(at, std::string::npos) << waiter << "\n" << tree_text;
    // Once: no second line for the same wait.
    EXPECT_EQ(tree_text.find(std::string(waiter) + " waited", at + 1), std::string::npos)
        << tree_text;
    EXPECT_EQ(tree_text.find(std::string(waiter) + " had waited", at + 1), std::string::npos)
        << tree_text;
  }
  EXPECT_NE(tree_text.find("  1  A (301) waited 3.800 us for mutex 0x6000 at transfer\n"),
            std::string::npos)
      << tree_text;
  EXPECT_NE(tree_text.find("     \u2514 B (302) had waited 3.400 us for the same mutex (the 2nd "
                           "longest)\n"),
            std::string::npos)
      << tree_text;
}

// The main thread's pthread_join is a futex row beside the mutex rows. It
// is the longest wait, but the story blames it on no one: no section for
// the exiting thread, no chain, no finding; it is counted apart, by kind.
// In both lock modes: the wait's kind (its C library entry point here)
// decides, as in `incise locks` and `incise waits`, not the recording mode.
TEST(CorrelateReport, AJoinIsNotBlamedOnAHolder) {
  for (const char* mode : {"all", "contended"}) {
    TraceBuilder b;
    b.setLockMode(mode);
    buildLockStory(b, std::string(mode) == "contended");
    b.thread(200, "main");
    b.function("pthread_join", "libc.so.6");
    uint64_t join = b.stack({"pthread_join", "main"});
    b.lock(200, 0x9990, 100, 9000, 0, join, format::kLockContended | format::kLockContendedOnly,
           kStoryHolder, format::LockKind::kFutex);
    b.wakeup(9000, kStoryHolder, 200, 0, 0);
    auto path = b.write();
    ASSERT_TRUE(path) << path.error().message();
    nlohmann::json doc;
    ASSERT_EQ(runReportJson(runCorrelate, {*path}, doc), 0);
    EXPECT_EQ(doc["unblamed_waits"]["count"], 1) << mode;
    ASSERT_EQ(doc["unblamed_waits"]["kinds"].size(), 1u) << mode;
    EXPECT_EQ(doc["unblamed_waits"]["kinds"][0]["kind"], "join") << mode;
    EXPECT_EQ(doc["unblamed_waits"]["longest"]["kind"], "join") << mode;
    EXPECT_EQ(doc["unblamed_waits"]["longest"]["wait_ns"], 8900) << mode;
    bool join_in_chains = false;
    for (const auto& chain : doc["wake_chains"]) {
      for (const auto& link : chain["links"]) join_in_chains |= link["lock"] == "0x9990";
    }
    EXPECT_FALSE(join_in_chains) << mode;
    bool join_held = false;
    for (const auto& p : doc["preemption"]) join_held |= p["lock"]["address"] == "0x9990";
    for (const auto& p : doc["inside_sections"]) join_held |= p["lock"]["address"] == "0x9990";
    EXPECT_FALSE(join_held) << mode;
    // The longest lock wait (waiter-1's 3.5 us), not the join.
    EXPECT_EQ(doc["findings"][0]["weight_ns"], 3500) << mode;
    bool noted = false;
    for (const auto& note : doc["notes"]) {
      noted |= note.get<std::string>().rfind(
                   "Not blamed on a holder, not being lock waits: join 1 (8.900 us); the "
                   "longest, 8.900 us, a join wait by main (200)",
                   0) == 0;
    }
    EXPECT_TRUE(noted) << doc["notes"].dump(2);
  }
}

}  // namespace
}  // namespace incise::analyzer
