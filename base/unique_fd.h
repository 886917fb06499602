// UniqueFd: sole owner of a file descriptor, closed when the owner goes.
//
//   UniqueFd fd(open(path, O_RDONLY | O_CLOEXEC));
//   if (!fd) return;            // open failed
//   read(fd.get(), ...);        // closed at scope end
#pragma once

#include <unistd.h>

#include <utility>

namespace incise::analyzer {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

}  // namespace incise::analyzer
