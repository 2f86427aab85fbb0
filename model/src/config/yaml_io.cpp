#include "dmasim/config/yaml_io.h"

#include <yaml-cpp/eventhandler.h>

#include <map>
#include <sstream>

#include "dmasim/core/error.h"

namespace dmasim::config {

namespace {

using core::InputError;

std::string at_line(const YAML::Mark& m) {
    return "line " + std::to_string(m.line + 1) + ", column " + std::to_string(m.column + 1);
}

std::string child_path(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
}

// Walks a loaded document once, checking what yaml-cpp lets through.
class Checker {
public:
    Checker(const std::string& text, const std::string& origin) : text_(text), origin_(origin) {}

    void check(const YAML::Node& node, const std::string& path, int depth) {
        if (depth > kMaxYamlDepth) {
            throw InputError(origin_, path, "nested more than " + std::to_string(kMaxYamlDepth) + " levels deep");
        }
        if (++nodes_ > kMaxYamlNodes) {
            throw InputError(origin_, path,
                             "more than " + std::to_string(kMaxYamlNodes) + " YAML values (aliases expanding?)");
        }
        for (const YAML::Node& a : ancestors_) {
            if (node.is(a)) throw InputError(origin_, path, "an alias refers to a value that contains it");
        }
        switch (node.Type()) {
            case YAML::NodeType::Scalar: check_quote(node, path); break;
            case YAML::NodeType::Sequence: {
                ancestors_.push_back(node);
                for (std::size_t i = 0; i < node.size(); ++i) {
                    check(node[i], path + "[" + std::to_string(i) + "]", depth + 1);
                }
                ancestors_.pop_back();
                break;
            }
            case YAML::NodeType::Map: {
                ancestors_.push_back(node);
                std::map<std::string, YAML::Mark> seen;
                for (const auto& kv : node) {
                    if (!kv.first.IsScalar()) {
                        throw InputError(origin_, path, "a key at " + at_line(kv.first.Mark()) + " is not a plain name");
                    }
                    check_quote(kv.first, path);
                    const std::string& key = kv.first.Scalar();
                    const auto [it, fresh] = seen.emplace(key, kv.first.Mark());
                    if (!fresh) {
                        throw InputError(origin_, child_path(path, key),
                                         "given twice: at " + at_line(it->second) + ", and at " + at_line(kv.first.Mark()));
                    }
                    check(kv.second, child_path(path, key), depth + 1);
                }
                ancestors_.pop_back();
                break;
            }
            default: break;
        }
    }

private:
    // yaml-cpp ends an unclosed quoted scalar at the end of the stream without complaint. A
    // quoted scalar starts at its mark; if no closing quote follows, say where it opened.
    void check_quote(const YAML::Node& node, const std::string& path) const {
        const YAML::Mark m = node.Mark();
        if (m.is_null() || m.pos < 0 || static_cast<std::size_t>(m.pos) >= text_.size()) return;
        const char q = text_[static_cast<std::size_t>(m.pos)];
        if (q != '"' && q != '\'') return;
        for (std::size_t i = static_cast<std::size_t>(m.pos) + 1; i < text_.size(); ++i) {
            const char c = text_[i];
            if (q == '"' && c == '\\') {
                ++i;  // an escape: the next character cannot close the string
            } else if (c == q) {
                if (q == '\'' && i + 1 < text_.size() && text_[i + 1] == '\'') {
                    ++i;  // '' is a single quote inside a single-quoted string
                } else {
                    return;
                }
            }
        }
        throw InputError(origin_, path,
                         std::string("the ") + (q == '"' ? "double" : "single") + " quote opened at " + at_line(m) +
                             " is never closed");
    }

    const std::string& text_;
    const std::string& origin_;
    std::vector<YAML::Node> ancestors_;
    long nodes_ = 0;
};

// Sees a stream's events and keeps nothing but where the last empty value was.
class EventSink : public YAML::EventHandler {
public:
    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { last_null = mark; }
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}

    YAML::Mark last_null = YAML::Mark::null_mark();
};

std::size_t occurrences(const std::string& text, const char* marker) {
    std::size_t n = 0;
    for (auto at = text.find(marker); at != std::string::npos; at = text.find(marker, at + 1)) ++n;
    return n;
}

// yaml-cpp 0.7 (Debian 12's) loops for ever on some invalid streams, a ',' outside a flow
// collection among them: its parser reports an empty document without consuming the token, and
// LoadAll asks again, growing a list of null documents until memory runs out (fixed upstream
// in yaml-cpp PR #1319, after 0.8). A stream has at most one document more than it has
// document markers, so a first pass over the events, which keeps nothing, stops at that count.
void refuse_endless_documents(const std::string& text, const std::string& origin) {
    const std::size_t most = 1 + occurrences(text, "---") + occurrences(text, "...");
    std::istringstream in(text);
    YAML::Parser parser(in);
    EventSink sink;
    std::size_t docs = 0;
    while (parser.HandleNextDocument(sink)) {
        if (++docs > most) {
            const YAML::Mark& m = sink.last_null;
            throw InputError(origin, "",
                             "malformed YAML" +
                                 (m.is_null() ? std::string()
                                              : " at line " + std::to_string(m.line + 1) + ", column " +
                                                    std::to_string(m.column + 1)) +
                                 ": a value the parser cannot read (a ',' outside [ ] or { }?)");
        }
    }
}

}  // namespace

std::string yaml_error_message(const YAML::Exception& e) {
    if (e.mark.is_null()) return "malformed YAML: " + e.msg;
    return "malformed YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
           std::to_string(e.mark.column + 1) + ": " + e.msg;
}

std::vector<YAML::Node> load_yaml_all(const std::string& text, const std::string& origin) {
    std::vector<YAML::Node> docs;
    try {
        refuse_endless_documents(text, origin);
        docs = YAML::LoadAll(text);
    } catch (const YAML::Exception& e) {
        throw InputError(origin, "", yaml_error_message(e));
    }
    Checker checker(text, origin);
    for (const auto& d : docs) checker.check(d, "", 0);
    return docs;
}

YAML::Node load_yaml(const std::string& text, const std::string& origin) {
    std::vector<YAML::Node> docs = load_yaml_all(text, origin);
    if (docs.size() > 1) throw InputError(origin, "", "expected one YAML document, found " + std::to_string(docs.size()));
    return docs.empty() ? YAML::Node() : docs.front();
}

}  // namespace dmasim::config
