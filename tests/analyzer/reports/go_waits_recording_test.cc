// End to end: record the bundled go_waits workload with real BPF (readers
// blocked on a writer and a writer blocked on readers on one sync.RWMutex,
// goroutines waiting on one sync.Cond, each wait certain to leave the fast
// path; it prints the counts and the goroutine ids), then check `incise
// waits --json` against that truth: one rwlock group at the RWMutex with
// one wait per blocked RLock and Lock, one condvar group at the Cond with
// one wait per Wait call, the waiting goroutines among the blocked ones
// the workload printed and the releasing ones among those that unlocked
// or broadcast. A Cond is never a lock: `incise locks` leaves it out.
// Label "integration": skips without root/BPF, fails instead when CI=true.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/analyzer/reports/report_json_runner.h"
#include "tests/recorder/locks_recording.h"

namespace incise::analyzer {
int runWaits(const std::vector<std::string>& args);
int runLocks(const std::vector<std::string>& args);

namespace {

using incise::testing::record;
using incise::testing::Recording;
using incise::testing::RemoveOnExit;
using testing::groupsAt;
using testing::hexAddress;

const std::string kGoWaits = INCISE_WORKLOADS_DIR "/go_waits";

std::set<uint64_t> idsOf(const Recording& run, std::initializer_list<const char*> keys) {
  std::set<uint64_t> ids;
  for (const char* key : keys) {
    std::vector<uint64_t> listed = run.list(key);
    ids.insert(listed.begin(), listed.end());
  }
  return ids;
}

// The group's waiting and releasing goroutines are among `waiting` and
// `releasing`, and every wait is counted under a goroutine.
void expectGoroutines(const nlohmann::json& g, const std::set<uint64_t>& waiting,
                      const std::set<uint64_t>& releasing) {
  uint64_t waits_by_goroutine = 0;
  for (const auto& w : g["goroutine_waiters"]) {
    EXPECT_TRUE(waiting.count(w["goid"].get<uint64_t>())) << w.dump();
    waits_by_goroutine += w["waits"].get<uint64_t>();
  }
  EXPECT_EQ(waits_by_goroutine, g["wait_ns"]["count"].get<uint64_t>()) << g.dump(1);
  ASSERT_FALSE(g["goroutine_releasers"].empty()) << g.dump(1);
  for (const auto& r : g["goroutine_releasers"])
    EXPECT_TRUE(releasing.count(r["goid"].get<uint64_t>())) << r.dump();
}

// `incise waits --json` of a recording that ran the workload to its end.
void readWaits(const Recording& run, nlohmann::json& waits) {
  ASSERT_EQ(run.exit_code, 0) << run.recorder_stderr;
  ASSERT_TRUE(run.has("cond_waits")) << run.workload_stdout;
  ASSERT_EQ(testing::runReportJson(runWaits, {run.trace_path, "--limit", "0"}, waits), 0);
}

TEST(GoWaitsRecording, RWMutexAndCondWaitsAreCountedWithTheirKindsAndGoroutines) {
  INCISE_REQUIRE_RECORDING();
  INCISE_REQUIRE_GO_WORKLOAD(kGoWaits);
  // 20 rounds of 3 readers: 80 waiting goroutines, all within the 100 the
  // JSON lists per group.
  Recording run = record({"--locks", "contended", "-F", "19"},
                         {kGoWaits, "--readers", "3", "--rounds", "20", "--waiters", "3"});
  RemoveOnExit cleanup{run.trace_path};
  nlohmann::json waits;
  ASSERT_NO_FATAL_FAILURE(readWaits(run, waits));
  const uint64_t pid = run.value("pid");

  std::vector<nlohmann::json> rw =
      groupsAt(waits["groups"], pid, hexAddress(run.value("rwmutex_address")));
  ASSERT_EQ(rw.size(), 1u) << waits["groups"].dump(1);
  EXPECT_EQ(rw[0]["kind"], "rwlock") << rw[0].dump(1);
  // Each blocked RLock and Lock is one wait; the fast paths are not probed.
  EXPECT_EQ(rw[0]["wait_ns"]["count"].get<uint64_t>(),
            run.value("reader_waits") + run.value("writer_waits"))
      << rw[0].dump(1);
  EXPECT_EQ(rw[0]["hold_source"], "exact") << rw[0].dump(1);
  expectGoroutines(
      rw[0], idsOf(run, {"blocked_reader_goroutine_ids", "blocked_writer_goroutine_ids"}),
      idsOf(run, {"releasing_writer_goroutine_ids", "releasing_reader_goroutine_ids"}));

  std::vector<nlohmann::json> cond =
      groupsAt(waits["groups"], pid, hexAddress(run.value("cond_address")));
  ASSERT_EQ(cond.size(), 1u) << waits["groups"].dump(1);
  EXPECT_EQ(cond[0]["kind"], "condvar") << cond[0].dump(1);
  EXPECT_EQ(cond[0]["wait_ns"]["count"].get<uint64_t>(), run.value("cond_waits"))
      << cond[0].dump(1);
  expectGoroutines(cond[0], idsOf(run, {"cond_waiter_goroutine_ids"}),
                   idsOf(run, {"cond_signaller_goroutine_ids"}));

  // A condition wait is no lock: only the RWMutex is listed there.
  nlohmann::json locks;
  ASSERT_EQ(testing::runReportJson(runLocks, {run.trace_path, "--limit", "0"}, locks), 0);
  EXPECT_TRUE(groupsAt(locks["groups"], pid, hexAddress(run.value("cond_address"))).empty())
      << locks["groups"].dump(1);
  std::vector<nlohmann::json> rw_lock =
      groupsAt(locks["groups"], pid, hexAddress(run.value("rwmutex_address")));
  ASSERT_EQ(rw_lock.size(), 1u) << locks["groups"].dump(1);
  EXPECT_EQ(rw_lock[0]["kind"], "rwlock");
}

// Under -a the workload starts after the recorder: its RWMutex and Cond
// probes attach when the recorder sees its exec, through the attacher.
// The workload sleeps first so that they are in when it starts waiting
// (they take tens of ms); a wait before would not be recorded, so the
// counts are bounded by the workload's, not equal to them; every goroutine
// listed is its own.
TEST(GoWaitsRecording, AGoProgramStartedDuringASystemWideRecordingGetsItsRWMutexAndCondWaits) {
  INCISE_REQUIRE_RECORDING();
  INCISE_REQUIRE_GO_WORKLOAD(kGoWaits);
  Recording run = incise::testing::recordThenRun(
      {"-a", "--locks", "contended", "-F", "19"},
      {kGoWaits, "--readers", "3", "--rounds", "1500", "--waiters", "3", "--wait-ms", "1000"});
  RemoveOnExit cleanup{run.trace_path};
  nlohmann::json waits;
  ASSERT_NO_FATAL_FAILURE(readWaits(run, waits));
  // One group of `kind` at the object the workload printed, with at most
  // `truth` waits, each goroutine listed among `waiting`.
  auto expectGroup = [&](const char* address, const char* kind, uint64_t truth,
                         const std::set<uint64_t>& waiting) {
    std::vector<nlohmann::json> found =
        groupsAt(waits["groups"], run.value("pid"), hexAddress(run.value(address)));
    ASSERT_EQ(found.size(), 1u) << address << ": " << waits["groups"].dump(1);
    const nlohmann::json& g = found.front();
    EXPECT_EQ(g["kind"], kind) << g.dump(1);
    EXPECT_GE(g["wait_ns"]["count"].get<uint64_t>(), 1u) << g.dump(1);
    EXPECT_LE(g["wait_ns"]["count"].get<uint64_t>(), truth) << g.dump(1);
    ASSERT_FALSE(g["goroutine_waiters"].empty()) << g.dump(1);
    for (const auto& w : g["goroutine_waiters"])
      EXPECT_TRUE(waiting.count(w["goid"].get<uint64_t>())) << w.dump();
  };
  expectGroup("rwmutex_address", "rwlock", run.value("reader_waits") + run.value("writer_waits"),
              idsOf(run, {"blocked_reader_goroutine_ids", "blocked_writer_goroutine_ids"}));
  expectGroup("cond_address", "condvar", run.value("cond_waits"),
              idsOf(run, {"cond_waiter_goroutine_ids"}));
}

}  // namespace
}  // namespace incise::analyzer
