// siteFrameIndex: the frame that names a lock's acquire site is the first
// user frame outside the lock's own code (the C library and loader, Go's
// sync.Mutex, RWMutex and Cond methods).
#include "analyzer/analyses/locks/lock_sites.h"

#include <gtest/gtest.h>

#include <vector>

namespace incise::analyzer {
namespace {

Frame user(const std::string& name, const std::string& module) {
  Frame frame;
  frame.name = name;
  frame.function = name;
  frame.module = module;
  return frame;
}

TEST(LockSites, TheCallerOfTheCLibraryIsTheSite) {
  std::vector<Frame> frames = {user("__lll_lock_wait", "libc.so.6"),
                               user("pthread_mutex_lock", "libc.so.6"),
                               user("update_account", "bank"), user("main", "bank")};
  EXPECT_EQ(siteFrameIndex(frames), 2u);
}

TEST(LockSites, TheCallerOfThePreloadLibrarysWrapperIsTheSite) {
  // --locks all on a command: a contended call's stack crosses the wrapper.
  std::vector<Frame> frames = {user("__lll_lock_wait", "libc.so.6"),
                               user("pthread_mutex_lock", "libc.so.6"),
                               user("pthread_mutex_lock", "libincise-preload.so"),
                               user("update_account", "bank"), user("main", "bank")};
  EXPECT_EQ(siteFrameIndex(frames), 3u);
}

TEST(LockSites, TheCallerOfGoMutexMethodsIsTheSite) {
  std::vector<Frame> frames = {
      user("sync.(*Mutex).lockSlow", "server"), user("sync.(*RWMutex).Lock", "server"),
      user("main.(*stack).handlePacket", "server"), user("main.main.func2", "server")};
  EXPECT_EQ(siteFrameIndex(frames), 2u);
}

TEST(LockSites, TheCallerOfCondWaitIsTheSite) {
  std::vector<Frame> frames = {user("sync.runtime_notifyListWait", "server"),
                               user("sync.(*Cond).Wait", "server"),
                               user("main.(*queue).pop", "server"), user("main.main", "server")};
  EXPECT_EQ(siteFrameIndex(frames), 2u);
}

TEST(LockSites, TheCallerOfAnInlinedRLockIsTheSite) {
  // RLock is inlined: its caller calls the runtime's semaphore directly.
  std::vector<Frame> frames = {user("sync.runtime_SemacquireMutex", "server"),
                               user("main.(*cache).get", "server"), user("main.main", "server")};
  EXPECT_EQ(siteFrameIndex(frames), 1u);
}

TEST(LockSites, OtherGoSyncFunctionsAreSites) {
  // sync.(*Once).doSlow is the caller's code, not the mutex's.
  std::vector<Frame> frames = {user("sync.(*Mutex).lockSlow", "server"),
                               user("sync.(*Once).doSlow", "server"), user("main.init", "server")};
  EXPECT_EQ(siteFrameIndex(frames), 1u);
}

TEST(LockSites, AStackOnlyInsideTheLockIsNamedByItsFirstUserFrame) {
  std::vector<Frame> frames = {user("sync.(*Mutex).lockSlow", "server")};
  EXPECT_EQ(siteFrameIndex(frames), 0u);
}

}  // namespace
}  // namespace incise::analyzer
