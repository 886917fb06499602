// PreloadSections: the lock rows made from libincise-preload.so's records,
// and the futex waits joined to the calls they happened in, whichever of the
// two reaches the recorder first.
#include "recorder/sources/preload_sections.h"

#include <gtest/gtest.h>

#include <vector>

namespace incise::recorder {
namespace {

using format::LockInterval;
using preload::Record;
using preload::RecordKind;
using preload::RecordType;

constexpr uint32_t kPid = 100;
constexpr uint32_t kTid = 101;
constexpr uint64_t kMutex = 0x5000;
constexpr uint64_t kSiteStack = 77;

struct Fixture {
  std::vector<LockInterval> rows;
  PreloadSections sections{[this](const LockInterval& row) { rows.push_back(row); },
                           [](uint32_t, uint64_t site) { return site == 0 ? 0 : kSiteStack; }};

  void acquire(uint64_t request, uint64_t time, RecordKind kind = RecordKind::kMutex,
               RecordType type = RecordType::kAcquire, uint32_t tid = kTid) {
    ASSERT_TRUE(sections.onRecord(kPid, tid,
                                  Record{.time = time,
                                         .request = request,
                                         .address = kMutex,
                                         .site = 0x401000,
                                         .type = static_cast<uint16_t>(type),
                                         .kind = static_cast<uint16_t>(kind),
                                         .reserved = 0}));
  }
  void release(uint64_t time, uint32_t tid = kTid) {
    ASSERT_TRUE(sections.onRecord(
        kPid, tid,
        Record{
            .time = time, .address = kMutex, .type = static_cast<uint16_t>(RecordType::kRelease)}));
  }
};

LockInterval futexWait(uint64_t block, uint64_t end, uint32_t holder, uint32_t releaser,
                       uint64_t stack) {
  return LockInterval{.time = block,
                      .acquired_time = end,
                      .pid = kPid,
                      .tid = kTid,
                      .address = kMutex,
                      .lock_kind = static_cast<uint64_t>(format::LockKind::kFutex),
                      .flags = format::kLockContended | format::kLockContendedOnly |
                               format::kLockFutexFacts | format::kLockHolderChecked,
                      .stack_id = stack,
                      .releaser_tid = releaser,
                      .holder_tid = holder};
}

TEST(PreloadSections, AnUncontendedSectionIsOneRowAtItsCallSite) {
  Fixture f;
  f.acquire(1000, 1100);
  f.release(5000);
  ASSERT_EQ(f.rows.size(), 1u);
  EXPECT_EQ(f.rows[0].time, 1000u);
  EXPECT_EQ(f.rows[0].acquired_time, 1100u);
  EXPECT_EQ(f.rows[0].release_time, 5000u);
  EXPECT_EQ(f.rows[0].lock_kind, static_cast<uint64_t>(format::LockKind::kMutex));
  EXPECT_EQ(f.rows[0].flags, 0u);
  EXPECT_EQ(f.rows[0].stack_id, kSiteStack);
}

TEST(PreloadSections, ARecursiveAcquireFoldsIntoTheOuterSection) {
  Fixture f;
  f.acquire(1000, 1100);
  f.acquire(1200, 1300);
  f.release(1400);
  EXPECT_TRUE(f.rows.empty());
  f.release(1500);
  ASSERT_EQ(f.rows.size(), 1u);
  EXPECT_EQ(f.rows[0].release_time, 1500u);
  EXPECT_TRUE(f.rows[0].flags & format::kLockRecursive);
}

TEST(PreloadSections, AFailedTrylockIsARowOfItsOwn) {
  Fixture f;
  f.acquire(1000, 1050, RecordKind::kSpin, RecordType::kTryFailed);
  ASSERT_EQ(f.rows.size(), 1u);
  EXPECT_TRUE(f.rows[0].flags & format::kLockTryFailed);
  EXPECT_EQ(f.rows[0].release_time, 1050u);
  EXPECT_EQ(f.rows[0].lock_kind, static_cast<uint64_t>(format::LockKind::kSpin));
}

TEST(PreloadSections, WaitsAfterTheirCallJoinItWithTheFirstHolderAndTheLastReleaser) {
  Fixture f;
  f.acquire(1000, 900'000);
  f.release(950'000);
  EXPECT_TRUE(f.rows.empty()) << "a call that may have waited is held for its waits";
  EXPECT_TRUE(f.sections.claimWait(futexWait(2000, 400'000, 7, 8, 55), 0));
  EXPECT_TRUE(f.sections.claimWait(futexWait(401'000, 890'000, 9, 10, 56), 0));
  f.sections.flush(1'000'000);
  EXPECT_TRUE(f.rows.empty()) << "later waits may still come";
  // A wait that ended past the join window says every earlier one has come.
  EXPECT_FALSE(f.sections.claimWait(futexWait(PreloadSections::kJoinWindowNs + 2'000'000,
                                              PreloadSections::kJoinWindowNs + 3'000'000, 0, 0, 0),
                                    0));
  f.sections.flush(PreloadSections::kJoinWindowNs + 3'000'000);
  ASSERT_EQ(f.rows.size(), 1u);
  const LockInterval& row = f.rows[0];
  EXPECT_TRUE(row.flags & format::kLockContended);
  EXPECT_TRUE(row.flags & format::kLockHolderChecked);
  EXPECT_FALSE(row.flags & format::kLockFutexFacts);
  EXPECT_EQ(row.lock_kind, static_cast<uint64_t>(format::LockKind::kMutex));
  EXPECT_EQ(row.holder_tid, 7u);
  EXPECT_EQ(row.releaser_tid, 10u);
  EXPECT_EQ(row.stack_id, 55u);
  EXPECT_EQ(row.release_time, 950'000u);
}

TEST(PreloadSections, AWaitBeforeItsCallsRecordIsKeptForIt) {
  Fixture f;
  EXPECT_TRUE(f.sections.claimWait(futexWait(2000, 400'000, 7, 8, 55), /*call_request=*/1000));
  f.acquire(1000, 410'000);
  f.release(420'000);
  f.sections.finish();
  ASSERT_EQ(f.rows.size(), 1u);
  EXPECT_EQ(f.rows[0].holder_tid, 7u);
  EXPECT_EQ(f.rows[0].releaser_tid, 8u);
  EXPECT_TRUE(f.rows[0].flags & format::kLockContended);
}

TEST(PreloadSections, AWaitOutsideEveryCallStaysAWaitRow) {
  Fixture f;
  f.acquire(1000, 1100);
  f.release(1200);
  EXPECT_FALSE(f.sections.claimWait(futexWait(5000, 9000, 7, 8, 55), 0));
  // In a later call than the wait: not that call's.
  EXPECT_FALSE(f.sections.claimWait(futexWait(5000, 9000, 7, 8, 55), /*call_request=*/6000));
}

TEST(PreloadSections, ASlowCallWithoutAWaitIsContended) {
  Fixture f;
  f.acquire(1000, 1000 + PreloadSections::kContendedNs + 1, RecordKind::kSpin);
  f.release(200'000);
  f.sections.finish();
  ASSERT_EQ(f.rows.size(), 1u);
  EXPECT_TRUE(f.rows[0].flags & format::kLockContended);
  EXPECT_EQ(f.rows[0].holder_tid, 0u);
}

TEST(PreloadSections, MalformedRecordsAreRefused) {
  Fixture f;
  EXPECT_FALSE(f.sections.onRecord(kPid, kTid, Record{.time = 5, .type = 99}));
  EXPECT_FALSE(f.sections.onRecord(
      kPid, kTid,
      Record{.time = 5, .type = static_cast<uint16_t>(RecordType::kAcquire), .kind = 42}));
  EXPECT_FALSE(f.sections.onRecord(kPid, kTid,
                                   Record{.time = 5,
                                          .request = 9,
                                          .type = static_cast<uint16_t>(RecordType::kAcquire),
                                          .kind = static_cast<uint16_t>(RecordKind::kMutex)}));
  f.sections.finish();
  EXPECT_TRUE(f.rows.empty());
}

TEST(PreloadSections, OpenSectionsAreWrittenUnreleasedAtTheEnd) {
  Fixture f;
  f.acquire(1000, 1100);
  f.sections.finish();
  ASSERT_EQ(f.rows.size(), 1u);
  EXPECT_EQ(f.rows[0].release_time, 0u);
}

}  // namespace
}  // namespace incise::recorder
