#include "output.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <stdexcept>

#include "test_util.h"

namespace dmaprobe {
namespace {

using test::TempDir;

std::vector<std::string> names_in(const std::string& dir) {
    std::vector<std::string> out;
    if (DIR* d = ::opendir(dir.c_str())) {
        while (const dirent* e = ::readdir(d)) {
            const std::string n = e->d_name;
            if (n != "." && n != "..") out.push_back(n);
        }
        ::closedir(d);
    }
    return out;
}

TEST(DmaprobeOutput, WritesFilesInSeveralDirectoriesAndReplacesOldOnes) {
    TempDir dir;
    dir.write("out/measured.csv", "old\n");
    const auto written = write_all_or_nothing({{dir.path() + "/out/measured.csv", "new\n"},
                                               {dir.path() + "/elsewhere/deep/r.json", "{}\n"}});
    ASSERT_EQ(written.size(), 2U);
    EXPECT_EQ(test::read_file(dir.path() + "/out/measured.csv"), "new\n");
    EXPECT_EQ(test::read_file(dir.path() + "/elsewhere/deep/r.json"), "{}\n");
    EXPECT_EQ(names_in(dir.path() + "/out"), (std::vector<std::string>{"measured.csv"}));  // no temporaries
    EXPECT_EQ(names_in(dir.path() + "/elsewhere/deep"), (std::vector<std::string>{"r.json"}));
}

TEST(DmaprobeOutput, OneUnwritableFileMeansNoneIsWritten) {
    TempDir dir;
    dir.write("out/measured.csv", "previous run\n");
    dir.write("blocker", "a file where a directory is needed");
    EXPECT_THROW(write_all_or_nothing({{dir.path() + "/out/measured.csv", "new\n"},
                                       {dir.path() + "/out/metadata.json", "{}\n"},
                                       {dir.path() + "/blocker/r.json", "{}\n"}}),
                 std::runtime_error);
    EXPECT_EQ(test::read_file(dir.path() + "/out/measured.csv"), "previous run\n");  // untouched
    EXPECT_FALSE(test::file_exists(dir.path() + "/out/metadata.json"));
    EXPECT_EQ(names_in(dir.path() + "/out"), (std::vector<std::string>{"measured.csv"}));  // temporaries removed
    try {
        write_all_or_nothing({{dir.path() + "/blocker/r.json", "{}\n"}});
        FAIL() << "no error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("blocker"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace dmaprobe
