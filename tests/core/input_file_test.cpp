#include "dmasim/core/input_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "dmasim/core/error.h"

namespace dmasim::core {
namespace {

class InputFile : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/dmasim-input-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override {
        for (const char* n : {"/f.txt", "/fifo", "/big"}) std::remove((dir_ + n).c_str());
        ::rmdir((dir_ + "/sub").c_str());
        ::rmdir(dir_.c_str());
    }
    std::string error_of(const std::string& path, std::uint64_t max = kMaxInputFileBytes) {
        try {
            read_input_file(path, "scenario", max);
        } catch (const InputError& e) {
            return e.what();
        }
        return "";
    }
    std::string dir_;
};

TEST_F(InputFile, ReadsARegularFileWhole) {
    std::ofstream(dir_ + "/f.txt") << "a: 1\nb: 2\n";
    EXPECT_EQ(read_input_file(dir_ + "/f.txt", "scenario"), "a: 1\nb: 2\n");
    EXPECT_TRUE(is_regular_file(dir_ + "/f.txt"));
}

TEST_F(InputFile, RefusesWhatIsNotARegularFileWithoutOpeningIt) {
    ASSERT_EQ(::mkdir((dir_ + "/sub").c_str(), 0700), 0);
    EXPECT_EQ(error_of(dir_ + "/sub"), dir_ + "/sub: is a directory: the scenario file must be a regular file");
    // Opening a FIFO for reading would block until a writer came: the test would hang.
    ASSERT_EQ(::mkfifo((dir_ + "/fifo").c_str(), 0600), 0);
    EXPECT_EQ(error_of(dir_ + "/fifo"), dir_ + "/fifo: is a FIFO: the scenario file must be a regular file");
    EXPECT_FALSE(is_regular_file(dir_ + "/fifo"));
    EXPECT_EQ(error_of("/dev/zero"), "/dev/zero: is a character device: the scenario file must be a regular file");
    EXPECT_NE(error_of(dir_ + "/missing").find("cannot open scenario file: No such file"), std::string::npos);
}

TEST_F(InputFile, RefusesFilesAboveTheLimit) {
    std::ofstream(dir_ + "/big") << std::string(2048, 'x');
    EXPECT_NE(error_of(dir_ + "/big", 1024).find("2048 bytes; the limit is 1024"), std::string::npos);
    EXPECT_EQ(error_of(dir_ + "/big", 4096), "");
}

TEST(InputError, MessagesStayOnOneLine) {
    const InputError e("a\nb.yaml", "k\x1b[31m", "value 'x\ty\x7f' is bad");
    EXPECT_STREQ(e.what(), "a\\nb.yaml: key 'k\\x1b[31m': value 'x\\ty\\x7f' is bad");
    // UTF-8 passes; bytes that are not UTF-8 (Latin-1, a cut sequence) are escaped.
    EXPECT_STREQ(InputError("f", "", "caf\xc3\xa9 \xe9t\xe9 \xe2\x82").what(), "f: caf\xc3\xa9 \\xe9t\\xe9 \\xe2\\x82");
    // The raw parts stay available to code.
    EXPECT_EQ(e.file(), "a\nb.yaml");
}

}  // namespace
}  // namespace dmasim::core
