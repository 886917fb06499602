// OutputFile: the file incise-record writes (-o), opened so that nothing
// already there is harmed, and nothing is lost, until the recording is known
// to work.
//
// A trace is written as a new private file in the directory of the name
// given: an unnamed O_TMPFILE where the filesystem has them, else a hidden
// ".NAME.incise-XXXXXX" made with O_EXCL; mode 0600 either way, and held
// with an exclusive flock for as long as the recorder runs. publish() puts
// it in place with rename(2) once the recording has started, so until then a
// file of that name is left as it was: a command that cannot run, or a
// recorder stopped or failing during start-up, replaces nothing. A file
// that was there is only ever replaced, never truncated, chmod'ed or
// written through, and a name another incise-record is writing (its flock
// is held) is refused. The name itself must not be a symbolic link: the
// recorder never follows a link it did not create (one planted in /tmp
// would point root's writes at a file of the planter's choosing).
//
// A FIFO is written as a stream, straight into it (the writer then merges
// no small chunks), once a reader has it open; /dev/null likewise. Anything
// else (a directory, a device, a socket) is refused by name.
//
//   Result<OutputFile> out = OutputFile::create("app.trace");
//   if (!out) die(out.error().message());   // "app.trace: is a symbolic link ..."
//   auto writer = format::Writer::create(out->takeWriterFd(), out->name(), header);
//   ... attach, start the command ...
//   if (Status s = out->publish(); !s) die(s.message());   // now app.trace is this trace
//   ... record, close the writer; ~OutputFile releases the lock
#pragma once

#include <string>

#include "base/status.h"
#include "base/unique_fd.h"

namespace incise::recorder {

class OutputFile {
 public:
  struct Options {
    // O_TMPFILE when the filesystem supports it; tests turn it off to
    // exercise the named temporary file.
    bool anonymous = true;
  };
  static Result<OutputFile> create(const std::string& name, const Options& options);
  static Result<OutputFile> create(const std::string& name) { return create(name, Options{}); }
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  ~OutputFile();  // discards a file never published; releases the lock

  const std::string& name() const { return name_; }
  // A second descriptor of the file for the writer, which owns and closes
  // it; the lock stays with this object.
  int takeWriterFd() const;
  bool isStream() const { return kind_ == Kind::kStream; }
  bool published() const { return published_; }

  // Makes the trace the file `name` (atomically replacing what was there).
  // Fails, and leaves `name` alone, if another incise-record took the name
  // in the meantime. A stream is in place from the start.
  Status publish();
  // Removes the file if it was never published (a failed start).
  void discard();

 private:
  enum class Kind { kAnonymous, kNamedTemporary, kStream };
  OutputFile() = default;
  int linkAs(const std::string& entry) const;

  std::string name_;       // as given
  std::string entry_;      // its last component, in dir_fd_
  std::string temporary_;  // kNamedTemporary: the hidden name, in dir_fd_
  UniqueFd dir_fd_;
  UniqueFd fd_;
  Kind kind_ = Kind::kAnonymous;
  bool published_ = false;
};

}  // namespace incise::recorder
