// End to end: record the bundled wait_kinds workload with real BPF (it waits
// on a mutex, an rwlock, a condvar, a semaphore, a semaphore posted by
// another process and a join, and prints who held or posted each), then
// check `incise waits --json` and `incise locks --json` against that truth:
// each object's kind and address, and the thread each wait names, read from
// the lock itself (exact) where glibc keeps an owner.
// Label "integration": skips without root/BPF, fails instead when CI=true.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/analyzer/reports/report_json_runner.h"
#include "tests/recorder/locks_recording.h"
#include "tests/recorder/recorder_test_support.h"

namespace incise::analyzer {
int runWaits(const std::vector<std::string>& args);
int runLocks(const std::vector<std::string>& args);

namespace {

using incise::testing::record;
using incise::testing::Recording;
using incise::testing::RemoveOnExit;

const std::string kWaitKinds = INCISE_WORKLOADS_DIR "/wait_kinds";
constexpr uint64_t kRounds = 3;

std::string hex(uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

struct Recorded {
  Recording run;
  nlohmann::json waits;
  nlohmann::json locks;
};

// Holds a long wait per round, so a waiter is always blocked long before
// the holder lets go, however loaded the machine.
Recorded recordWaitKinds(std::vector<std::string> options) {
  options.insert(options.end(), {"-F", "19"});
  Recorded r{
      record(options, {kWaitKinds, "--rounds", std::to_string(kRounds), "--hold-us", "50000"}),
      {},
      {}};
  return r;
}

std::vector<nlohmann::json> groupsAt(const nlohmann::json& groups, uint64_t pid,
                                     const std::string& address) {
  std::vector<nlohmann::json> found;
  for (const auto& g : groups)
    if (g["pid"] == pid && g["address"] == address) found.push_back(g);
  return found;
}

uint64_t waitCount(const nlohmann::json& group) {
  return group["wait_ns"]["count"].get<uint64_t>();
}

// One scenario's object: one group of `kind` at its address, naming its
// holder (or poster, signaller) as the workload printed it.
void expectObject(const Recorded& r, const std::string& scenario, const std::string& kind,
                  const std::string& hold_source) {
  const Recording& run = r.run;
  uint64_t pid = run.value("pid");
  std::string address = hex(run.value(scenario + "_address"));
  std::vector<nlohmann::json> groups = groupsAt(r.waits["groups"], pid, address);
  ASSERT_EQ(groups.size(), 1u) << scenario << " at " << address << ":\n"
                               << r.waits["groups"].dump(1);
  const nlohmann::json& g = groups.front();
  EXPECT_EQ(g["kind"], kind) << scenario << ": " << g.dump(1);
  EXPECT_EQ(g["holder_tid"], run.value(scenario + "_holder_tid")) << scenario << ": " << g.dump(1);
  EXPECT_EQ(g["hold_source"], hold_source) << scenario << ": " << g.dump(1);
  // Every round blocked once (a spurious wake-up could add one).
  EXPECT_GE(waitCount(g), kRounds) << scenario << ": " << g.dump(1);
  // Each waiter's recorded waits (block to switch-in, or the probed call)
  // lie inside its calls, which the workload timed with the same clock (the
  // rwlock has two waiters). The group's total is no bound: in mode `all` it
  // also holds the holder's own acquisitions, slowed by their uprobes.
  std::map<uint64_t, uint64_t> recorded_ns;
  for (const auto& w : g["top_waiters"]) recorded_ns[w["tid"].get<uint64_t>()] = w["ns"];
  const uint64_t waiter = run.value(scenario + "_waiter_tid");
  ASSERT_TRUE(recorded_ns.count(waiter)) << scenario << ": " << g.dump(1);
  EXPECT_LE(recorded_ns[waiter], run.value(scenario + "_wait_ns")) << scenario;
  if (run.has(scenario + "_writer_waiter_tid")) {
    const uint64_t writer = run.value(scenario + "_writer_waiter_tid");
    EXPECT_LE(recorded_ns[writer], run.value(scenario + "_writer_wait_ns")) << scenario;
  }
}

void expectTruth(const Recorded& r) {
  const Recording& run = r.run;
  ASSERT_FALSE(r.waits.is_discarded());
  ASSERT_FALSE(r.locks.is_discarded());
  expectObject(r, "mutex", "mutex", "exact");
  expectObject(r, "rwlock", "rwlock", "exact");
  expectObject(r, "condvar", "condvar", "exact");
  expectObject(r, "semaphore", "semaphore", "exact");
  expectObject(r, "shared_semaphore", "semaphore", "exact");

  // The rwlock's reader and second writer wait on different futex words:
  // both count on the rwlock itself.
  std::vector<nlohmann::json> rwlock =
      groupsAt(r.waits["groups"], run.value("pid"), hex(run.value("rwlock_address")));
  ASSERT_EQ(rwlock.size(), 1u);
  std::set<uint64_t> waiters;
  for (const auto& w : rwlock.front()["top_waiters"]) waiters.insert(w["tid"].get<uint64_t>());
  EXPECT_TRUE(waiters.count(run.value("rwlock_writer_waiter_tid"))) << rwlock.front().dump(1);

  // The main thread joined a thread that slept: the join names it exactly.
  bool joined = false;
  for (const auto& g : r.waits["groups"]) {
    if (g["kind"] != "join") continue;
    for (const auto& t : g["named"]) {
      if (t["tid"] == run.value("join_holder_tid")) {
        joined = true;
        EXPECT_EQ(t["source"], "exact") << g.dump(1);
      }
    }
  }
  EXPECT_TRUE(joined) << "no join naming " << run.value("join_holder_tid") << ":\n"
                      << r.waits["groups"].dump(1);

  // incise locks: the mutex and the rwlock are locks with exact holders;
  // the semaphores are in their own section, with their posters; the
  // condvar and the joins are not locks.
  uint64_t pid = run.value("pid");
  for (const char* scenario : {"mutex", "rwlock"}) {
    std::vector<nlohmann::json> lock =
        groupsAt(r.locks["groups"], pid, hex(run.value(std::string(scenario) + "_address")));
    ASSERT_EQ(lock.size(), 1u) << scenario << ":\n" << r.locks["groups"].dump(1);
    EXPECT_EQ(lock.front()["kind"], scenario);
    EXPECT_EQ(lock.front()["holder_tid"], run.value(std::string(scenario) + "_holder_tid"))
        << lock.front().dump(1);
    EXPECT_EQ(lock.front()["hold_source"], "exact");
  }
  for (const auto& g : r.locks["groups"]) {
    std::string kind = g["kind"];
    EXPECT_TRUE(kind == "mutex" || kind == "rwlock" || kind == "spin" || kind == "custom")
        << g.dump(1);
    EXPECT_NE(g["address"], hex(run.value("condvar_address")));
  }
  for (const char* scenario : {"semaphore", "shared_semaphore"}) {
    std::vector<nlohmann::json> sem =
        groupsAt(r.locks["semaphores"], pid, hex(run.value(std::string(scenario) + "_address")));
    ASSERT_EQ(sem.size(), 1u) << scenario << ":\n" << r.locks["semaphores"].dump(1);
    EXPECT_EQ(sem.front()["holder_tid"], run.value(std::string(scenario) + "_holder_tid"));
    EXPECT_EQ(sem.front()["role"], "posted by");
  }
}

Recorded recordAndReport(std::vector<std::string> options) {
  Recorded r = recordWaitKinds(std::move(options));
  EXPECT_EQ(r.run.exit_code, 0) << r.run.recorder_stderr;
  EXPECT_TRUE(r.run.has("join_holder_tid")) << r.run.workload_stdout;
  EXPECT_EQ(testing::runReportJson(runWaits, {r.run.trace_path, "--limit", "0"}, r.waits), 0);
  EXPECT_EQ(testing::runReportJson(runLocks, {r.run.trace_path, "--limit", "0"}, r.locks), 0);
  return r;
}

TEST(WaitKindsRecording, ContendedModeKnowsEveryKindAndItsHolder) {
  INCISE_REQUIRE_RECORDING();
  Recorded r = recordAndReport({"--locks", "contended"});
  RemoveOnExit cleanup{r.run.trace_path};
  expectTruth(r);
}

TEST(WaitKindsRecording, ContendedModeWithoutSchedulerRowsToo) {
  INCISE_REQUIRE_RECORDING();
  Recorded r = recordAndReport({"--locks", "contended", "--no-sched"});
  RemoveOnExit cleanup{r.run.trace_path};
  expectTruth(r);
}

TEST(WaitKindsRecording, ModeAllKnowsEveryKindAndItsHolder) {
  INCISE_REQUIRE_RECORDING();
  Recorded r = recordAndReport({"--locks", "all"});
  RemoveOnExit cleanup{r.run.trace_path};
  expectTruth(r);
}

// Waits well under --sched-min-block (1 ms by default): the recorder counts
// the semaphore's and the condvar's in wait summary rows instead of writing
// them, and the reports still give each object its waits, inside the
// workload's own measured waits, and the thread that posted or signalled.
// The mutex and the rwlock keep a lock row per wait, with their exact holders.
TEST(WaitKindsRecording, ShortEventWaitsAreCountedWithTheirPostersAndLocksKeepTheirRows) {
  INCISE_REQUIRE_RECORDING();
  constexpr uint64_t kShortRounds = 40;
  Recorded r{record({"--locks", "contended", "-F", "19"},
                    {kWaitKinds, "--rounds", std::to_string(kShortRounds), "--hold-us", "300"}),
             {},
             {}};
  RemoveOnExit cleanup{r.run.trace_path};
  ASSERT_EQ(r.run.exit_code, 0) << r.run.recorder_stderr;
  ASSERT_TRUE(r.run.has("join_holder_tid")) << r.run.workload_stdout;
  const Recording& run = r.run;
  const uint64_t pid = run.value("pid");

  incise::testing::TraceView trace(run.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  std::map<uint64_t, uint64_t> summarised;  // by futex word
  for (const format::WaitSummary& s : trace.rows<format::WaitSummary>()) {
    EXPECT_EQ(s.pid, pid);
    EXPECT_LT(s.max_ns, 1'000'000u);
    EXPECT_LE(s.max_ns, s.total_ns);
    EXPECT_LE(s.time + s.max_ns, s.end_time);
    summarised[s.address] += s.count;
  }
  std::set<uint64_t> written;  // futex words with a lock row
  for (const format::LockInterval& row : trace.rows<format::LockInterval>())
    written.insert(row.address);
  const uint64_t sem = run.value("semaphore_address");
  // Most rounds' waits last the poster's 300 us sleep: counted, not written.
  EXPECT_GE(summarised[sem], kShortRounds / 2) << r.run.recorder_stderr;
  // A lock's rows are at its futex words: an rwlock waits on three, in its
  // first 16 bytes.
  for (const char* lock : {"mutex", "rwlock"}) {
    const uint64_t start = run.value(std::string(lock) + "_address");
    EXPECT_EQ(summarised.lower_bound(start), summarised.lower_bound(start + 16)) << lock;
    EXPECT_NE(written.lower_bound(start), written.lower_bound(start + 16)) << lock;
  }

  ASSERT_EQ(testing::runReportJson(runWaits, {run.trace_path, "--limit", "0"}, r.waits), 0);
  ASSERT_EQ(testing::runReportJson(runLocks, {run.trace_path, "--limit", "0"}, r.locks), 0);
  for (const char* scenario : {"semaphore", "condvar"}) {
    std::vector<nlohmann::json> groups =
        groupsAt(r.waits["groups"], pid, hex(run.value(std::string(scenario) + "_address")));
    ASSERT_EQ(groups.size(), 1u) << scenario << ":\n" << r.waits["groups"].dump(1);
    const nlohmann::json& g = groups.front();
    EXPECT_EQ(g["kind"], scenario);
    EXPECT_EQ(g["holder_tid"], run.value(std::string(scenario) + "_holder_tid")) << g.dump(1);
    // Every round blocked once, as a row or in a summary (a round whose
    // waiter came late did not block; a spurious wake-up adds one).
    EXPECT_GE(waitCount(g), kShortRounds * 3 / 4) << g.dump(1);
    for (const auto& w : g["top_waiters"]) {
      if (w["tid"] != run.value(std::string(scenario) + "_waiter_tid")) continue;
      EXPECT_LE(w["ns"].get<uint64_t>(), run.value(std::string(scenario) + "_wait_ns"));
      EXPECT_GE(w["count"].get<uint64_t>(), kShortRounds * 3 / 4);
    }
  }
  std::vector<nlohmann::json> sem_section = groupsAt(r.locks["semaphores"], pid, hex(sem));
  ASSERT_EQ(sem_section.size(), 1u) << r.locks["semaphores"].dump(1);
  EXPECT_EQ(sem_section.front()["holder_tid"], run.value("semaphore_holder_tid"));
  EXPECT_EQ(sem_section.front()["role"], "posted by");
  EXPECT_GE(waitCount(sem_section.front()), kShortRounds * 3 / 4);
  for (const char* lock : {"mutex", "rwlock"}) {
    std::vector<nlohmann::json> group =
        groupsAt(r.locks["groups"], pid, hex(run.value(std::string(lock) + "_address")));
    ASSERT_EQ(group.size(), 1u) << lock << ":\n" << r.locks["groups"].dump(1);
    EXPECT_EQ(group.front()["holder_tid"], run.value(std::string(lock) + "_holder_tid"));
    EXPECT_EQ(group.front()["hold_source"], "exact");
  }
}

}  // namespace
}  // namespace incise::analyzer
