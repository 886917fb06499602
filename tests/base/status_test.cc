// Errors as values: codes survive context, assign-or-return returns the first
// error and hands on the value otherwise.
#include "base/status.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>
#include <string>

namespace incise {
namespace {

Result<int> parsePositive(int value) {
  if (value <= 0)
    return Error(ErrorCode::kInvalidArgument, std::to_string(value) + " is not positive");
  return value;
}

Result<std::unique_ptr<int>> boxed(int value) {
  INCISE_ASSIGN_OR_RETURN(int checked, parsePositive(value));
  return std::make_unique<int>(checked * 10);
}

Result<int> sumOfBoxed(int a, int b) {
  INCISE_ASSIGN_OR_RETURN(std::unique_ptr<int> first, boxed(a));
  INCISE_ASSIGN_OR_RETURN(std::unique_ptr<int> second, boxed(b));
  return *first + *second;
}

Status checkBoth(int a, int b) {
  INCISE_RETURN_IF_ERROR(parsePositive(a));
  INCISE_RETURN_IF_ERROR(sumOfBoxed(a, b));
  return Status();
}

TEST(Status, AssignOrReturnHandsOnValuesMoveOnlyOnesIncluded) {
  Result<int> sum = sumOfBoxed(2, 3);
  ASSERT_TRUE(sum) << sum.error().message();
  EXPECT_EQ(*sum, 50);
}

TEST(Status, AssignOrReturnReturnsTheFirstErrorWithItsCode) {
  Result<int> sum = sumOfBoxed(4, -1);
  ASSERT_FALSE(sum);
  EXPECT_EQ(sum.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(sum.error().message(), "-1 is not positive");
  Status both = checkBoth(1, 0);
  ASSERT_FALSE(both);
  EXPECT_EQ(both.error().message(), "0 is not positive");
  EXPECT_TRUE(checkBoth(1, 2));
}

TEST(Status, ContextKeepsTheCode) {
  Error error = Error(ErrorCode::kDataLoss, "varint runs past end").context("column 3");
  EXPECT_EQ(error.code(), ErrorCode::kDataLoss);
  EXPECT_EQ(error.message(), "column 3: varint runs past end");
  EXPECT_EQ(Error("no code").code(), ErrorCode::kUnknown);
}

TEST(Status, ErrnoValuesMapToCodes) {
  Error missing = Error::fromErrno(ENOENT, "open /nonexistent");
  EXPECT_EQ(missing.code(), ErrorCode::kNotFound);
  EXPECT_EQ(missing.message(), "open /nonexistent: No such file or directory");
  EXPECT_EQ(errorCodeFromErrno(EACCES), ErrorCode::kPermissionDenied);
  EXPECT_EQ(errorCodeFromErrno(ENOSPC), ErrorCode::kIo);
  EXPECT_EQ(errorCodeFromErrno(EBADF), ErrorCode::kUnknown);
  EXPECT_EQ(errorCodeName(ErrorCode::kNotFound), "not found");
}

}  // namespace
}  // namespace incise
