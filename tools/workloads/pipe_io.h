// pipe_io.h: one byte through a pipe, retried when a signal interrupts it,
// for the workloads whose threads wait on each other through pipes.
#pragma once

#include <unistd.h>

#include <cerrno>

namespace incise::workloads {

// Returns whether a byte was read (false at end of file or on an error).
inline bool read_byte(int fd) {
  char byte = 0;
  ssize_t got = 0;
  do {
    got = read(fd, &byte, 1);
  } while (got < 0 && errno == EINTR);
  return got == 1;
}

// Returns whether the byte was written.
inline bool write_byte(int fd) {
  const char byte = 'x';
  ssize_t put = 0;
  do {
    put = write(fd, &byte, 1);
  } while (put < 0 && errno == EINTR);
  return put == 1;
}

}  // namespace incise::workloads
