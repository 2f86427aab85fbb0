#include "dmasim/topology/import.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "dmasim/core/error.h"

namespace dmasim::topology {

namespace {

using core::InputError;
namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// Platform-file text: nodes and links as one-line flow maps, each with a comment saying where it
// came from.

struct OutNode {
    std::string name;
    std::string kind;
    std::optional<int> socket;
    std::string comment;
};

struct OutLink {
    std::string a;
    std::string b;
    std::string kind;
    std::optional<int> generation;
    std::optional<int> lanes;
    std::optional<int> links;
    std::string comment;
    std::vector<std::pair<std::string, std::string>> extra = {};  // further keys, in order
};

struct OutPlatform {
    std::vector<std::string> header;  // comment lines above the document
    std::string name;
    std::string description;
    std::vector<OutNode> nodes;
    std::vector<OutLink> links;
    std::vector<std::string> footer;  // comment lines below it
};

std::string one_line(std::string s) {
    for (char& c : s) {
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    }
    return s;
}

std::string lower(std::string s) {
    for (char& c : s) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return s;
}

std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    static const char* hex = "0123456789abcdef";
                    out += "\\x";
                    out += hex[(static_cast<unsigned char>(c) >> 4) & 0xF];
                    out += hex[static_cast<unsigned char>(c) & 0xF];
                } else {
                    out += c;
                }
        }
    }
    return out + "\"";
}

// A name as a plain YAML scalar where that reads back as the same string, quoted otherwise.
std::string scalar(const std::string& s) {
    static const std::set<std::string> reserved = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"};
    bool plain = !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_') &&
                 reserved.count(lower(s)) == 0;
    for (const char c : s) {
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) plain = false;
    }
    return plain ? s : quoted(s);
}

std::string node_text(const OutNode& n) {
    std::string t = "{ name: " + n.name + ", kind: " + n.kind;
    if (n.socket) t += ", socket: " + std::to_string(*n.socket);
    return t + " }";
}

std::string link_text(const OutLink& l) {
    std::string t = "{ a: " + l.a + ", b: " + l.b + ", kind: " + l.kind;
    if (l.generation) t += ", generation: " + std::to_string(*l.generation);
    if (l.lanes) t += ", lanes: " + std::to_string(*l.lanes);
    if (l.links) t += ", links: " + std::to_string(*l.links);
    for (const auto& [k, v] : l.extra) t += ", " + k + ": " + v;
    return t + " }";
}

void emit_commented(std::ostringstream& out, const std::vector<std::string>& texts,
                    const std::vector<std::string>& comments) {
    std::size_t width = 0;
    for (const auto& t : texts) width = std::max(width, t.size());
    for (std::size_t i = 0; i < texts.size(); ++i) {
        out << "  - " << texts[i];
        if (!comments[i].empty()) out << std::string(width - texts[i].size(), ' ') << "  # " << one_line(comments[i]);
        out << "\n";
    }
}

std::string emit(const OutPlatform& p) {
    std::ostringstream out;
    for (const auto& h : p.header) out << (h.empty() ? "#" : "# " + one_line(h)) << "\n";
    out << "name: " << scalar(p.name.empty() ? std::string("imported") : p.name) << "\n";
    out << "description: " << quoted(p.description) << "\n";
    out << "nodes:\n";
    std::vector<std::string> texts;
    std::vector<std::string> comments;
    for (const auto& n : p.nodes) {
        texts.push_back(node_text(n));
        comments.push_back(n.comment);
    }
    emit_commented(out, texts, comments);
    out << "links:" << (p.links.empty() ? " []" : "") << "\n";
    texts.clear();
    comments.clear();
    for (const auto& l : p.links) {
        texts.push_back(link_text(l));
        comments.push_back(l.comment);
    }
    emit_commented(out, texts, comments);
    for (const auto& f : p.footer) out << (f.empty() ? "#" : "# " + one_line(f)) << "\n";
    return out.str();
}

// Links between root complexes, as the simulated packets need them (internal links to a CPU
// carry none): within a socket every pair of root complexes is joined (the CPU's own fabric
// between host bridges; values as platforms/dgx-h100.yaml assumes), so no route crosses a CPU
// node; across sockets the sockets' first root complexes are (UPI/xGMI, the default values).
std::vector<OutLink> root_complex_fabric(const std::vector<std::vector<std::string>>& rcs_by_socket) {
    std::vector<OutLink> out;
    for (std::size_t s = 0; s < rcs_by_socket.size(); ++s) {
        const auto& rcs = rcs_by_socket[s];
        for (std::size_t i = 0; i < rcs.size(); ++i) {
            for (std::size_t j = i + 1; j < rcs.size(); ++j) {
                out.push_back(OutLink{rcs[i], rcs[j], "socket", {}, {}, {},
                                      "within socket " + std::to_string(s) + ": the CPU's fabric between host bridges (assumed)",
                                      {{"bandwidth", "256GB/s"}, {"latency", "50ns"}}});
            }
        }
    }
    for (std::size_t a = 0; a < rcs_by_socket.size(); ++a) {
        for (std::size_t b = a + 1; b < rcs_by_socket.size(); ++b) {
            if (rcs_by_socket[a].empty() || rcs_by_socket[b].empty()) continue;
            out.push_back(OutLink{rcs_by_socket[a].front(), rcs_by_socket[b].front(), "socket", {}, {}, {},
                                  "socket " + std::to_string(a) + " to socket " + std::to_string(b) +
                                      ": the CPU interconnect (UPI/xGMI; assumed, default bandwidth and latency)"});
        }
    }
    return out;
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

std::vector<std::string> split_ws(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    std::string t;
    while (in >> t) out.push_back(t);
    return out;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
    return out;
}

std::optional<long> parse_int(const std::string& s, int base = 10) {
    std::string t = trim(s);
    if (base == 16 && t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) t = t.substr(2);
    long v = 0;
    const char* first = t.data();
    const char* last = t.data() + t.size();
    if (t.empty()) return std::nullopt;
    const auto [ptr, ec] = std::from_chars(first, last, v, base);
    if (ec != std::errc() || ptr != last) return std::nullopt;
    return v;
}

// ---------------------------------------------------------------------------------------------
// sysfs

struct PciDev {
    std::string bdf;
    fs::path dir;                    // resolved, under ROOT/sys/devices
    std::string host_bridge;         // pciDDDD:BB
    std::vector<std::string> chain;  // the BDFs above it, host bridge side first
    std::optional<long> cls;
    std::string vendor;
    std::string device;
    std::string cur_speed;  // raw attribute text, empty when missing
    std::string cur_width;
    std::string max_speed;
    std::string max_width;
    int numa = -1;
    bool virtual_function = false;
};

bool is_host_bridge_name(const std::string& s) {
    // pciDDDD:BB (the domain may be longer than four digits: VMD, Hyper-V)
    if (s.size() < 7 || s.compare(0, 3, "pci") != 0) return false;
    const auto colon = s.find(':');
    if (colon == std::string::npos || colon <= 3 || s.size() - colon - 1 != 2) return false;
    for (std::size_t i = 3; i < s.size(); ++i) {
        if (i == colon) continue;
        if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
    }
    return true;
}

bool is_bdf(const std::string& s) {
    // DDDD:BB:DD.F
    const auto c1 = s.find(':');
    if (c1 == std::string::npos || c1 == 0) return false;
    if (s.size() != c1 + 8 || s[c1 + 3] != ':' || s[c1 + 6] != '.') return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i == c1 || i == c1 + 3 || i == c1 + 6) continue;
        if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
    }
    return true;
}

// Numeric sort key of a BDF or a host bridge name, with the text as tie-break.
std::tuple<long, long, long, long, std::string> pci_key(const std::string& s) {
    std::string t = s.compare(0, 3, "pci") == 0 ? s.substr(3) : s;
    long parts[4] = {-1, -1, -1, -1};
    std::size_t start = 0;
    for (int i = 0; i < 4 && start <= t.size(); ++i) {
        const auto end = t.find_first_of(":.", start);
        const auto v = parse_int(t.substr(start, end == std::string::npos ? std::string::npos : end - start), 16);
        parts[i] = v.value_or(-1);
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return {parts[0], parts[1], parts[2], parts[3], s};
}

bool pci_less(const std::string& a, const std::string& b) { return pci_key(a) < pci_key(b); }

std::optional<std::string> read_attr(const fs::path& dir, const char* name) {
    std::ifstream in(dir / name);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return trim(s.str());
}

PciDev read_device(const std::string& bdf, const fs::path& dir) {
    PciDev d;
    d.bdf = bdf;
    d.dir = dir;
    if (const auto c = read_attr(dir, "class")) d.cls = parse_int(*c, 16);
    d.vendor = read_attr(dir, "vendor").value_or("");
    d.device = read_attr(dir, "device").value_or("");
    d.cur_speed = read_attr(dir, "current_link_speed").value_or("");
    d.cur_width = read_attr(dir, "current_link_width").value_or("");
    d.max_speed = read_attr(dir, "max_link_speed").value_or("");
    d.max_width = read_attr(dir, "max_link_width").value_or("");
    if (const auto n = read_attr(dir, "numa_node")) d.numa = static_cast<int>(parse_int(*n).value_or(-1));
    std::error_code ec;
    d.virtual_function = fs::is_symlink(fs::symlink_status(dir / "physfn", ec));
    return d;
}

bool is_bridge(const PciDev& d) {
    // PCI-to-PCI bridges (0x0604) and semi-transparent ones (0x0609). A missing class on an
    // ancestor: it has devices below it, so it forwards.
    if (!d.cls) return true;
    const long base_sub = *d.cls >> 8;
    return base_sub == 0x0604 || base_sub == 0x0609;
}

std::string kind_of(const PciDev& d) {
    if (!d.cls) return "";
    switch (*d.cls >> 8) {
        case 0x0300:
        case 0x0302: return "gpu";
        case 0x0200:
        case 0x0207: return "nic";
        case 0x0108: return "nvme";
        default: return "";
    }
}

std::string class_hex(const PciDev& d) {
    if (!d.cls) return "class ?";
    char buf[32];
    std::snprintf(buf, sizeof buf, "class 0x%06lx", *d.cls);
    return buf;
}

std::string class_name(const PciDev& d) {
    if (!d.cls) return "no class attribute";
    static const std::map<long, const char*> names = {
        {0x0100, "SCSI controller"},        {0x0101, "IDE controller"},
        {0x0104, "RAID controller"},        {0x0106, "SATA controller"},
        {0x0107, "SAS controller"},         {0x0180, "mass storage controller"},
        {0x0280, "network controller"},     {0x0380, "display controller"},
        {0x0403, "audio device"},           {0x0480, "multimedia controller"},
        {0x0500, "RAM memory"},             {0x0580, "memory controller"},
        {0x0600, "host bridge"},            {0x0601, "ISA bridge"},
        {0x0680, "bridge"},                 {0x0700, "serial controller"},
        {0x0800, "interrupt controller"},   {0x0806, "IOMMU"},
        {0x0880, "system peripheral"},      {0x0b40, "co-processor"},
        {0x0c03, "USB controller"},         {0x0c05, "SMBus controller"},
        {0x1180, "signal processing controller"}, {0x1200, "processing accelerator"},
        {0xff00, "unassigned class"},
    };
    const auto it = names.find(*d.cls >> 8);
    if (it != names.end()) return it->second;
    if ((*d.cls >> 16) == 0xff) return "unassigned class";
    return "not a GPU, NIC or NVMe drive";
}

std::string ids(const PciDev& d) {
    auto strip = [](const std::string& s) { return s.size() > 2 && s[0] == '0' && s[1] == 'x' ? s.substr(2) : s; };
    if (d.vendor.empty() && d.device.empty()) return "";
    return strip(d.vendor) + ":" + strip(d.device);
}

std::optional<int> generation_of(const std::string& speed) {
    // "32.0 GT/s PCIe" (recent kernels), "8 GT/s", "2.5 GT/s"; "Unknown" when there is no link.
    const std::string t = trim(speed);
    double gt = 0.0;
    const char* first = t.data();
    const auto [ptr, ec] = std::from_chars(first, t.data() + t.size(), gt);
    if (ec != std::errc() || ptr == first) return std::nullopt;
    static const std::pair<double, int> table[] = {{2.5, 1}, {5.0, 2}, {8.0, 3}, {16.0, 4}, {32.0, 5}, {64.0, 6}};
    for (const auto& [rate, gen] : table) {
        if (std::fabs(gt - rate) < 0.01) return gen;
    }
    return std::nullopt;
}

std::optional<int> width_of(const std::string& width) {
    const auto v = parse_int(width);
    if (!v || *v <= 0 || *v > 32) return std::nullopt;
    return static_cast<int>(*v);
}

std::string describe_link(const std::string& speed, const std::string& width) {
    if (speed.empty() && width.empty()) return "no link attributes";
    const auto g = generation_of(speed);
    const auto w = width_of(width);
    std::string s = g ? "Gen" + std::to_string(*g) : (speed.empty() ? "speed ?" : "speed '" + speed + "'");
    s += w ? " x" + std::to_string(*w) : (width.empty() ? " width ?" : " width '" + width + "'");
    return s;
}

// The settings of the link above `dev`: its own current link, or where it reports none (some
// devices do not), the port above it, which is the other end of the same link.
void set_link(OutLink& l, const PciDev& dev, const PciDev* port) {
    const PciDev* src = &dev;
    if (dev.cur_speed.empty() && dev.cur_width.empty() && port != nullptr &&
        !(port->cur_speed.empty() && port->cur_width.empty())) {
        src = port;
    }
    l.generation = generation_of(src->cur_speed);
    l.lanes = width_of(src->cur_width);
    std::string c = dev.bdf;
    if (src != &dev) c += " (link from port " + src->bdf + ")";
    c += ": " + describe_link(src->cur_speed, src->cur_width);
    if (!src->max_speed.empty() || !src->max_width.empty()) c += ", max " + describe_link(src->max_speed, src->max_width);
    l.comment = c;
}

struct SysfsSwitch {
    std::string upstream;             // BDF of the upstream port
    std::string parent;               // attach key of what it hangs off
    std::string parent_port;          // root port / downstream port above it ("" if none)
    std::set<std::string> downstream; // downstream ports seen on the way to a kept device
};

struct SysfsAttach {
    std::string parent;  // attach key: "rc:pciDDDD:BB" or "sw:BDF"
    std::string port;    // the bridge it sits under ("" directly on the host bridge)
    std::string root_port;
};

}  // namespace

std::string import_sysfs(const std::string& root, const std::string& name) {
    std::error_code ec;
    const fs::path rootp = fs::absolute(fs::path(root.empty() ? std::string("/") : root), ec).lexically_normal();
    const fs::path bus = rootp / "sys" / "bus" / "pci" / "devices";
    const fs::path devices_root = rootp / "sys" / "devices";
    if (!fs::is_directory(bus, ec)) {
        throw InputError(root, "", bus.string() + " does not exist: not a sysfs tree (give the directory that holds "
                                                  "sys/, e.g. / or an extracted scripts/capture-pci.sh snapshot)");
    }

    std::map<std::string, PciDev> devs;  // by BDF
    std::vector<std::string> listed;     // BDFs of ROOT/sys/bus/pci/devices
    for (fs::directory_iterator it(bus, ec), end; !ec && it != end; it.increment(ec)) {
        const fs::path entry = it->path();
        const std::string bdf = entry.filename().string();
        if (!fs::is_symlink(it->symlink_status(ec))) {
            throw InputError(root, "", entry.string() +
                                           " is not a link: the bridge hierarchy is lost (copy sysfs with its links "
                                           "kept, as scripts/capture-pci.sh does)");
        }
        const fs::path target = fs::read_symlink(entry, ec);
        if (ec) throw InputError(root, "", "cannot read the link " + entry.string() + ": " + ec.message());
        // Resolved lexically inside ROOT: an absolute target names a path of the captured
        // machine, so it is taken relative to ROOT, never to this machine's /sys.
        const fs::path resolved =
            (target.is_absolute() ? rootp / target.relative_path() : entry.parent_path() / target).lexically_normal();
        const fs::path rel = resolved.lexically_relative(devices_root);
        if (rel.empty() || *rel.begin() == "..") {
            throw InputError(root, "", entry.string() + " -> " + target.string() + " does not lead into " +
                                           devices_root.string());
        }
        if (!fs::is_directory(resolved, ec)) {
            throw InputError(root, "", entry.string() + " -> " + target.string() + ": " + resolved.string() +
                                           " is missing (a broken link)");
        }
        std::string host_bridge;
        std::vector<std::string> chain;
        for (const auto& part : rel) {
            const std::string p = part.string();
            if (host_bridge.empty()) {
                if (is_host_bridge_name(p)) host_bridge = p;
                continue;
            }
            if (is_bdf(p)) chain.push_back(p);  // other levels (a VMD domain's pciDDDDD:BB) are transparent
        }
        if (host_bridge.empty()) {
            throw InputError(root, "", entry.string() + " -> " + target.string() +
                                           ": no pciDDDD:BB host bridge in the device's path");
        }
        if (chain.empty() || chain.back() != resolved.filename().string()) {
            throw InputError(root, "", entry.string() + " -> " + target.string() +
                                           ": the path does not end in the device's PCI address");
        }
        chain.pop_back();
        PciDev d = read_device(bdf, resolved);
        d.host_bridge = host_bridge;
        d.chain = chain;
        listed.push_back(bdf);
        devs[bdf] = std::move(d);
    }
    if (ec) throw InputError(root, "", "cannot list " + bus.string() + ": " + ec.message());
    if (listed.empty()) throw InputError(root, "", bus.string() + " is empty: no PCI devices to import");
    std::sort(listed.begin(), listed.end(), pci_less);

    // Ancestors that were not listed themselves (an incomplete capture): read from their
    // directory on the device's path.
    for (const auto& bdf : listed) {
        const PciDev d = devs.at(bdf);
        fs::path dir = d.dir.parent_path();
        for (auto it = d.chain.rbegin(); it != d.chain.rend(); ++it) {
            while (dir.filename().string() != *it && dir.has_relative_path()) dir = dir.parent_path();
            if (devs.count(*it) == 0) {
                PciDev a = read_device(*it, dir);
                a.host_bridge = d.host_bridge;
                a.chain.assign(d.chain.begin(), it.base() - 1);
                devs[*it] = std::move(a);
            }
            dir = dir.parent_path();
        }
    }

    // Host bridges, their NUMA node (the most common one of the devices below) and sockets.
    std::map<std::string, std::map<int, int>> votes;  // host bridge -> numa -> count
    for (const auto& [bdf, d] : devs) {
        auto& v = votes[d.host_bridge];
        if (d.numa >= 0) ++v[d.numa];
    }
    std::vector<std::string> host_bridges;
    std::map<std::string, int> hb_numa;
    for (const auto& [hb, v] : votes) {
        host_bridges.push_back(hb);
        int best = 0;
        int count = 0;
        for (const auto& [numa, n] : v) {
            if (n > count) best = numa, count = n;
        }
        hb_numa[hb] = best;  // no NUMA node reported (-1): socket 0
    }
    std::sort(host_bridges.begin(), host_bridges.end(), pci_less);
    std::vector<int> numas;
    for (const auto& [hb, n] : hb_numa) numas.push_back(n);
    std::sort(numas.begin(), numas.end());
    numas.erase(std::unique(numas.begin(), numas.end()), numas.end());
    auto socket_of_hb = [&](const std::string& hb) {
        return static_cast<int>(std::lower_bound(numas.begin(), numas.end(), hb_numa.at(hb)) - numas.begin());
    };

    // Walk each kept device's chain of bridges: under the host bridge a root port, under a root
    // port or a downstream port a switch's upstream port, under an upstream port its downstream
    // ports. A non-bridge on the way (Intel VMD) is transparent: root ports follow it.
    std::map<std::string, SysfsSwitch> switches;           // by upstream BDF
    std::vector<std::pair<std::string, SysfsAttach>> kept;  // endpoint BDF, where it hangs
    std::vector<std::string> skipped;
    std::set<std::string> used_bridges;
    for (const auto& bdf : listed) {
        const PciDev& d = devs.at(bdf);
        if (is_bridge(d)) continue;
        const std::string kind = kind_of(d);
        if (kind.empty() || d.virtual_function) {
            std::string line = bdf + "  " + ids(d) + "  " + class_hex(d) + "  ";
            line += d.virtual_function && !kind.empty() ? "SR-IOV virtual function" : class_name(d);
            skipped.push_back(line);
            continue;
        }
        enum class Expect { kRootPort, kUpstream, kDownstream } expect = Expect::kRootPort;
        SysfsAttach at{"rc:" + d.host_bridge, "", ""};
        for (const auto& anc : d.chain) {
            const PciDev& b = devs.at(anc);
            if (!is_bridge(b)) {
                expect = Expect::kRootPort;
                continue;
            }
            used_bridges.insert(anc);
            switch (expect) {
                case Expect::kRootPort:
                    at.root_port = anc;
                    expect = Expect::kUpstream;
                    break;
                case Expect::kUpstream: {
                    auto& sw = switches[anc];
                    if (sw.upstream.empty()) sw = SysfsSwitch{anc, at.parent, at.port, {}};
                    at.parent = "sw:" + anc;
                    expect = Expect::kDownstream;
                    break;
                }
                case Expect::kDownstream:
                    switches.at(at.parent.substr(3)).downstream.insert(anc);
                    expect = Expect::kUpstream;
                    break;
            }
            at.port = anc;
        }
        kept.emplace_back(bdf, at);
    }

    // Root complexes: the host bridges with something kept below, and each socket's first host
    // bridge (so that every socket's CPU and memory are on the graph).
    std::set<std::string> kept_hb;
    for (const auto& [bdf, at] : kept) kept_hb.insert(devs.at(bdf).host_bridge);
    std::vector<std::string> rcs;
    std::vector<std::string> omitted_hb;
    std::set<int> sockets_with_rc;
    for (const auto& hb : host_bridges) {
        if (kept_hb.count(hb)) sockets_with_rc.insert(socket_of_hb(hb));
    }
    for (const auto& hb : host_bridges) {
        const int s = socket_of_hb(hb);
        if (kept_hb.count(hb) || sockets_with_rc.count(s) == 0) {
            rcs.push_back(hb);
            sockets_with_rc.insert(s);
        } else {
            omitted_hb.push_back(hb);
        }
    }

    // Names, in PCI order.
    std::map<std::string, std::string> attach_name;  // attach key -> node name
    for (std::size_t i = 0; i < rcs.size(); ++i) attach_name["rc:" + rcs[i]] = "rc" + std::to_string(i);
    std::vector<std::string> sw_order;
    for (const auto& [up, sw] : switches) sw_order.push_back(up);
    std::sort(sw_order.begin(), sw_order.end(), pci_less);
    for (std::size_t i = 0; i < sw_order.size(); ++i) attach_name["sw:" + sw_order[i]] = "sw" + std::to_string(i);
    std::map<std::string, int> kind_count;
    std::map<std::string, std::string> endpoint_name;
    for (const auto& [bdf, at] : kept) {
        const std::string kind = kind_of(devs.at(bdf));
        endpoint_name[bdf] = kind + std::to_string(kind_count[kind]++);
    }

    OutPlatform p;
    p.name = name;
    p.description = "imported from sysfs (sys/bus/pci/devices)";
    p.header = {"Imported by dmasim from the sysfs PCI tree under " + root + " (" + std::to_string(listed.size()) +
                    " PCI devices).",
                "Root ports are not nodes; a switch's upstream and downstream ports are one switch node. Each",
                "PCIe link's generation and lanes are the downstream device's current link (max in the comment)."};
    const bool numa_reported =
        std::any_of(votes.begin(), votes.end(), [](const auto& hb_votes) { return !hb_votes.second.empty(); });
    for (std::size_t s = 0; s < numas.size(); ++s) {
        p.nodes.push_back({"cpu" + std::to_string(s), "cpu", static_cast<int>(s),
                           numa_reported ? "NUMA node " + std::to_string(numas[s])
                                         : "no NUMA node reported (numa_node -1): one socket"});
    }
    for (std::size_t i = 0; i < rcs.size(); ++i) {
        std::string c = "host bridge " + rcs[i];
        if (numa_reported && votes.at(rcs[i]).empty()) c += " (its devices report no NUMA node: taken as node 0)";
        p.nodes.push_back({"rc" + std::to_string(i), "root_complex", socket_of_hb(rcs[i]), c});
    }
    for (const auto& up : sw_order) {
        const auto& sw = switches.at(up);
        const std::string hb = devs.at(up).host_bridge;
        std::vector<std::string> down(sw.downstream.begin(), sw.downstream.end());
        std::sort(down.begin(), down.end(), pci_less);
        std::string c = "upstream port " + up + " " + ids(devs.at(up));
        if (!down.empty()) c += ", downstream ports " + join(down, " ");
        p.nodes.push_back({attach_name.at("sw:" + up), "switch", socket_of_hb(hb), c});
    }
    for (const char* kind : {"gpu", "nic", "nvme"}) {
        for (const auto& [bdf, at] : kept) {
            const PciDev& d = devs.at(bdf);
            if (kind_of(d) != kind) continue;
            p.nodes.push_back({endpoint_name.at(bdf), kind, socket_of_hb(d.host_bridge),
                               bdf + " " + ids(d) + " " + class_hex(d)});
        }
    }

    // Links: each socket's CPU to its root complexes; root complexes to each other; then the PCIe
    // tree.
    std::vector<std::vector<std::string>> rcs_by_socket(numas.size());
    for (std::size_t i = 0; i < rcs.size(); ++i) {
        const int s = socket_of_hb(rcs[i]);
        p.links.push_back(OutLink{"cpu" + std::to_string(s), "rc" + std::to_string(i), "internal", {}, {}, {}, ""});
        rcs_by_socket[static_cast<std::size_t>(s)].push_back("rc" + std::to_string(i));
    }
    for (auto& l : root_complex_fabric(rcs_by_socket)) p.links.push_back(std::move(l));
    for (const auto& up : sw_order) {
        const auto& sw = switches.at(up);
        OutLink l{attach_name.at(sw.parent), attach_name.at("sw:" + up), "pcie", {}, {}, {}, ""};
        set_link(l, devs.at(up), sw.parent_port.empty() ? nullptr : &devs.at(sw.parent_port));
        if (sw.parent.compare(0, 3, "rc:") == 0 && !sw.parent_port.empty()) l.comment += ", root port " + sw.parent_port;
        p.links.push_back(l);
    }
    for (const auto& [bdf, at] : kept) {
        OutLink l{attach_name.at(at.parent), endpoint_name.at(bdf), "pcie", {}, {}, {}, ""};
        set_link(l, devs.at(bdf), at.port.empty() ? nullptr : &devs.at(at.port));
        if (at.parent.compare(0, 3, "rc:") == 0 && !at.root_port.empty()) l.comment += ", root port " + at.root_port;
        p.links.push_back(l);
    }

    if (!skipped.empty()) {
        p.footer.push_back("");
        p.footer.push_back("Not imported (not a GPU, NIC or NVMe drive):");
        for (const auto& s : skipped) p.footer.push_back("  " + s);
    }
    std::vector<std::string> unused;
    for (const auto& bdf : listed) {
        if (is_bridge(devs.at(bdf)) && used_bridges.count(bdf) == 0) unused.push_back(bdf);
    }
    if (!unused.empty()) {
        p.footer.push_back("");
        p.footer.push_back("Bridges with no GPU, NIC or NVMe drive below (no nodes):");
        for (std::size_t i = 0; i < unused.size(); i += 6) {
            const auto last = std::min(unused.size(), i + 6);
            p.footer.push_back("  " + join(std::vector<std::string>(unused.begin() + static_cast<std::ptrdiff_t>(i),
                                                                    unused.begin() + static_cast<std::ptrdiff_t>(last)),
                                           " "));
        }
    }
    if (!omitted_hb.empty()) {
        p.footer.push_back("");
        p.footer.push_back("Host bridges with no GPU, NIC or NVMe drive below (no root complex): " +
                           join(omitted_hb, " "));
    }
    return emit(p);
}

// ---------------------------------------------------------------------------------------------
// nvidia-smi topo -m

namespace {

enum class Cls { kX, kNv, kPix, kPxb, kPhb, kNode, kSys };

struct Cell {
    Cls cls = Cls::kX;
    int nv = 0;  // links, for kNv
    std::string token;
};

std::optional<Cell> parse_cell(const std::string& t) {
    if (t == "X") return Cell{Cls::kX, 0, t};
    if (t == "PIX") return Cell{Cls::kPix, 0, t};
    if (t == "PXB") return Cell{Cls::kPxb, 0, t};
    if (t == "PHB") return Cell{Cls::kPhb, 0, t};
    if (t == "NODE") return Cell{Cls::kNode, 0, t};
    if (t == "SYS" || t == "SOC") return Cell{Cls::kSys, 0, t};  // SOC: older drivers' SYS
    if (t.size() > 2 && t.compare(0, 2, "NV") == 0) {
        const auto n = parse_int(t.substr(2));
        if (n && *n > 0) return Cell{Cls::kNv, static_cast<int>(*n), t};
    }
    return std::nullopt;
}

// What follows the matrix in a row: CPU affinity ("0-55,112-167"), NUMA affinity, "N/A".
bool affinity_like(const std::string& t) {
    return t == "N/A" || (!t.empty() && std::isdigit(static_cast<unsigned char>(t[0])));
}

bool is_gpu_label(const std::string& t) {
    return t.size() > 3 && t.compare(0, 3, "GPU") == 0 &&
           std::all_of(t.begin() + 3, t.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::string strip_escapes(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\x1b') {
            if (i + 1 < text.size() && text[i + 1] == '[') {
                i += 2;
                while (i < text.size() && !(text[i] >= '@' && text[i] <= '~')) ++i;
            } else {
                ++i;
            }
            continue;
        }
        if (c == '\r') continue;
        out += c;
    }
    return out;
}

struct UnionFind {
    std::vector<std::size_t> parent;
    explicit UnionFind(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
    std::size_t find(std::size_t x) {
        while (parent[x] != x) x = parent[x] = parent[parent[x]];
        return x;
    }
    // The smaller index stays the root: groups are named by their first device.
    void unite(std::size_t a, std::size_t b) {
        a = find(a);
        b = find(b);
        if (a == b) return;
        if (b < a) std::swap(a, b);
        parent[b] = a;
    }
    bool same(std::size_t a, std::size_t b) { return find(a) == find(b); }
};

struct SmiDevice {
    std::string label;  // GPU0, NIC0
    bool gpu = false;
    std::string cpu_affinity;
    std::optional<int> numa;
    std::string nic_name;  // from the NIC Legend
};

// Groups of `members` by `uf`, each sorted, in order of their first member.
std::vector<std::vector<std::size_t>> groups_of(UnionFind& uf, const std::vector<std::size_t>& members) {
    std::map<std::size_t, std::vector<std::size_t>> by_root;
    std::vector<std::size_t> order;
    for (const auto m : members) {
        const auto r = uf.find(m);
        if (by_root.count(r) == 0) order.push_back(r);
        by_root[r].push_back(m);
    }
    std::vector<std::vector<std::size_t>> out;
    for (const auto r : order) out.push_back(by_root[r]);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
    return out;
}

// The matrix of `nvidia-smi topo -m`: its devices in header order and the class of every pair,
// checked (a header, one full row per device, X on the diagonal only, symmetric, NV# between
// GPUs only).
struct SmiMatrix {
    std::vector<std::string> lines;  // the text without escape codes, line by line
    std::vector<SmiDevice> devs;
    std::map<std::string, std::size_t> index;  // label -> position
    std::vector<std::vector<Cell>> m;
    std::size_t rows_end = 0;  // the line after the last matrix row
};

SmiMatrix parse_smi_matrix(const std::string& text, const std::string& origin) {
    auto fail = [&](const std::string& message) { return InputError(origin, "", message); };
    SmiMatrix out;
    std::vector<std::string>& lines = out.lines;
    {
        std::istringstream in(strip_escapes(text));
        std::string line;
        while (std::getline(in, line)) lines.push_back(line);
    }

    // Header: the first line that starts with GPU0 (GPU1 ...), then the device columns up to
    // "CPU Affinity".
    std::size_t header = lines.size();
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const auto t = split_ws(lines[i]);
        if (t.empty() || !is_gpu_label(t[0])) continue;
        if (t.size() > 1 && parse_cell(t[1])) {
            throw fail("no header row: line " + std::to_string(i + 1) + " ('" + trim(lines[i]).substr(0, 40) +
                       "...') is a matrix row, and no row of device names (GPU0 GPU1 ... CPU Affinity) precedes it");
        }
        header = i;
        break;
    }
    if (header == lines.size()) {
        throw fail("no header row (GPU0 GPU1 ... CPU Affinity NUMA Affinity): not the output of nvidia-smi topo -m");
    }
    std::vector<SmiDevice>& devs = out.devs;
    std::map<std::string, std::size_t>& index = out.index;
    {
        const auto t = split_ws(lines[header]);
        for (std::size_t i = 0; i < t.size(); ++i) {
            if ((t[i] == "CPU" || t[i] == "NUMA" || t[i] == "GPU") && i + 1 < t.size() &&
                (t[i + 1] == "Affinity" || t[i + 1] == "NUMA")) {
                break;
            }
            if (parse_cell(t[i]) || affinity_like(t[i])) {
                throw fail("header row (line " + std::to_string(header + 1) + "): '" + t[i] + "' is not a device name");
            }
            if (index.count(t[i])) throw fail("header row: device " + t[i] + " appears twice");
            index[t[i]] = devs.size();
            SmiDevice d;
            d.label = t[i];
            d.gpu = is_gpu_label(t[i]);
            devs.push_back(d);
        }
    }
    const std::size_t n = devs.size();

    // Rows, up to the blank line (or "Legend:") after them.
    std::vector<std::vector<Cell>>& m = out.m;
    m.resize(n);
    std::vector<bool> seen(n, false);
    std::size_t rows_end = header + 1;
    for (; rows_end < lines.size(); ++rows_end) {
        const auto t = split_ws(lines[rows_end]);
        if (t.empty() || t[0] == "Legend:") break;
        const std::string where = "line " + std::to_string(rows_end + 1);
        const auto it = index.find(t[0]);
        if (it == index.end()) throw fail(where + ": '" + t[0] + "' is not a device of the header row");
        const std::size_t r = it->second;
        if (seen[r]) throw fail(where + ": a second row for " + t[0]);
        seen[r] = true;
        std::size_t k = 0;
        while (1 + k < t.size() && parse_cell(t[1 + k])) ++k;
        if (k < n) {
            if (1 + k < t.size() && !affinity_like(t[1 + k])) {
                throw fail(where + ": row " + t[0] + ", column " + devs[k].label + ": unknown class token '" +
                           t[1 + k] + "' (expected X, SYS, NODE, PHB, PXB, PIX or NV#)");
            }
            throw fail(where + ": ragged row: " + t[0] + " has " + std::to_string(k) + " entries, the header names " +
                       std::to_string(n) + " devices");
        }
        if (k > n || t.size() > 1 + n + 3) {
            throw fail(where + ": ragged row: " + t[0] + " has " + std::to_string(t.size() - 1) +
                       " fields, more than the header's " + std::to_string(n) +
                       " devices and CPU Affinity, NUMA Affinity, GPU NUMA ID");
        }
        for (std::size_t c = 0; c < n; ++c) m[r].push_back(*parse_cell(t[1 + c]));
        if (t.size() > 1 + n) devs[r].cpu_affinity = t[1 + n];
        if (t.size() > 2 + n) {
            if (const auto numa = parse_int(t[2 + n]); numa && *numa >= 0) devs[r].numa = static_cast<int>(*numa);
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (!seen[i]) throw fail("no row for " + devs[i].label + " (named in the header row)");
    }
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            const auto& c = m[i][j];
            if ((i == j) != (c.cls == Cls::kX)) {
                throw fail("row " + devs[i].label + ", column " + devs[j].label + ": '" + c.token + "' " +
                           (i == j ? "where X (the device itself) belongs" : "(X belongs on the diagonal only)"));
            }
            if (m[j][i].token != c.token) {
                throw fail(devs[i].label + " to " + devs[j].label + " is " + c.token + " but " + devs[j].label +
                           " to " + devs[i].label + " is " + m[j][i].token + ": the matrix is not symmetric");
            }
            if (c.cls == Cls::kNv && !(devs[i].gpu && devs[j].gpu)) {
                throw fail(devs[i].label + " to " + devs[j].label + " is " + c.token + ": NVLink joins GPUs only");
            }
        }
    }
    out.rows_end = rows_end;
    return out;
}

}  // namespace

std::string import_nvidia_smi_topo(const std::string& text, const std::string& origin, const std::string& name) {
    auto fail = [&](const std::string& message) { return InputError(origin, "", message); };
    SmiMatrix parsed = parse_smi_matrix(text, origin);
    const std::vector<std::string>& lines = parsed.lines;
    std::vector<SmiDevice>& devs = parsed.devs;
    const std::map<std::string, std::size_t>& index = parsed.index;
    const std::vector<std::vector<Cell>>& m = parsed.m;
    const std::size_t n = devs.size();
    const std::size_t rows_end = parsed.rows_end;

    // NIC Legend: "  NIC0: mlx5_0".
    for (std::size_t i = rows_end; i < lines.size(); ++i) {
        if (trim(lines[i]) != "NIC Legend:") continue;
        for (std::size_t j = i + 1; j < lines.size(); ++j) {
            const std::string l = trim(lines[j]);
            if (l.empty()) continue;
            const auto colon = l.find(':');
            if (colon == std::string::npos) break;
            const auto it = index.find(trim(l.substr(0, colon)));
            if (it == index.end()) break;
            devs[it->second].nic_name = trim(l.substr(colon + 1));
        }
        break;
    }

    // Groups, finest first: PIX share a switch; PXB (and PIX) share a top switch below one root
    // complex; PHB (and finer) a root complex; NODE (and finer) a socket.
    UnionFind pix(n), pxb(n), rc(n), sock(n);
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = i + 1; j < n; ++j) {
            switch (m[i][j].cls) {
                case Cls::kPix: pix.unite(i, j); [[fallthrough]];
                case Cls::kPxb: pxb.unite(i, j); [[fallthrough]];
                case Cls::kPhb: rc.unite(i, j); [[fallthrough]];
                case Cls::kNode: sock.unite(i, j); break;
                default: break;
            }
        }
    }
    std::map<int, std::size_t> first_of_numa;
    for (std::size_t i = 0; i < n; ++i) {
        if (!devs[i].numa) continue;
        const auto [it, fresh] = first_of_numa.emplace(*devs[i].numa, i);
        if (!fresh) sock.unite(it->second, i);
    }
    auto contradiction = [&](std::size_t i, std::size_t j, const char* joined) {
        return fail("contradictory classes: " + devs[i].label + " to " + devs[j].label + " is " + m[i][j].token +
                    ", but other entries put them " + joined);
    };
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = i + 1; j < n; ++j) {
            const Cls c = m[i][j].cls;
            if (c == Cls::kSys && sock.same(i, j)) throw contradiction(i, j, "on one socket (NUMA node)");
            if (c == Cls::kNode && rc.same(i, j)) throw contradiction(i, j, "under one host bridge");
            if (c == Cls::kPhb && pxb.same(i, j)) throw contradiction(i, j, "under one PCIe switch tree");
            if (c == Cls::kPxb && pix.same(i, j)) throw contradiction(i, j, "on one PCIe switch");
        }
    }
    // Pairs the matrix says nothing about (NV# hides the PCIe path): the fewest nodes that fit,
    // so groups with no SYS between them (and no different NUMA node) share a socket, and groups
    // with no NODE between them a root complex.
    std::vector<std::size_t> all(n);
    std::iota(all.begin(), all.end(), 0);
    auto numa_of_group = [&](const std::vector<std::size_t>& g) -> std::optional<int> {
        for (const auto i : g) {
            if (devs[i].numa) return devs[i].numa;
        }
        return std::nullopt;
    };
    auto any_pair = [&](const std::vector<std::size_t>& a, const std::vector<std::size_t>& b, Cls c) {
        for (const auto i : a) {
            for (const auto j : b) {
                if (m[i][j].cls == c) return true;
            }
        }
        return false;
    };
    auto merge_unknown = [&](UnionFind& uf, const std::vector<std::size_t>& members, Cls apart, bool check_numa) {
        auto groups = groups_of(uf, members);
        std::vector<std::vector<std::size_t>> merged;
        for (auto& g : groups) {
            bool done = false;
            for (auto& h : merged) {
                if (any_pair(g, h, apart)) continue;
                if (check_numa) {
                    const auto a = numa_of_group(g);
                    const auto b = numa_of_group(h);
                    if (a && b && *a != *b) continue;
                }
                uf.unite(g.front(), h.front());
                h.insert(h.end(), g.begin(), g.end());
                done = true;
                break;
            }
            if (!done) merged.push_back(g);
        }
    };
    merge_unknown(sock, all, Cls::kSys, true);
    auto socket_groups = groups_of(sock, all);
    std::stable_sort(socket_groups.begin(), socket_groups.end(), [&](const auto& a, const auto& b) {
        const int na = numa_of_group(a).value_or(std::numeric_limits<int>::max());
        const int nb = numa_of_group(b).value_or(std::numeric_limits<int>::max());
        return std::make_pair(na, a.front()) < std::make_pair(nb, b.front());
    });
    for (const auto& g : socket_groups) merge_unknown(rc, g, Cls::kNode, false);

    OutPlatform p;
    p.name = name;
    p.description = "imported from nvidia-smi topo -m";
    p.header = {"Imported by dmasim from the nvidia-smi topo -m output " + origin + ".",
                "The PCIe hierarchy is the smallest one whose route classes are the matrix's: PIX share a switch,",
                "PXB a parent switch, PHB a root complex, NODE a socket, SYS different sockets. PCIe links carry",
                "no generation/lanes (the matrix does not show them): the scenario's link settings apply."};

    std::vector<std::string> dev_node(n);
    int gpus = 0;
    int nics = 0;
    for (std::size_t i = 0; i < n; ++i) dev_node[i] = devs[i].gpu ? "gpu" + std::to_string(gpus++) : "nic" + std::to_string(nics++);
    std::vector<int> dev_socket(n, 0);

    std::vector<OutNode> cpus, rcs, sws;
    std::vector<OutLink> internal, sockets, pcie;
    std::vector<std::vector<std::string>> rcs_by_socket(socket_groups.size());
    auto labels = [&](const std::vector<std::size_t>& g) {
        std::vector<std::string> out;
        for (const auto i : g) out.push_back(devs[i].label);
        return join(out, " ");
    };
    for (std::size_t s = 0; s < socket_groups.size(); ++s) {
        const auto& sg = socket_groups[s];
        const int socket = static_cast<int>(s);
        const std::string cpu = "cpu" + std::to_string(s);
        std::string c;
        if (const auto numa = numa_of_group(sg)) c = "NUMA node " + std::to_string(*numa);
        else c = "NUMA node not shown";
        for (const auto i : sg) {
            if (!devs[i].cpu_affinity.empty() && devs[i].cpu_affinity != "N/A") {
                c += ", CPUs " + devs[i].cpu_affinity;
                break;
            }
        }
        cpus.push_back({cpu, "cpu", socket, c});
        for (const auto& rg : groups_of(rc, sg)) {
            const std::string rcn = "rc" + std::to_string(rcs.size());
            rcs.push_back({rcn, "root_complex", socket, "PHB: " + labels(rg)});
            internal.push_back({cpu, rcn, "internal", {}, {}, {}, ""});
            rcs_by_socket[s].push_back(rcn);
            for (const auto& xg : groups_of(pxb, rg)) {
                const auto pixes = groups_of(pix, xg);
                auto hang = [&](const std::string& parent, const std::vector<std::size_t>& g) {
                    for (const auto i : g) {
                        dev_socket[i] = socket;
                        pcie.push_back({parent, dev_node[i], "pcie", {}, {}, {}, ""});
                    }
                };
                auto add_switch = [&](const std::string& parent, const std::string& comment) {
                    const std::string sw = "sw" + std::to_string(sws.size());
                    sws.push_back({sw, "switch", socket, comment});
                    pcie.push_back({parent, sw, "pcie", {}, {}, {}, ""});
                    return sw;
                };
                if (pixes.size() == 1) {
                    if (xg.size() == 1) hang(rcn, xg);
                    else hang(add_switch(rcn, "PIX: " + labels(xg)), xg);
                } else {
                    const std::string top = add_switch(rcn, "PXB: " + labels(xg));
                    for (const auto& g : pixes) hang(add_switch(top, "PIX: " + labels(g)), g);
                }
            }
        }
    }
    sockets = root_complex_fabric(rcs_by_socket);

    // NVLink: one NVSwitch when every GPU pair shows the same bond NV# and the GPUs could not
    // have that many direct links (# x (GPUs - 1) > 18, the most any GPU has); bonds otherwise.
    std::vector<std::size_t> gpu_idx;
    for (std::size_t i = 0; i < n; ++i) {
        if (devs[i].gpu) gpu_idx.push_back(i);
    }
    std::optional<int> uniform;
    bool all_nv = gpu_idx.size() >= 2;
    for (std::size_t a = 0; a < gpu_idx.size() && all_nv; ++a) {
        for (std::size_t b = a + 1; b < gpu_idx.size() && all_nv; ++b) {
            const auto& c = m[gpu_idx[a]][gpu_idx[b]];
            if (c.cls != Cls::kNv || (uniform && *uniform != c.nv)) all_nv = false;
            else uniform = c.nv;
        }
    }
    constexpr int kMaxNvlinksPerGpu = 18;
    const bool nvswitch = all_nv && gpu_idx.size() >= 3 &&
                          *uniform * static_cast<int>(gpu_idx.size() - 1) > kMaxNvlinksPerGpu;
    std::vector<OutLink> nvlinks;
    if (nvswitch) {
        for (const auto i : gpu_idx) {
            nvlinks.push_back({dev_node[i], "nvsw0", "nvlink", {}, {}, *uniform,
                               "every GPU pair NV" + std::to_string(*uniform)});
        }
    } else {
        for (std::size_t a = 0; a < gpu_idx.size(); ++a) {
            for (std::size_t b = a + 1; b < gpu_idx.size(); ++b) {
                const auto& c = m[gpu_idx[a]][gpu_idx[b]];
                if (c.cls != Cls::kNv) continue;
                nvlinks.push_back({dev_node[gpu_idx[a]], dev_node[gpu_idx[b]], "nvlink", {}, {}, c.nv,
                                   devs[gpu_idx[a]].label + "-" + devs[gpu_idx[b]].label + " " + c.token});
            }
        }
    }

    p.nodes = cpus;
    p.nodes.insert(p.nodes.end(), rcs.begin(), rcs.end());
    p.nodes.insert(p.nodes.end(), sws.begin(), sws.end());
    if (nvswitch) {
        p.nodes.push_back({"nvsw0", "nvswitch", std::nullopt,
                           "every GPU pair NV" + std::to_string(*uniform) + ": more links than direct bonds allow"});
    }
    for (const bool gpu : {true, false}) {
        for (std::size_t i = 0; i < n; ++i) {
            if (devs[i].gpu != gpu) continue;
            std::string c = devs[i].label;
            if (!devs[i].nic_name.empty()) c += " " + devs[i].nic_name;
            if (devs[i].numa) c += ", NUMA " + std::to_string(*devs[i].numa);
            p.nodes.push_back({dev_node[i], gpu ? "gpu" : "nic", dev_socket[i], c});
        }
    }
    p.links = internal;
    p.links.insert(p.links.end(), sockets.begin(), sockets.end());
    p.links.insert(p.links.end(), pcie.begin(), pcie.end());
    p.links.insert(p.links.end(), nvlinks.begin(), nvlinks.end());
    return emit(p);
}

SmiTopology read_nvidia_smi_topo(const std::string& text, const std::string& origin) {
    const SmiMatrix parsed = parse_smi_matrix(text, origin);
    SmiTopology out;
    for (const auto& d : parsed.devs) out.devices.push_back(d.label);
    for (const auto& row : parsed.m) {
        out.classes.emplace_back();
        for (const auto& c : row) out.classes.back().push_back(c.token == "SOC" ? "SYS" : c.token);
    }
    return out;
}

std::string SmiTopology::route_class(const std::string& a, const std::string& b) const {
    const auto ia = std::find(devices.begin(), devices.end(), a);
    const auto ib = std::find(devices.begin(), devices.end(), b);
    if (ia == devices.end() || ib == devices.end()) return {};
    return classes[static_cast<std::size_t>(ia - devices.begin())][static_cast<std::size_t>(ib - devices.begin())];
}

}  // namespace dmasim::topology
