// The shard file format refuses truncated, corrupted and foreign files with a message saying which and why.
#include <gtest/gtest.h>

#include "ckpt/shard_file.h"

namespace chorus::train {
namespace {

ShardFile sample() {
  ShardFile s;
  s.header.model.layers = 2;
  s.header.part = ModelPart::whole(s.header.model);
  s.header.layoutSize = 100;
  s.header.ranges = {{0, 3}, {50, 2}};
  s.params = {1, 2, 3, 4, 5};
  s.m = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f};
  s.v = {9, 8, 7, 6, 5};
  return s;
}

std::string refusal(const std::vector<uint8_t>& bytes) {
  try {
    decodeShard(bytes, "f.bin");
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "";
}

TEST(ShardFile, RoundTrips) {
  ShardFile s = sample();
  ShardFile back = decodeShard(encodeShard(s), "f.bin");
  EXPECT_EQ(back.params, s.params);
  EXPECT_EQ(back.m, s.m);
  EXPECT_EQ(back.v, s.v);
  EXPECT_EQ(back.header.ranges, s.header.ranges);
  EXPECT_EQ(back.header.model.describe(), s.header.model.describe());
}

TEST(ShardFile, RefusesTruncatedCorruptedAndForeignFiles) {
  std::vector<uint8_t> good = encodeShard(sample());
  std::vector<uint8_t> cut(good.begin(), good.end() - 7);
  EXPECT_NE(refusal(cut).find("truncated"), std::string::npos) << refusal(cut);
  std::vector<uint8_t> tiny(good.begin(), good.begin() + 10);
  EXPECT_NE(refusal(tiny).find("truncated"), std::string::npos);
  for (size_t at : {good.size() / 2, good.size() - 10}) {
    std::vector<uint8_t> flipped = good;
    flipped[at] ^= 0x10;
    EXPECT_NE(refusal(flipped).find("checksum mismatch"), std::string::npos) << at;
  }
  std::vector<uint8_t> foreign = good;
  foreign[0] = 'X';
  EXPECT_NE(refusal(foreign).find("bad magic"), std::string::npos);
  EXPECT_NE(refusal(foreign).find("f.bin"), std::string::npos);
}

}  // namespace
}  // namespace chorus::train
