#include "base/status.h"

#include <cerrno>
#include <cstring>

namespace incise {

std::string_view errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kUnknown:
      return "unknown";
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kPermissionDenied:
      return "permission denied";
    case ErrorCode::kDataLoss:
      return "data loss";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kIo:
      return "i/o";
  }
  return "unknown";
}

ErrorCode errorCodeFromErrno(int errno_value) {
  switch (errno_value) {
    case ENOENT:
    case ENOTDIR:
    case ESRCH:
      return ErrorCode::kNotFound;
    case EACCES:
    case EPERM:
    case EROFS:
      return ErrorCode::kPermissionDenied;
    case EINVAL:
    case ENAMETOOLONG:
    case ELOOP:
      return ErrorCode::kInvalidArgument;
    case ENOSYS:
    case EOPNOTSUPP:
      return ErrorCode::kUnsupported;
    case ECONNREFUSED:
    case ETIMEDOUT:
    case EHOSTUNREACH:
      return ErrorCode::kUnavailable;
    case EIO:
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return ErrorCode::kIo;
    default:
      return ErrorCode::kUnknown;
  }
}

Error Error::fromErrno(int errno_value, const std::string& what) {
  return Error(errorCodeFromErrno(errno_value), what + ": " + std::strerror(errno_value));
}

}  // namespace incise
