#include "dmasim/core/units.h"

#include <gtest/gtest.h>

#include "dmasim/core/error.h"

namespace dmasim::core {
namespace {

TEST(Units, BinaryAndDecimalSizes) {
    EXPECT_EQ(parse_bytes("4KiB").value, 4096U);
    EXPECT_EQ(parse_bytes("1GiB").value, 1073741824ULL);
    EXPECT_EQ(parse_bytes("1 MiB").value, 1048576U);
    EXPECT_EQ(parse_bytes("4KB").value, 4000U);
    EXPECT_EQ(parse_bytes("2GB").value, 2000000000ULL);
    EXPECT_EQ(parse_bytes("256B").value, 256U);
    EXPECT_EQ(parse_bytes("256").value, 256U);
    EXPECT_EQ(parse_bytes("1.5KiB").value, 1536U);
}

TEST(Units, SizeErrorsSayWhatIsWrong) {
    EXPECT_THROW(parse_bytes("-4KiB"), UnitError);
    EXPECT_THROW(parse_bytes("4 parsecs"), UnitError);
    EXPECT_THROW(parse_bytes("KiB"), UnitError);
    EXPECT_THROW(parse_bytes("0.3B"), UnitError);
    try {
        parse_bytes("4kib");
        FAIL() << "lower-case unit accepted";
    } catch (const UnitError& e) {
        EXPECT_NE(std::string(e.what()).find("KiB"), std::string::npos) << e.what();
    }
}

TEST(Units, Durations) {
    EXPECT_EQ(parse_duration("750ns").ps, 750000);
    EXPECT_EQ(parse_duration("8ms").ps, 8000000000LL);
    EXPECT_EQ(parse_duration("1.5us").ps, 1500000);
    EXPECT_EQ(parse_duration("2s").ps, 2000000000000LL);
    EXPECT_THROW(parse_duration("750"), UnitError);  // bare numbers are ambiguous for time
    EXPECT_THROW(parse_duration("-1us"), UnitError);
}

TEST(Units, RatesAndBandwidths) {
    EXPECT_DOUBLE_EQ(parse_transfer_rate("32GT/s").gt_per_s, 32.0);
    EXPECT_DOUBLE_EQ(parse_transfer_rate("2500MT/s").gt_per_s, 2.5);
    EXPECT_DOUBLE_EQ(parse_bandwidth("25GB/s").bytes_per_s, 25e9);
    EXPECT_DOUBLE_EQ(parse_bandwidth("1GiB/s").bytes_per_s, 1073741824.0);
    EXPECT_THROW(parse_bandwidth("25"), UnitError);
    EXPECT_THROW(parse_transfer_rate("32Gbps"), UnitError);
}

TEST(Units, CanonicalTextRoundTrips) {
    for (const char* s : {"4KiB", "1GiB", "3MiB", "100B", "1000B"}) {
        EXPECT_EQ(to_string(parse_bytes(s)), s);
    }
    for (const char* s : {"750ns", "8ms", "1500ns", "3s", "1ps"}) {
        EXPECT_EQ(to_string(parse_duration(s)), s);
    }
    EXPECT_EQ(parse_bandwidth(to_string(Bandwidth{12.5e9})).bytes_per_s, 12.5e9);
}

TEST(Units, PrintedValuesParseAgainWithoutExponents) {
    // Found by the units fuzz target (tests/fuzz/regressions/units): values far from 1 GB/s
    // printed as 9.1976e-05GB/s, which no parser accepts.
    for (const char* text : {"91976B/s", "1B/s", "0.5B/s", "25GB/s", "123456789TB/s"}) {
        const std::string printed = to_string(parse_bandwidth(text));
        EXPECT_EQ(printed.find('e'), std::string::npos) << text << " -> " << printed;
        EXPECT_NEAR(parse_bandwidth(printed).bytes_per_s / parse_bandwidth(text).bytes_per_s, 1.0, 1e-11) << printed;
    }
    EXPECT_EQ(to_string(parse_bandwidth("91976B/s")), "0.000091976GB/s");
    EXPECT_NEAR(parse_bandwidth(to_string(parse_bandwidth("91976B/s"))).bytes_per_s, 91976.0, 1e-6);
    EXPECT_EQ(to_string(parse_bandwidth("25GB/s")), "25GB/s");
    const TransferRate big = parse_transfer_rate("4714947471494728684MT/s");
    const std::string printed = to_string(big);
    EXPECT_EQ(printed.find('e'), std::string::npos) << printed;
    EXPECT_NEAR(parse_transfer_rate(printed).gt_per_s / big.gt_per_s, 1.0, 1e-11);
}

TEST(Units, NumbersTooLargeForADoubleAreRefused) {
    const std::string huge = "1" + std::string(400, '0');
    EXPECT_THROW(parse_bandwidth(huge + "GB/s"), UnitError);
    EXPECT_THROW(parse_transfer_rate(huge + "GT/s"), UnitError);
    // Finite as a number, infinite once scaled by the unit.
    EXPECT_THROW(parse_bandwidth("1" + std::string(300, '0') + "TB/s"), UnitError);
    EXPECT_THROW(parse_bytes(huge + "B"), UnitError);
    EXPECT_THROW(parse_duration(huge + "s"), UnitError);
}

}  // namespace
}  // namespace dmasim::core
