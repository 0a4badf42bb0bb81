// CHORUS_IB_HCA in NCCL_IB_HCA's syntax (transport/net/ib/hca_filter.h).
#include "transport/net/ib/hca_filter.h"

#include <gtest/gtest.h>

namespace chorus::netplugin::ib {
namespace {

HcaFilter parsed(const std::string& text) {
  HcaFilter f;
  std::string why;
  EXPECT_TRUE(HcaFilter::parse(text, &f, &why)) << text << ": " << why;
  return f;
}

TEST(HcaFilter, EmptyAcceptsEverything) {
  HcaFilter f = parsed("");
  EXPECT_TRUE(f.entries().empty());
  EXPECT_TRUE(f.accepts("mlx5_0", 1));
  EXPECT_TRUE(f.accepts("anything", 7));
}

TEST(HcaFilter, PrefixesAndPorts) {
  HcaFilter f = parsed("mlx5_0:1,mlx5_1");
  ASSERT_EQ(f.entries().size(), 2u);
  EXPECT_EQ(f.entries()[0].name, "mlx5_0");
  EXPECT_EQ(f.entries()[0].port, 1);
  EXPECT_EQ(f.entries()[1].name, "mlx5_1");
  EXPECT_EQ(f.entries()[1].port, -1);
  EXPECT_FALSE(f.exclude());
  EXPECT_FALSE(f.exact());
  EXPECT_TRUE(f.accepts("mlx5_0", 1));
  EXPECT_FALSE(f.accepts("mlx5_0", 2));  // port 1 only
  EXPECT_TRUE(f.accepts("mlx5_1", 1));
  EXPECT_TRUE(f.accepts("mlx5_1", 2));   // any port
  EXPECT_TRUE(f.accepts("mlx5_10", 1));  // without '=', a prefix matches (NCCL's rule)
  EXPECT_TRUE(f.accepts("mlx5_01", 1));  // mlx5_0 is a prefix, and port 1 is listed
  EXPECT_FALSE(f.accepts("mlx5_01", 2));
  EXPECT_FALSE(f.accepts("mlx5_2", 1));
  EXPECT_FALSE(f.accepts("mlx4_0", 1));
}

TEST(HcaFilter, Exact) {
  HcaFilter f = parsed("=mlx5_1,mlx5_3:2");
  EXPECT_TRUE(f.exact());
  EXPECT_FALSE(f.exclude());
  EXPECT_TRUE(f.accepts("mlx5_1", 1));
  EXPECT_FALSE(f.accepts("mlx5_10", 1));
  EXPECT_FALSE(f.accepts("mlx5_", 1));
  EXPECT_TRUE(f.accepts("mlx5_3", 2));
  EXPECT_FALSE(f.accepts("mlx5_3", 1));
}

TEST(HcaFilter, Exclude) {
  HcaFilter f = parsed("^mlx5_1");
  EXPECT_TRUE(f.exclude());
  EXPECT_FALSE(f.accepts("mlx5_1", 1));
  EXPECT_FALSE(f.accepts("mlx5_10", 1));  // excluded by prefix
  EXPECT_TRUE(f.accepts("mlx5_0", 1));
  EXPECT_TRUE(f.accepts("mlx5_2", 2));
}

TEST(HcaFilter, ExcludeExactPort) {
  HcaFilter f = parsed("^=mlx5_1:2");
  EXPECT_TRUE(f.exclude());
  EXPECT_TRUE(f.exact());
  EXPECT_FALSE(f.accepts("mlx5_1", 2));
  EXPECT_TRUE(f.accepts("mlx5_1", 1));
  EXPECT_TRUE(f.accepts("mlx5_10", 2));  // exact: mlx5_10 is another device
}

TEST(HcaFilter, EmptyItemsAreIgnored) {
  HcaFilter f = parsed(",mlx5_0,,");
  ASSERT_EQ(f.entries().size(), 1u);
  EXPECT_EQ(f.entries()[0].name, "mlx5_0");
}

TEST(HcaFilter, MalformedIsRefusedWithAReason) {
  for (const char* bad : {"mlx5_0:x", "mlx5_0:", ":1", "mlx5_0:0", "mlx5_0:256", "mlx5_0:1x", "a,:2"}) {
    HcaFilter f;
    std::string why;
    EXPECT_FALSE(HcaFilter::parse(bad, &f, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
  HcaFilter f;
  std::string why;
  ASSERT_FALSE(HcaFilter::parse("mlx5_0:x", &f, &why));
  EXPECT_NE(why.find("mlx5_0:x"), std::string::npos) << why;
}

}  // namespace
}  // namespace chorus::netplugin::ib
