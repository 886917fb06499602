// The recorder's other inputs: numbers that would wrap, a --lock-probe
// that cannot work, a --cgroup that is not one (and one whose processes sit
// in child cgroups), ambient capabilities that must not reach the command,
// and --max-size as a bound.
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "tests/hardening/child_process.h"
#include "tests/hardening/trace_check.h"
#include "tests/recorder/recorder_test_support.h"

namespace incise::testing {
namespace {

namespace fs = std::filesystem;

struct Recorded {
  int exit_code = -1;
  std::string errors;
};

Recorded record(const std::vector<std::string>& args,
                std::chrono::seconds deadline = std::chrono::seconds(120)) {
  std::vector<std::string> argv = {INCISE_RECORD_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildProcess recorder = ChildProcess::start(argv);
  std::optional<int> status = recorder.waitFor(deadline);
  return Recorded{status ? *status : -1, recorder.errors()};
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// These fail while parsing, before anything needs privileges.
TEST(RecorderNumbers, ValuesThatWouldWrapAreRefusedWithTheirBounds) {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  } cases[] = {
      {{"-a", "-d", "inf"}, "--duration 'inf': expected a number from 0.001 to 31536000 (seconds)"},
      {{"-a", "-d", "1e300"},
       "--duration '1e300': expected a number from 0.001 to 31536000 (seconds)"},
      {{"-a", "-d", "0"}, "--duration '0': expected a number from 0.001"},
      {{"-a", "-F", "-5"}, "--freq '-5': expected a whole number from 1 to"},
      {{"-a", "-F", "4294967297"}, "--freq '4294967297': expected a whole number from 1 to"},
      {{"-a", "--max-size", "-1"},
       "--max-size '-1': expected a whole number from 1 to 1048576 (MB)"},
      {{"-a", "--max-size", "17592186044416"}, "--max-size '17592186044416'"},
      {{"-a", "-g", "dwarf=99999999999"},
       "-g dwarf= '99999999999': expected a whole number from 64 to 65536"},
      {{"-p", "99999999999"}, "-p '99999999999': expected a whole number from 1 to 4194304"},
      {{"-p", "-1"}, "-p '-1'"},
  };
  for (const Case& c : cases) {
    Recorded run = record(c.args, std::chrono::seconds(30));
    std::string what = c.args[1] + " " + c.args.back();
    EXPECT_EQ(run.exit_code, 2) << what << "\n" << run.errors;
    EXPECT_NE(run.errors.find(c.expected), std::string::npos) << what << "\n" << run.errors;
  }
}

// Boost.Program_options would loop forever formatting its message for these
// words; they are refused before it sees them. After "--" they belong to the
// command and are not looked at.
TEST(RecorderOptionWords, PlaceholdersInAnOptionWordAreRefusedNotLoopedOn) {
  for (const std::string word :
       {"--%canonical_option%", "-%canonical_option%", "--%original_token%",
        "--x=%canonical_option%", "--json=%canonical_option%"}) {
    Recorded run = record({word, "--", "true"}, std::chrono::seconds(30));
    EXPECT_EQ(run.exit_code, 2) << word << "\n" << run.errors;
    EXPECT_NE(run.errors.find("'" + word + "' is not an option"), std::string::npos) << word << "\n"
                                                                                     << run.errors;
  }
}

TEST(RecorderLockProbe, AProbeThatCannotWorkFailsInsteadOfDroppingLockTracing) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("probe.trace");
  { std::ofstream(path) << "kept"; }
  struct Case {
    std::string probe, expected;
  } cases[] = {
      {"/no/such/binary:lock:unlock", "--lock-probe: /no/such/binary: No such file or directory"},
      {"/etc/hostname:lock:unlock", "--lock-probe"},  // not an ELF file
      {"/bin/true:no_such_lock:no_such_unlock", "no symbol 'no_such_lock' in /bin/true"},
  };
  for (const Case& c : cases) {
    Recorded run = record({"-o", path, "--lock-probe", c.probe, "--", "/bin/true"});
    EXPECT_EQ(run.exit_code, 2) << c.probe << "\n" << run.errors;
    EXPECT_NE(run.errors.find(c.expected), std::string::npos) << c.probe << "\n" << run.errors;
    EXPECT_EQ(slurp(path), "kept");
  }
}

TEST(RecorderLockCalls, AnUnknownWayIsRefused) {
  Recorded run =
      record({"--locks", "all", "--lock-calls", "ptrace", "--", "true"}, std::chrono::seconds(30));
  EXPECT_EQ(run.exit_code, 2) << run.errors;
  EXPECT_NE(run.errors.find("--lock-calls ptrace: expected preload or uprobes"), std::string::npos)
      << run.errors;
}

// Where cgroup2 is mounted: /sys/fs/cgroup, or /sys/fs/cgroup/unified beside v1.
TEST(RecorderCgroup, ADirectoryThatIsNotACgroupIsRefused) {
  Recorded run = record({"--cgroup", "/tmp", "-d", "1"}, std::chrono::seconds(30));
  EXPECT_EQ(run.exit_code, 2) << run.errors;
  EXPECT_NE(run.errors.find("--cgroup /tmp: not a cgroup v2 directory"), std::string::npos)
      << run.errors;
}

TEST(RecorderCgroup, AParentCgroupRecordsTheProcessesOfItsChildren) {
  INCISE_REQUIRE_RECORDING();
  std::string mount = cgroup2Mount();
  if (mount.empty()) GTEST_SKIP() << "no cgroup2 mount";
  fs::path parent = fs::path(mount) / ("incise-hardening-" + std::to_string(getpid()));
  fs::path child = parent / "service";
  std::error_code ec;
  fs::create_directories(child, ec);
  ASSERT_FALSE(ec) << ec.message();
  ChildProcess workload = ChildProcess::start(
      {INCISE_WORKLOADS_DIR "/cpu_shares", "--seconds", "30", "--threads", "1"});
  ASSERT_GT(workload.pid(), 0);
  { std::ofstream(child / "cgroup.procs") << workload.pid(); }
  std::string path = tempTracePath("cgroup.trace");
  Recorded run = record({"--cgroup", parent.string(), "-F", "99", "-d", "3", "-o", path});
  workload.signal(SIGKILL);
  workload.waitFor(std::chrono::seconds(30));
  EXPECT_EQ(run.exit_code, 0) << run.errors;
  TraceView trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error();
  uint64_t workload_samples = 0, others = 0;
  for (const auto& s : trace.rows<format::CpuSample>()) {
    (s.pid == static_cast<uint64_t>(workload.pid()) ? workload_samples : others) += 1;
  }
  EXPECT_GT(workload_samples, 50u) << "the child cgroup's process was not recorded";
  EXPECT_EQ(others, 0u) << "samples from outside the cgroup";
  fs::remove(child);
  fs::remove(parent);
}

// The recorder's ambient capabilities must not reach the command it runs.
TEST(RecorderCapabilities, TheCommandRunsWithoutTheRecordersAmbientCapabilities) {
  INCISE_REQUIRE_RECORDING();
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  ASSERT_EQ(syscall(SYS_capget, &header, data), 0);
  const __user_cap_data_struct saved[2] = {data[0], data[1]};
  data[0].inheritable |= 1u << CAP_NET_RAW;
  ASSERT_EQ(syscall(SYS_capset, &header, data), 0);
  ASSERT_EQ(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_RAW, 0, 0), 0);
  std::ifstream self("/proc/self/status");
  std::string line, mine;
  while (std::getline(self, line))
    if (line.rfind("CapAmb:", 0) == 0) mine = line;
  std::string path = tempTracePath("ambient.trace");
  std::string seen = tempTracePath("ambient.txt");
  Recorded run =
      record({"-o", path, "--", "/bin/sh", "-c", "grep CapAmb /proc/self/status > " + seen});
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_data_struct restore[2] = {saved[0], saved[1]};
  syscall(SYS_capset, &header, restore);
  ASSERT_NE(mine.find("0000000000002000"), std::string::npos)
      << "the test could not raise " << mine;
  EXPECT_EQ(run.exit_code, 0) << run.errors;
  EXPECT_EQ(slurp(seen), "CapAmb:\t0000000000000000\n");
}

// --max-size bounds the file the recording leaves, symbol tables included.
TEST(RecorderMaxSize, TheTraceEndsWithinTheSize) {
  INCISE_REQUIRE_RECORDING();
  std::string path = tempTracePath("max-size.trace");
  ChildProcess workload = ChildProcess::start(
      {INCISE_WORKLOADS_DIR "/cpu_shares", "--seconds", "120", "--threads", "2"});
  Recorded run = record({"-a", "-F", "999", "--sched-stacks", "all", "--max-size", "1", "-o", path},
                        std::chrono::seconds(180));
  workload.signal(SIGKILL);
  workload.waitFor(std::chrono::seconds(30));
  ASSERT_EQ(run.exit_code, 0) << run.errors;
  EXPECT_NE(run.errors.find("reached --max-size"), std::string::npos) << run.errors;
  uint64_t size = fs::file_size(path);
  EXPECT_LE(size, uint64_t{1} << 20) << "--max-size 1 left " << size << " bytes";
  EXPECT_GT(size, uint64_t{1} << 19) << "stopped far short of the size";
  TraceCheck check = checkTrace(path);
  EXPECT_TRUE(check.problem.empty()) << check.problem;
}

}  // namespace
}  // namespace incise::testing
