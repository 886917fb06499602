// Golden bytes and hostile input for every column codec.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "format/codecs/codec.h"

namespace incise::format::codecs {
namespace {

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : bytes) {
    if (!out.empty()) out += ' ';
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string encode(Encoding id, const std::vector<uint64_t>& values) {
  std::string out;
  Registry::instance().encoding(id)->encode(values, out);
  return out;
}

TEST(VarintCodec, GoldenBytes) {
  EXPECT_EQ(hex(encode(Encoding::kVarint, {1, 127, 128, 300})), "01 7F 80 01 AC 02");
  EXPECT_EQ(hex(encode(Encoding::kVarint, {UINT64_MAX})), "FF FF FF FF FF FF FF FF FF 01");
}

TEST(DeltaVarintCodec, GoldenBytes) {
  EXPECT_EQ(hex(encode(Encoding::kDeltaVarint, {1000, 1003, 1001, 1001})), "D0 0F 06 03 00");
}

// Differences from the base column come in; zigzag keeps small ones small.
TEST(BaseDeltaCodec, GoldenBytes) {
  EXPECT_EQ(hex(encode(Encoding::kBaseDelta, {0, uint64_t(-1), 0, 64})), "00 01 00 80 01");
}

TEST(Fixed64Codec, GoldenBytes) {
  EXPECT_EQ(hex(encode(Encoding::kFixed64, {1, 0x1122334455667788})),
            "01 00 00 00 00 00 00 00 88 77 66 55 44 33 22 11");
}

TEST(PeriodDeltaCodec, GoldenBytes) {
  // Differences 1000, 1000, 1010, 980: period 1000 (their median), multiples
  // 1 1 1 1, remainders 0 0 10 -20 (zigzag 0 0 20 39) in one byte plane.
  EXPECT_EQ(hex(encode(Encoding::kPeriodDelta, {1000, 2000, 3010, 3990})),
            "E8 07 01 02 02 02 02 00 00 14 27");
  // No positive difference: period 1, every remainder 0, no planes.
  EXPECT_EQ(hex(encode(Encoding::kPeriodDelta, {5, 5, 3})), "01 00 0A 00 03");
  EXPECT_EQ(encode(Encoding::kPeriodDelta, {}), "");
}

TEST(PeriodDeltaCodec, TicksOfTwoCpusTakeFewerBytesThanDeltaVarint) {
  // A cpu's samples one period apart with a few microseconds of jitter and
  // an occasional skipped tick: what grouping rows by cpu hands the codec.
  std::mt19937_64 rng(3);
  std::vector<uint64_t> times;
  uint64_t t = 40'000'000'000'000;
  for (int i = 0; i < 2000; ++i) {
    t += (rng() % 8 == 0 ? 2 : 1) * 1'001'001 + rng() % 8000 - 4000;
    times.push_back(t);
  }
  std::string period = encode(Encoding::kPeriodDelta, times);
  std::string delta = encode(Encoding::kDeltaVarint, times);
  // Stored, i.e. after zstd: the remainder planes are larger raw than
  // varints but code closer to their entropy.
  const Compressor* zstd = Registry::instance().compression(Compression::kZstd);
  std::string period_stored, delta_stored;
  ASSERT_TRUE(zstd->compress(asBytes(period), 3, period_stored));
  ASSERT_TRUE(zstd->compress(asBytes(delta), 3, delta_stored));
  EXPECT_LT(period_stored.size() * 10, delta_stored.size() * 9)
      << period_stored.size() << " vs " << delta_stored.size();
  std::vector<uint64_t> back;
  ASSERT_TRUE(Registry::instance()
                  .encoding(Encoding::kPeriodDelta)
                  ->decode(asBytes(period), times.size(), back));
  EXPECT_EQ(back, times);
}

TEST(PeriodDeltaCodec, ExtremeDifferencesRoundTrip) {
  const ValueCodec* codec = Registry::instance().encoding(Encoding::kPeriodDelta);
  std::vector<std::vector<uint64_t>> cases = {
      {UINT64_MAX, 0, UINT64_MAX, 1, uint64_t{1} << 63, 0},
      {0, uint64_t{1} << 63, 3, (uint64_t{1} << 63) + 5, UINT64_MAX - 1},
      {7},
      {0, INT64_MAX, 0, INT64_MAX},
  };
  for (const auto& values : cases) {
    std::string bytes;
    codec->encode(values, bytes);
    std::vector<uint64_t> back;
    ASSERT_TRUE(codec->decode(asBytes(bytes), values.size(), back));
    EXPECT_EQ(back, values);
  }
}

TEST(PeriodDeltaCodec, RejectsZeroPeriodAndWideRemainders) {
  const ValueCodec* codec = Registry::instance().encoding(Encoding::kPeriodDelta);
  std::vector<uint64_t> back;
  EXPECT_FALSE(codec->decode(asBytes(std::string("\x00\x00\x02", 3)), 1, back));  // period 0
  EXPECT_FALSE(codec->decode(asBytes(std::string("\x01\x09\x02", 3)), 1, back));  // width 9
  // Width 2 for one value needs two remainder bytes, not one.
  EXPECT_FALSE(codec->decode(asBytes(std::string("\x01\x02\x02\x05", 4)), 1, back));
}

TEST(ConstantCodec, GoldenBytesAndRowsFromTheCaller) {
  const ValueCodec* codec = Registry::instance().encoding(Encoding::kConstant);
  EXPECT_EQ(hex(encode(Encoding::kConstant, {1001001, 1001001, 1001001})), "A9 8C 3D");
  std::vector<uint64_t> back;
  ASSERT_TRUE(codec->decode(asBytes(std::string("\xA9\x8C\x3D", 3)), 4, back));
  EXPECT_EQ(back, std::vector<uint64_t>(4, 1001001));
}

TEST(ConstantCodec, RejectsShortTrailingAndHugeCounts) {
  const ValueCodec* codec = Registry::instance().encoding(Encoding::kConstant);
  std::vector<uint64_t> back;
  EXPECT_FALSE(codec->decode(asBytes(std::string()), 3, back));
  EXPECT_FALSE(codec->decode(asBytes(std::string("\x80", 1)), 3, back));      // truncated varint
  EXPECT_FALSE(codec->decode(asBytes(std::string("\x05\x05", 2)), 3, back));  // trailing byte
  EXPECT_FALSE(codec->decode(asBytes(std::string(11, '\x80')), 3, back));     // overlong
  // Its bytes do not bound its rows: the codec's own limit does, before any allocation.
  EXPECT_FALSE(codec->decode(asBytes(std::string("\x05", 1)), kMaxConstantValues + 1, back));
  EXPECT_TRUE(codec->decode(asBytes(std::string("\x05", 1)), kMaxConstantValues, back));
  EXPECT_EQ(back.size(), kMaxConstantValues);
}

TEST(ConstantCodec, SurvivesRandomBytes) {
  const ValueCodec* codec = Registry::instance().encoding(Encoding::kConstant);
  std::mt19937_64 rng(11);
  std::vector<uint64_t> back;
  for (int round = 0; round < 2000; ++round) {
    std::string junk(rng() % 16, '\0');
    for (auto& c : junk) c = static_cast<char>(rng());
    Status s = codec->decode(asBytes(junk), rng() % 80, back);
    if (!s) continue;
    EXPECT_TRUE(std::all_of(back.begin(), back.end(), [&](uint64_t v) { return v == back[0]; }));
  }
}

TEST(NoCompression, GoldenBytes) {
  std::string out;
  std::string in("\x01\x7f\x80\x01", 4);
  ASSERT_TRUE(Registry::instance().compression(Compression::kNone)->compress(asBytes(in), 3, out));
  EXPECT_EQ(out, in);
}

TEST(ZstdCompression, GoldenFrameOfZeros) {
  const Compressor* zstd = Registry::instance().compression(Compression::kZstd);
  std::string zeros(1000, '\0');
  std::string frame;
  ASSERT_TRUE(zstd->compress(asBytes(zeros), 3, frame));
  // Magic FD2FB528 little-endian, then a frame that is far smaller than its content.
  ASSERT_GE(frame.size(), 4u);
  EXPECT_EQ(hex(frame.substr(0, 4)), "28 B5 2F FD");
  EXPECT_LT(frame.size(), 20u);
  std::string back;
  ASSERT_TRUE(zstd->decompress(asBytes(frame), zeros.size(), back));
  EXPECT_EQ(back, zeros);
}

TEST(ZstdCompression, RejectsWrongRawSizeAndGarbage) {
  const Compressor* zstd = Registry::instance().compression(Compression::kZstd);
  std::string data(5000, 'x');
  std::string frame, back;
  ASSERT_TRUE(zstd->compress(asBytes(data), 3, frame));
  Status small = zstd->decompress(asBytes(frame), 4999, back);
  EXPECT_FALSE(small);
  EXPECT_FALSE(zstd->decompress(asBytes(frame), 5001, back));
  EXPECT_FALSE(zstd->decompress(asBytes(frame), kMaxRawColumnBytes + 1, back));
  EXPECT_FALSE(zstd->decompress(asBytes(std::string("garbage!")), 8, back));
  EXPECT_FALSE(zstd->decompress(asBytes(frame.substr(0, frame.size() / 2)), 5000, back));
}

class ValueCodecTest : public ::testing::TestWithParam<Encoding> {};

TEST_P(ValueCodecTest, RoundTripsRandomValues) {
  const ValueCodec* codec = Registry::instance().encoding(GetParam());
  std::mt19937_64 rng(42);
  for (int round = 0; round < 50; ++round) {
    std::vector<uint64_t> values(rng() % 2000);
    int bits = static_cast<int>(rng() % 64) + 1;
    for (auto& v : values) v = rng() >> (64 - bits);
    std::string bytes;
    codec->encode(values, bytes);
    std::vector<uint64_t> back;
    ASSERT_TRUE(codec->decode(asBytes(bytes), values.size(), back));
    EXPECT_EQ(back, values);
  }
}

TEST_P(ValueCodecTest, RejectsShortTrailingAndWrongCounts) {
  const ValueCodec* codec = Registry::instance().encoding(GetParam());
  std::vector<uint64_t> values = {5, 1u << 20, 7, UINT64_MAX, 0};
  std::string bytes;
  codec->encode(values, bytes);
  std::vector<uint64_t> back;
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(codec->decode(asBytes(bytes.substr(0, cut)), values.size(), back)) << cut;
  }
  EXPECT_FALSE(codec->decode(asBytes(bytes + '\x01'), values.size(), back));
  EXPECT_FALSE(codec->decode(asBytes(bytes), values.size() + 1, back));
  EXPECT_FALSE(codec->decode(asBytes(bytes), values.size() - 1, back));
  // A huge claimed count is refused before any allocation.
  EXPECT_FALSE(codec->decode(asBytes(bytes), size_t{1} << 60, back));
}

TEST_P(ValueCodecTest, SurvivesRandomBytes) {
  const ValueCodec* codec = Registry::instance().encoding(GetParam());
  std::mt19937_64 rng(7);
  std::vector<uint64_t> back;
  for (int round = 0; round < 2000; ++round) {
    std::string junk(rng() % 64, '\0');
    for (auto& c : junk) c = static_cast<char>(rng());
    Status s = codec->decode(asBytes(junk), rng() % 80, back);
    (void)s;  // any answer but a crash is fine
  }
}

INSTANTIATE_TEST_SUITE_P(AllEncodings, ValueCodecTest,
                         ::testing::Values(Encoding::kVarint, Encoding::kDeltaVarint,
                                           Encoding::kFixed64, Encoding::kPeriodDelta,
                                           Encoding::kBaseDelta));

TEST(VarintCodec, RejectsOverlongEncodings) {
  const ValueCodec* codec = Registry::instance().encoding(Encoding::kVarint);
  std::vector<uint64_t> back;
  // Eleven continuation bytes, and a tenth byte carrying bits past 64.
  EXPECT_FALSE(codec->decode(asBytes(std::string(11, '\x80')), 1, back));
  EXPECT_FALSE(codec->decode(asBytes(std::string(9, '\xFF') + '\x02'), 1, back));
}

class FakeCodec : public ValueCodec {
 public:
  Encoding id() const override { return Encoding::kVarint; }
  std::string_view name() const override { return "fake"; }
  size_t minBytesPerValue() const override { return 1; }
  size_t maxBytesPerValue() const override { return 1; }

 private:
  size_t doEncode(std::span<const uint64_t>, uint8_t*) const override { return 0; }
  Result<size_t> doDecode(ByteSpan, size_t, uint64_t*) const override { return size_t{0}; }
};

TEST(Registry, RejectsDuplicateIds) {
  Registry registry;
  registerVarintCodec(registry);
  Status again = registry.add(std::make_unique<FakeCodec>());
  ASSERT_FALSE(again);
  EXPECT_NE(again.message().find("registered twice"), std::string::npos);
  EXPECT_EQ(registry.encoding(Encoding::kVarint)->name(), "varint");
  EXPECT_EQ(registry.encoding(Encoding::kFixed64), nullptr);
}

TEST(Registry, KnowsEveryEncodingTheEventModelUses) {
  for (EventKind kind : kAllEventKinds) {
    const KindSpec* spec = kindSpec(kind);
    ASSERT_NE(spec, nullptr);
    for (uint16_t i = 0; i < spec->column_count; ++i) {
      EXPECT_NE(Registry::instance().encoding(spec->columns[i].encoding), nullptr);
    }
  }
  EXPECT_NE(Registry::instance().compression(Compression::kZstd), nullptr);
  EXPECT_NE(Registry::instance().compression(Compression::kNone), nullptr);
}

}  // namespace
}  // namespace incise::format::codecs
