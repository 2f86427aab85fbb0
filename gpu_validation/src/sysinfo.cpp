#include "sysinfo.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <dirent.h>
#include <sys/utsname.h>
#include <thread>
#include <unistd.h>

namespace dmaprobe {

namespace {

std::string trim(const std::string& s) {
    std::size_t b = 0;
    std::size_t e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool all_hex(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

// A positive integer, or -1 ("[N/A]", "Unknown", empty, 0).
int positive_int(const std::string& text) {
    std::string t = trim(text);
    if (!t.empty() && (t[0] == 'x' || t[0] == 'X')) t = t.substr(1);
    if (t.empty() || !std::all_of(t.begin(), t.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        return -1;
    }
    const long v = std::strtol(t.c_str(), nullptr, 10);
    return v > 0 && v < 1000 ? static_cast<int>(v) : -1;
}

// Names in a directory, sorted, without . and ..; nothing if it cannot be opened.
std::optional<std::vector<std::string>> list_dir(const std::string& path) {
    DIR* d = ::opendir(path.c_str());
    if (d == nullptr) return std::nullopt;
    std::vector<std::string> out;
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name != "." && name != "..") out.push_back(name);
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

std::string or_unknown(const std::string& s) { return s.empty() ? std::string("unknown") : s; }

}  // namespace

std::string read_text_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) return {};
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string s = ss.str();
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    return s;
}

std::string normalize_bus_id(const std::string& bus_id) {
    // domain:bus:device.function
    const std::string id = trim(bus_id);
    const auto c1 = id.find(':');
    const auto c2 = id.find(':', c1 == std::string::npos ? c1 : c1 + 1);
    const auto dot = id.find('.', c2 == std::string::npos ? c2 : c2 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos || dot == std::string::npos) return {};
    std::string domain = id.substr(0, c1);
    const std::string bus = id.substr(c1 + 1, c2 - c1 - 1);
    const std::string dev = id.substr(c2 + 1, dot - c2 - 1);
    const std::string fn = id.substr(dot + 1);
    if (!all_hex(domain) || !all_hex(bus) || !all_hex(dev) || !all_hex(fn)) return {};
    if (bus.size() > 2 || dev.size() > 2 || fn.size() > 1) return {};
    // Keep the low 4 hex digits of a longer domain when the rest is zeros (00000000 → 0000).
    while (domain.size() > 4 && domain[0] == '0') domain.erase(0, 1);
    while (domain.size() < 4) domain.insert(0, "0");
    auto pad2 = [](std::string s) { return s.size() < 2 ? "0" + s : s; };
    return lower(domain + ":" + pad2(bus) + ":" + pad2(dev) + "." + fn);
}

int pcie_generation_from_speed(const std::string& speed) {
    const std::string s = trim(speed);
    char* end = nullptr;
    const double gts = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || gts <= 0.0) return -1;
    std::string rest = lower(trim(std::string(end)));
    if (rest.rfind("gt/s", 0) != 0) return -1;
    for (int gen = 1; gen <= 7; ++gen) {
        if (std::fabs(gts - pcie_gts_of_generation(gen)) < 0.05) return gen;
    }
    return -1;
}

double pcie_gts_of_generation(int gen) {
    switch (gen) {
        case 1: return 2.5;
        case 2: return 5.0;
        case 3: return 8.0;
        case 4: return 16.0;
        case 5: return 32.0;
        case 6: return 64.0;
        case 7: return 128.0;
        default: return 0.0;
    }
}

PcieLink read_sysfs_link(const std::string& root, const std::string& bus_id) {
    PcieLink link;
    const std::string id = normalize_bus_id(bus_id);
    if (id.empty()) return link;
    const std::string dir = root + "/" + id + "/";
    link.speed_current = read_text_file(dir + "current_link_speed");
    link.speed_max = read_text_file(dir + "max_link_speed");
    link.gen_current = pcie_generation_from_speed(link.speed_current);
    link.gen_max = pcie_generation_from_speed(link.speed_max);
    link.width_current = positive_int(read_text_file(dir + "current_link_width"));
    link.width_max = positive_int(read_text_file(dir + "max_link_width"));
    if (link.gen_current > 0 && link.width_current > 0) link.source = "sysfs";
    return link;
}

PcieLink parse_nvidia_smi_links(const std::string& output, const std::string& bus_id) {
    const std::string want = normalize_bus_id(bus_id);
    std::istringstream in(output);
    std::string line;
    while (std::getline(in, line)) {
        std::vector<std::string> f;
        std::istringstream ls(line);
        std::string field;
        while (std::getline(ls, field, ',')) f.push_back(trim(field));
        if (f.size() < 5 || want.empty() || normalize_bus_id(f[0]) != want) continue;
        PcieLink link;
        link.gen_current = positive_int(f[1]);
        link.gen_max = positive_int(f[2]);
        link.width_current = positive_int(f[3]);
        link.width_max = positive_int(f[4]);
        if (link.gen_current > 7) link.gen_current = -1;
        if (link.gen_max > 7) link.gen_max = -1;
        if (link.gen_current > 0 && link.width_current > 0) link.source = "nvidia-smi";
        return link;
    }
    return PcieLink{};
}

PcieLink query_nvidia_smi_link(const std::string& bus_id) {
    const char* cmd =
        "nvidia-smi --query-gpu=pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,"
        "pcie.link.width.current,pcie.link.width.max --format=csv,noheader 2>/dev/null";
    FILE* p = ::popen(cmd, "r");
    if (p == nullptr) return PcieLink{};
    std::string out;
    char buf[512];
    while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
    const int status = ::pclose(p);
    if (status != 0) return PcieLink{};
    return parse_nvidia_smi_links(out, bus_id);
}

PcieLink read_link(const std::string& sysfs_root, const std::string& bus_id,
                   const std::function<PcieLink(const std::string&)>& run_nvidia_smi) {
    PcieLink link = read_sysfs_link(sysfs_root, bus_id);
    if (link.known()) return link;
    if (run_nvidia_smi) {
        PcieLink smi = run_nvidia_smi(bus_id);
        if (smi.known()) return smi;
    }
    return PcieLink{};
}

namespace {

std::string without_escapes(const std::string& line) {
    std::string out;
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (line[i] == '\x1b') {
            // CSI: ESC [ parameters final-byte
            while (i < line.size() && !(line[i] >= '@' && line[i] <= '~' && line[i] != '[')) ++i;
            continue;
        }
        out += line[i];
    }
    return out;
}

std::vector<std::string> tab_fields(const std::string& line) {
    std::vector<std::string> f;
    std::istringstream in(line);
    std::string field;
    while (std::getline(in, field, '\t')) f.push_back(trim(field));
    return f;
}

}  // namespace

std::vector<std::vector<std::string>> parse_nvidia_smi_topo(const std::string& output) {
    std::istringstream in(output);
    std::string line;
    std::vector<int> gpu_columns;  // field index of GPU0, GPU1, ... in the header
    std::vector<std::vector<std::string>> routes;
    while (std::getline(in, line)) {
        const std::vector<std::string> f = tab_fields(without_escapes(line));
        if (gpu_columns.empty()) {
            for (std::size_t i = 0; i < f.size(); ++i) {
                if (f[i] == "GPU" + std::to_string(gpu_columns.size())) gpu_columns.push_back(static_cast<int>(i));
            }
            continue;
        }
        if (f.empty() || f[0] != "GPU" + std::to_string(routes.size())) {
            if (!routes.empty()) break;  // the matrix ended (the legend follows)
            continue;
        }
        std::vector<std::string> row;
        for (const int col : gpu_columns) {
            row.push_back(static_cast<std::size_t>(col) < f.size() ? f[static_cast<std::size_t>(col)] : std::string());
        }
        routes.push_back(std::move(row));
    }
    if (routes.size() != gpu_columns.size()) return {};
    return routes;
}

std::vector<std::vector<std::string>> query_nvidia_smi_topo() {
    FILE* p = ::popen("nvidia-smi topo -m 2>/dev/null", "r");
    if (p == nullptr) return {};
    std::string out;
    char buf[512];
    while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
    if (::pclose(p) != 0) return {};
    return parse_nvidia_smi_topo(out);
}

int read_numa_node(const std::string& root, const std::string& bus_id) {
    const std::string id = normalize_bus_id(bus_id);
    if (id.empty()) return -1;
    const std::string t = read_text_file(root + "/" + id + "/numa_node");
    if (t.empty()) return -1;
    char* end = nullptr;
    const long v = std::strtol(t.c_str(), &end, 10);
    if (end == t.c_str() || v < 0) return -1;
    return static_cast<int>(v);
}

std::string read_cpu_model(const std::string& cpuinfo_path) {
    std::ifstream in(cpuinfo_path);
    std::string line;
    std::string fallback;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        const std::string key = trim(line.substr(0, colon));
        const std::string value = trim(line.substr(colon + 1));
        if (value.empty()) continue;
        if (key == "model name") return value;
        if ((key == "Model" || key == "Hardware" || key == "cpu model") && fallback.empty()) fallback = value;
    }
    return fallback.empty() ? "unknown" : fallback;
}

std::uint64_t read_mem_total(const std::string& meminfo_path) {
    std::ifstream in(meminfo_path);
    std::string key;
    std::uint64_t kib = 0;
    std::string unit;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        if (ls >> key >> kib && key == "MemTotal:") return kib * 1024;
    }
    return 0;
}

int logical_cpu_count() {
    const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    if (n > 0) return static_cast<int>(n);
    return static_cast<int>(std::thread::hardware_concurrency());
}

std::string host_name() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
    return buf[0] ? std::string(buf) : std::string("unknown");
}

std::string utc_now_iso8601() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string bracketed_choice(const std::string& text) {
    const auto open = text.find('[');
    const auto close = text.find(']', open == std::string::npos ? 0 : open);
    if (open == std::string::npos || close == std::string::npos || close == open + 1) return "unknown";
    return text.substr(open + 1, close - open - 1);
}

std::vector<std::string> iommu_cmdline_options(const std::string& cmdline) {
    std::vector<std::string> out;
    std::istringstream in(cmdline);
    std::string word;
    while (in >> word) {
        const std::string key = word.substr(0, word.find('='));
        if (key == "iommu" || key == "intel_iommu" || key == "amd_iommu" || key.rfind("iommu.", 0) == 0) {
            out.push_back(word);
        }
    }
    return out;
}

std::string nvidia_driver_from_proc(const std::string& text) {
    const auto at = text.find("Kernel Module");
    if (at == std::string::npos) return "unknown";
    std::istringstream in(text.substr(at + std::string("Kernel Module").size()));
    std::string word;
    // Open kernel modules say "Kernel Module for x86_64  580.159.04": take the first word that
    // looks like a version.
    while (in >> word) {
        if (std::isdigit(static_cast<unsigned char>(word[0])) && word.find('.') != std::string::npos) return word;
    }
    return "unknown";
}

SystemFacts read_system_facts(const std::string& root, const std::string& gpu_bus_id) {
    SystemFacts f;
    f.boot_id = or_unknown(read_text_file(root + "/proc/sys/kernel/random/boot_id"));
    f.kernel_release = read_text_file(root + "/proc/sys/kernel/osrelease");
    if (f.kernel_release.empty() && root.empty()) {
        struct utsname u {};
        if (::uname(&u) == 0) f.kernel_release = u.release;
    }
    f.kernel_release = or_unknown(f.kernel_release);
    f.nvidia_driver = read_text_file(root + "/sys/module/nvidia/version");
    if (f.nvidia_driver.empty()) f.nvidia_driver = nvidia_driver_from_proc(read_text_file(root + "/proc/driver/nvidia/version"));
    f.thp_enabled = bracketed_choice(read_text_file(root + "/sys/kernel/mm/transparent_hugepage/enabled"));
    f.thp_defrag = bracketed_choice(read_text_file(root + "/sys/kernel/mm/transparent_hugepage/defrag"));

    IommuInfo& io = f.iommu;
    io.devices = list_dir(root + "/sys/class/iommu").value_or(std::vector<std::string>{});
    if (const auto groups = list_dir(root + "/sys/kernel/iommu_groups")) io.groups = static_cast<int>(groups->size());
    const std::string bus = normalize_bus_id(gpu_bus_id);
    if (!bus.empty()) {
        const std::string group = root + std::string(kSysfsPciDevices) + "/" + bus + "/iommu_group";
        char target[4096];
        const ssize_t n = ::readlink(group.c_str(), target, sizeof target - 1);
        if (n > 0) {
            const std::string t(target, static_cast<std::size_t>(n));
            io.gpu_group = or_unknown(t.substr(t.find_last_of('/') + 1));
        }
        io.gpu_group_type = or_unknown(read_text_file(group + "/type"));
    }
    io.cmdline = iommu_cmdline_options(read_text_file(root + "/proc/cmdline"));
    const std::string& type = io.gpu_group_type;
    if (type == "identity") {
        io.mode = "passthrough";
    } else if (type == "DMA" || type == "DMA-FQ") {
        io.mode = "translated";
    } else if (type != "unknown") {
        io.mode = type;
    } else if (io.devices.empty() &&
               (io.groups == 0 || (io.groups < 0 && list_dir(root + "/sys/kernel").has_value()))) {
        // No IOMMU registered and no groups (a kernel without IOMMU support has no
        // iommu_groups directory at all): DMA uses physical addresses.
        io.mode = "off";
    }
    return f;
}

}  // namespace dmaprobe
