#include "recorder/output_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace incise::recorder {
namespace {

std::string errnoText(int error) {
  return std::strerror(error);
}

std::string kindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  return "not a regular file";
}

bool isDevNull(const struct stat& st) {
  return S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
}

// ".NAME.incise-XXXXXX" (NAME cut so that the whole stays a valid file name).
std::string hiddenName(const std::string& entry) {
  static constexpr char kLetters[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  unsigned char random[6] = {};
  if (getrandom(random, sizeof random, 0) != static_cast<ssize_t>(sizeof random)) {
    uint64_t mixed = static_cast<uint64_t>(getpid()) * 0x9E3779B97F4A7C15ull ^
                     reinterpret_cast<uintptr_t>(&entry);
    std::memcpy(random, &mixed, sizeof random);
  }
  std::string name = "." + entry.substr(0, 200) + ".incise-";
  for (unsigned char byte : random) name += kLetters[byte % (sizeof kLetters - 1)];
  return name;
}

// 0 when the file `entry` names is free of locks, else the errno (EWOULDBLOCK
// when another process holds one). A file that cannot be opened to look
// counts as free: only a recorder's own lock is looked for.
int lockHolder(int dir_fd, const std::string& entry, UniqueFd* locked_fd) {
  UniqueFd fd(openat(dir_fd, entry.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) return errno == ENOENT ? ENOENT : 0;
  if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return errno;
  if (locked_fd != nullptr) *locked_fd = std::move(fd);
  return 0;
}

std::string heldMessage(const std::string& name) {
  return "cannot write " + name +
         ": another incise-record is writing it (the file is locked); give another -o";
}

}  // namespace

Result<OutputFile> OutputFile::create(const std::string& name, const Options& options) {
  const std::string prefix = "cannot write " + name + ": ";
  if (name.empty()) return Error("-o needs a file name");
  if (name.back() == '/') return Error(prefix + "a directory, not a file name");
  size_t slash = name.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : name.substr(0, slash);
  OutputFile out;
  out.name_ = name;
  out.entry_ = slash == std::string::npos ? name : name.substr(slash + 1);
  if (out.entry_ == "." || out.entry_ == "..") {
    return Error(prefix + "a directory, not a file name");
  }
  out.dir_fd_.reset(open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!out.dir_fd_) return Error(prefix + errnoText(errno));

  struct stat st {};
  if (fstatat(out.dir_fd_.get(), out.entry_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode)) {
      char target[4096] = {};
      ssize_t n = readlinkat(out.dir_fd_.get(), out.entry_.c_str(), target, sizeof target - 1);
      return Error(prefix + "it is a symbolic link" +
                   (n > 0 ? " (to " + std::string(target, static_cast<size_t>(n)) + ")" : "") +
                   ", and incise-record does not write through links; give the file's own path");
    }
    if (S_ISFIFO(st.st_mode) || isDevNull(st)) {
      // No writability probe before the real open: a probe's close is an
      // EOF that makes the reader exit, and the next open then waits forever.
      UniqueFd fd(openat(out.dir_fd_.get(), out.entry_.c_str(),
                         O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
      if (!fd && errno == ENXIO) {
        return Error(prefix +
                     "it is a FIFO that no process is reading; start the reader first (e.g. cat " +
                     name + " > copy.trace)");
      }
      if (!fd) return Error(prefix + errnoText(errno));
      int flags = fcntl(fd.get(), F_GETFL);
      if (flags < 0 || fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
        return Error(prefix + errnoText(errno));
      }
      out.fd_ = std::move(fd);
      out.kind_ = Kind::kStream;
      out.published_ = true;
      return out;
    }
    if (!S_ISREG(st.st_mode)) {
      return Error(prefix + "it is " + kindOf(st.st_mode) +
                   "; incise-record writes a regular file or a FIFO");
    }
    // Replacing a file takes the right to write it, as truncating it did.
    if (faccessat(out.dir_fd_.get(), out.entry_.c_str(), W_OK, AT_EACCESS) != 0) {
      return Error(prefix + errnoText(errno));
    }
    if (lockHolder(out.dir_fd_.get(), out.entry_, nullptr) == EWOULDBLOCK)
      return Error(heldMessage(name));
  } else if (errno != ENOENT) {
    return Error(prefix + errnoText(errno));
  }

  // A new file of our own, in the same directory (rename(2) cannot cross
  // filesystems).
  int fd = -1;
  if (options.anonymous) {
    fd = openat(out.dir_fd_.get(), ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL && errno != ENOENT) {
      return Error(prefix + "cannot create a file in " + dir + ": " + errnoText(errno));
    }
  }
  if (fd >= 0) {
    out.kind_ = Kind::kAnonymous;
  } else {
    out.kind_ = Kind::kNamedTemporary;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
      out.temporary_ = hiddenName(out.entry_);
      fd = openat(out.dir_fd_.get(), out.temporary_.c_str(),
                  O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
      out.temporary_.clear();
      return Error(prefix + "cannot create a file in " + dir + ": " + errnoText(errno));
    }
  }
  out.fd_.reset(fd);
  // Our own file: private whatever the umask took away or left.
  if (fchmod(fd, 0600) != 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
    return Error(prefix + errnoText(errno));
  }
  return out;
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : name_(std::move(other.name_)),
      entry_(std::move(other.entry_)),
      temporary_(std::exchange(other.temporary_, {})),
      dir_fd_(std::move(other.dir_fd_)),
      fd_(std::move(other.fd_)),
      kind_(other.kind_),
      published_(other.published_) {}

OutputFile::~OutputFile() {
  discard();
}

int OutputFile::takeWriterFd() const {
  return fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0);
}

void OutputFile::discard() {
  if (!published_ && kind_ == Kind::kNamedTemporary && !temporary_.empty() && dir_fd_) {
    unlinkat(dir_fd_.get(), temporary_.c_str(), 0);
    temporary_.clear();
  }
}

// Gives the file the name `entry` in dir_fd_ as well, which must be free:
// link(2) never replaces. 0 or the errno.
int OutputFile::linkAs(const std::string& entry) const {
  if (kind_ == Kind::kAnonymous) {
    // AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; /proc/self/fd works without.
    if (linkat(fd_.get(), "", dir_fd_.get(), entry.c_str(), AT_EMPTY_PATH) == 0) return 0;
    if (errno == EEXIST) return EEXIST;
    std::string self = "/proc/self/fd/" + std::to_string(fd_.get());
    if (linkat(AT_FDCWD, self.c_str(), dir_fd_.get(), entry.c_str(), AT_SYMLINK_FOLLOW) == 0)
      return 0;
    return errno;
  }
  return linkat(dir_fd_.get(), temporary_.c_str(), dir_fd_.get(), entry.c_str(), 0) == 0 ? 0
                                                                                         : errno;
}

Status OutputFile::publish() {
  if (published_) return Status::ok();
  const std::string prefix = "cannot put the trace in place as " + name_ + ": ";
  for (int attempt = 0; attempt < 10; ++attempt) {
    struct stat st {};
    if (fstatat(dir_fd_.get(), entry_.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) return Error(prefix + errnoText(errno));
      // The name is free: take it without replacing whatever may appear meanwhile.
      int linked = linkAs(entry_);
      if (linked == EEXIST) continue;
      if (linked != 0) return Error(prefix + errnoText(linked));
      if (kind_ == Kind::kNamedTemporary) unlinkat(dir_fd_.get(), temporary_.c_str(), 0);
      temporary_.clear();
      published_ = true;
      return Status::ok();
    }
    if (!S_ISREG(st.st_mode)) {
      return Error(prefix + "it became " + kindOf(st.st_mode) + " while recording started");
    }
    // Holding the lock of the file there, no other recorder can put its own
    // trace in place until ours has replaced it.
    UniqueFd old_fd;
    int held = lockHolder(dir_fd_.get(), entry_, &old_fd);
    if (held == EWOULDBLOCK) return Error(heldMessage(name_));
    if (held == ENOENT) continue;
    struct stat locked {};
    if (old_fd && (fstat(old_fd.get(), &locked) != 0 || locked.st_ino != st.st_ino ||
                   locked.st_dev != st.st_dev)) {
      continue;  // replaced between the two looks
    }
    std::string from = temporary_;
    if (kind_ == Kind::kAnonymous) {
      // rename(2) takes a name: give the unnamed file a hidden one first.
      int linked = EEXIST;
      for (int i = 0; i < 100 && linked == EEXIST; ++i) {
        from = hiddenName(entry_);
        linked = linkAs(from);
      }
      if (linked != 0) return Error(prefix + errnoText(linked));
    }
    int renamed = renameat(dir_fd_.get(), from.c_str(), dir_fd_.get(), entry_.c_str());
    int error = errno;
    old_fd.reset();
    if (renamed != 0) {
      if (kind_ == Kind::kAnonymous) unlinkat(dir_fd_.get(), from.c_str(), 0);
      return Error(prefix + errnoText(error));
    }
    temporary_.clear();
    published_ = true;
    return Status::ok();
  }
  return Error(prefix + "the name kept changing while the trace was put in place");
}

}  // namespace incise::recorder
