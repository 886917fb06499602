#include "analyzer/model/thread_names.h"

#include <gtest/gtest.h>

namespace incise::analyzer {
namespace {

TEST(ThreadNamesTest, NamesChangeOverTime) {
  format::Metadata metadata;
  metadata.processes.push_back({42, 1, "server", {}, 100});
  metadata.threads.push_back({43, 42, "worker", 100});
  metadata.threads.push_back({43, 42, "worker-renamed", 500});
  ThreadNames names(metadata);
  EXPECT_EQ(names.threadName(43, 50), "worker");  // before the first record: the first name
  EXPECT_EQ(names.threadName(43, 499), "worker");
  EXPECT_EQ(names.threadName(43, 500), "worker-renamed");
  EXPECT_EQ(names.pidOf(43), 42u);
  EXPECT_EQ(names.pidOf(42), 42u);               // a process's main thread
  EXPECT_EQ(names.threadName(42, 0), "server");  // falls back to the process name
  EXPECT_EQ(names.threadName(7, 0), "");
  EXPECT_EQ(names.pidOf(7), 0u);
}

TEST(ThreadNamesTest, ForkRowsTieChildThreadsToTheirProcess) {
  format::Metadata metadata;
  metadata.processes.push_back({42, 1, "server", {}, 100});
  ThreadNames names(metadata);
  format::ProcessEvent fork{.time = 200,
                            .event = static_cast<uint64_t>(format::ProcessEventType::kFork),
                            .pid = 42,
                            .tid = 42,
                            .peer_pid = 42,
                            .peer_tid = 44};
  names.addProcessEvent(fork);
  EXPECT_EQ(names.pidOf(44), 42u);
  EXPECT_EQ(names.threadName(44, 300), "server");
  format::ProcessEvent exit_event = fork;
  exit_event.event = static_cast<uint64_t>(format::ProcessEventType::kExit);
  exit_event.peer_tid = 45;
  names.addProcessEvent(exit_event);
  EXPECT_EQ(names.pidOf(45), 0u);
}

}  // namespace
}  // namespace incise::analyzer
