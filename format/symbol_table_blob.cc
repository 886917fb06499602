// Column-wise symbol blobs: writing them, and reading them with a bound on
// every count and length.
#include "format/symbol_table_blob.h"

#include "format/codecs/varint.h"

namespace incise::format {
namespace {

using codecs::getVarint;
using codecs::putVarint;

void appendVarint(std::string& out, uint64_t value) {
  uint8_t buffer[codecs::kMaxVarintBytes];
  out.append(reinterpret_cast<const char*>(buffer),
             static_cast<size_t>(putVarint(buffer, value) - buffer));
}

template <typename T, typename Field>
void appendAddresses(std::string& out, const std::vector<T>& symbols, Field field) {
  uint64_t previous = 0;
  for (const T& s : symbols) {
    appendVarint(out, codecs::zigzag(field(s) - previous));
    previous = field(s);
  }
}

template <typename T, typename Field>
void appendStrings(std::string& out, const std::vector<T>& symbols, Field field) {
  for (const T& s : symbols) {
    const std::string& text = field(s);
    appendVarint(out, text.size());
    out += text;
  }
}

// Reads the blob front to back; every read is bounded by its end.
class BlobReader {
 public:
  explicit BlobReader(codecs::ByteSpan blob) : p_(blob.data()), end_(blob.data() + blob.size()) {}

  Result<uint64_t> varint(const char* what) {
    uint64_t value;
    if (!getVarint(p_, end_, value)) return Error(std::string(what) + " runs past the end");
    return value;
  }
  // The symbol count, which cannot exceed the bytes left (each symbol takes
  // at least `min_bytes`): bounds the vector before it is sized.
  Result<size_t> count(size_t min_bytes) {
    INCISE_ASSIGN_OR_RETURN(uint64_t n, varint("symbol count"));
    if (n > static_cast<size_t>(end_ - p_) / min_bytes) {
      return Error("symbol count " + std::to_string(n) + " exceeds what " +
                   std::to_string(end_ - p_) + " bytes can hold");
    }
    return static_cast<size_t>(n);
  }
  Status addresses(size_t n, std::vector<uint64_t>& out) {
    out.resize(n);
    uint64_t previous = 0;
    for (auto& address : out) {
      INCISE_ASSIGN_OR_RETURN(uint64_t d, varint("address"));
      previous += codecs::unzigzag(d);
      address = previous;
    }
    return Status::ok();
  }
  Result<std::string> text(const char* what) {
    INCISE_ASSIGN_OR_RETURN(uint64_t length, varint(what));
    if (length > static_cast<uint64_t>(end_ - p_)) {
      return Error(std::string(what) + " of " + std::to_string(length) +
                   " bytes runs past the end");
    }
    std::string out(reinterpret_cast<const char*>(p_), static_cast<size_t>(length));
    p_ += length;
    return out;
  }
  Status finished() const {
    if (p_ != end_) return Error(std::to_string(end_ - p_) + " trailing bytes in a symbol table");
    return Status::ok();
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

}  // namespace

std::string encodeKernelSymbols(const std::vector<KernelSymbol>& symbols) {
  std::string out;
  appendVarint(out, symbols.size());
  appendAddresses(out, symbols, [](const KernelSymbol& s) { return s.address; });
  appendStrings(out, symbols, [](const KernelSymbol& s) -> const std::string& { return s.name; });
  appendStrings(out, symbols, [](const KernelSymbol& s) -> const std::string& { return s.module; });
  return out;
}

Result<std::vector<KernelSymbol>> decodeKernelSymbols(codecs::ByteSpan blob) {
  BlobReader in(blob);
  Result<size_t> n = in.count(/*address, name and module lengths*/ 3);
  if (!n) return n.error().context("kernel symbols");
  std::vector<uint64_t> addresses;
  Status s = in.addresses(*n, addresses);
  if (!s) return s.error().context("kernel symbols");
  std::vector<KernelSymbol> out(*n);
  for (size_t i = 0; i < *n; ++i) {
    out[i].address = addresses[i];
    INCISE_ASSIGN_OR_RETURN(std::string name, in.text("kernel symbol name"));
    out[i].name = std::move(name);
  }
  for (auto& symbol : out) {
    INCISE_ASSIGN_OR_RETURN(std::string module, in.text("kernel symbol module"));
    symbol.module = std::move(module);
  }
  INCISE_RETURN_IF_ERROR(in.finished());
  return out;
}

std::string encodeSymbols(const std::vector<Symbol>& symbols) {
  std::string out;
  appendVarint(out, symbols.size());
  appendAddresses(out, symbols, [](const Symbol& s) { return s.address; });
  for (const Symbol& s : symbols) appendVarint(out, s.size);
  appendStrings(out, symbols, [](const Symbol& s) -> const std::string& { return s.name; });
  return out;
}

Result<std::vector<Symbol>> decodeSymbols(codecs::ByteSpan blob) {
  BlobReader in(blob);
  Result<size_t> n = in.count(/*address, size and name length*/ 3);
  if (!n) return n.error().context("symbols");
  std::vector<uint64_t> addresses;
  Status s = in.addresses(*n, addresses);
  if (!s) return s.error().context("symbols");
  std::vector<Symbol> out(*n);
  for (size_t i = 0; i < *n; ++i) {
    out[i].address = addresses[i];
    INCISE_ASSIGN_OR_RETURN(uint64_t size, in.varint("symbol size"));
    out[i].size = size;
  }
  for (auto& symbol : out) {
    INCISE_ASSIGN_OR_RETURN(std::string name, in.text("symbol name"));
    symbol.name = std::move(name);
  }
  INCISE_RETURN_IF_ERROR(in.finished());
  return out;
}

}  // namespace incise::format
