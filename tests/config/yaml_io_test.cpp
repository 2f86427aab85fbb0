#include "dmasim/config/yaml_io.h"

#include <gtest/gtest.h>

#include <string>

#include "dmasim/config/scenario.h"
#include "dmasim/core/error.h"

namespace dmasim::config {
namespace {

std::string error_of(const std::string& yaml) {
    try {
        load_yaml_all(yaml, "in.yaml");
    } catch (const core::InputError& e) {
        return e.what();
    }
    return "";
}

TEST(YamlIo, AcceptsOrdinaryDocuments) {
    EXPECT_EQ(error_of("a: 1\nb: [x, 'it''s', \"q\\\"uote\"]\nc: {d: 2, e: &r {f: 3}, g: *r}\n---\nh: 4\n"), "");
    const auto docs = load_yaml_all("a: 1\n---\nb: 2\n", "in.yaml");
    ASSERT_EQ(docs.size(), 2U);
    EXPECT_EQ(docs[1]["b"].as<int>(), 2);
}

TEST(YamlIo, DuplicateKeysNameBothPlaces) {
    EXPECT_EQ(error_of("strategy: pinned\nstrategy: duplex\n"),
              "in.yaml: key 'strategy': given twice: at line 1, column 1, and at line 2, column 1");
    // Nested, on one line: the columns tell the two apart.
    EXPECT_EQ(error_of("link: { lanes: 16, lanes: 3 }\n"),
              "in.yaml: key 'link.lanes': given twice: at line 1, column 9, and at line 1, column 20");
    EXPECT_NE(error_of("flows:\n  - {name: a, size: 1, size: 2}\n").find("key 'flows[0].size'"), std::string::npos);
    // The same key in two sibling maps is not a duplicate.
    EXPECT_EQ(error_of("a: {x: 1}\nb: {x: 1}\n"), "");
}

TEST(YamlIo, UnclosedQuotesAreSyntaxErrors) {
    // yaml-cpp itself swallows the rest of the file into the string.
    EXPECT_EQ(error_of("strategy: \"pinned\nsizes: 4KiB\n"),
              "in.yaml: key 'strategy': the double quote opened at line 1, column 11 is never closed");
    EXPECT_NE(error_of("'strategy: pinned\n").find("single quote opened at line 1, column 1"), std::string::npos);
    // Closed quotes spanning lines and escaped quotes are fine.
    EXPECT_EQ(error_of("a: \"x\n  y\"\nb: 'it''s'\nc: \"a\\\"b\"\n"), "");
}

TEST(YamlIo, SyntaxErrorsCarryLineAndColumn) {
    EXPECT_EQ(error_of("a: 1\n b: 2\n"), "in.yaml: malformed YAML at line 2, column 3: illegal map value");
    EXPECT_NE(error_of("a: [1, 2\n").find("malformed YAML at line"), std::string::npos);
}

TEST(YamlIo, AliasCyclesAndExpansionAreBounded) {
    EXPECT_NE(error_of("a: &x [1, *x]\n").find("an alias refers to a value that contains it"), std::string::npos);
    // Nine levels of ten-fold aliases would be 10^9 values when walked.
    std::string bomb = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i < 9; ++i) {
        const std::string prev = "*l" + std::to_string(i - 1);
        bomb += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
        for (int k = 0; k < 10; ++k) bomb += (k ? ", " : "") + prev;
        bomb += "]\n";
    }
    EXPECT_NE(error_of(bomb).find("aliases expanding"), std::string::npos);
    std::string deep = "a: ";
    for (int i = 0; i < kMaxYamlDepth + 2; ++i) deep += "[";
    for (int i = 0; i < kMaxYamlDepth + 2; ++i) deep += "]";
    EXPECT_NE(error_of(deep + "\n").find("nested more than"), std::string::npos);
}

TEST(YamlIo, StreamsThatWouldMakeYamlCppLoopForEverAreRefused) {
    // yaml-cpp 0.7 turns each of these into endless empty documents (found by the platform
    // fuzz target: tests/fuzz/regressions); the test would hang, then run out of memory.
    for (const std::string& text : {std::string(","), std::string("\0,", 2), std::string(", kies:"),
                                   std::string("a: 1\n,\n"), std::string("[a, b],")}) {
        const std::string e = error_of(text);
        EXPECT_NE(e.find("in.yaml: malformed YAML"), std::string::npos) << text << ": " << e;
    }
    EXPECT_NE(error_of(",").find("line 1, column 1"), std::string::npos);
    // Documents with markers still load, however many.
    std::string many;
    for (int i = 0; i < 50; ++i) many += "---\na: " + std::to_string(i) + "\n";
    EXPECT_EQ(load_yaml_all(many, "in.yaml").size(), 50U);
    EXPECT_EQ(load_yaml_all("---\n...\n---\na: 1\n", "in.yaml").size(), 2U);
}

TEST(YamlIo, NonScalarKeysAreRefused) {
    EXPECT_NE(error_of("? [a, b]\n: 1\n").find("is not a plain name"), std::string::npos);
}

TEST(YamlIo, ScenarioParserUsesTheStrictLoader) {
    try {
        parse_scenarios("strategy: pinned\nsizes: 4KiB\nlink: {lanes: 16, lanes: 3}\n", "s.yaml");
        FAIL() << "a duplicate key was accepted";
    } catch (const core::InputError& e) {
        EXPECT_EQ(e.key(), "link.lanes");
        EXPECT_EQ(e.file(), "s.yaml");
    }
}

TEST(YamlIo, EchoedControlCharactersAreEscaped) {
    try {
        parse_scenarios("strategy: pinned\nsizes: 4KiB\n\"bad\\x01\\nkey\": 1\n", "s.yaml");
        FAIL() << "an unknown key was accepted";
    } catch (const core::InputError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("key 'bad\\x01\\nkey'"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos);
        EXPECT_EQ(what.find('\x01'), std::string::npos);
    }
}

}  // namespace
}  // namespace dmasim::config
