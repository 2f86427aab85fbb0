// The flat plan: what `dmasim plan` expands a scenario set into, and what the CUDA harness
// (`dmaprobe`) reads. The lent GPU machines have no YAML library, so the harness must not
// parse scenario files itself; this format is line-based and dependency-free.
//
// Format (docs/plan.md has the full description):
//   # comment lines and blank lines are ignored
//   dmasim-plan 1                      <- first non-comment line: format name and version
//   case scenario=pinned strategy=pinned direction=h2d size_bytes=4096 ...
// Each `case` line is one measurement: space-separated key=value tokens, values without spaces
// (percent-encoded where they would contain a space, '%' or '='). Unknown keys are kept, so an
// older harness can run a newer plan and report what it ignored.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dmasim::core {

inline constexpr const char* kPlanMagic = "dmasim-plan";
inline constexpr int kPlanVersion = 1;

// One measurement case: an ordered set of key=value pairs with typed accessors.
class PlanCase {
public:
    void set(const std::string& key, const std::string& value);
    void set(const std::string& key, std::int64_t value);
    void set(const std::string& key, std::uint64_t value);
    void set(const std::string& key, int value) { set(key, static_cast<std::int64_t>(value)); }
    void set(const std::string& key, double value);

    bool has(const std::string& key) const;
    // Throws std::runtime_error naming the key when it is missing or not of the asked type.
    const std::string& str(const std::string& key) const;
    std::int64_t integer(const std::string& key) const;
    double real(const std::string& key) const;
    std::string str_or(const std::string& key, const std::string& fallback) const;
    std::int64_t integer_or(const std::string& key, std::int64_t fallback) const;
    double real_or(const std::string& key, double fallback) const;

    const std::vector<std::pair<std::string, std::string>>& items() const { return items_; }

private:
    std::vector<std::pair<std::string, std::string>> items_;
};

struct Plan {
    std::vector<PlanCase> cases;
};

// Writes a plan. Values are percent-encoded as needed, so any string round-trips.
void write_plan(std::ostream& out, const Plan& plan);
std::string format_plan_case(const PlanCase& c);

// Reads a plan. `origin` names the source in error messages ("plan.txt:12: ..."). Throws
// InputError on a wrong header, a malformed token or a duplicate key.
Plan read_plan(std::istream& in, const std::string& origin);
Plan read_plan_file(const std::string& path);

}  // namespace dmasim::core
