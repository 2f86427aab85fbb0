#include "dmasim/topology/import.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <queue>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dmasim/config/params.h"
#include "dmasim/core/error.h"
#include "dmasim/topology/platform_file.h"

namespace dmasim::topology {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& rel) { return std::string(DMASIM_SOURCE_DIR) + "/tests/topology/fixtures/" + rel; }

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in) << path;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// A fresh directory under the test temp dir, removed again by the destructor.
struct TempTree {
    fs::path root;
    explicit TempTree(const std::string& tag) {
        root = fs::path(::testing::TempDir()) / ("dmasim-import-" + tag + "-" + std::to_string(::getpid()));
        fs::remove_all(root);
        fs::create_directories(root);
    }
    ~TempTree() {
        std::error_code ec;
        fs::remove_all(root, ec);
    }
    void write(const std::string& rel, const std::string& text) const {
        fs::create_directories((root / rel).parent_path());
        std::ofstream(root / rel) << text << "\n";
    }
};

// The platform file an importer wrote, read back with yaml-cpp.
struct Imported {
    struct Link {
        std::string a, b, kind;
        YAML::Node node;
    };
    YAML::Node doc;
    std::vector<std::string> order;  // node names in file order
    std::map<std::string, std::string> kind;
    std::map<std::string, int> socket;
    std::vector<Link> links;

    explicit Imported(const std::string& text) : doc(YAML::Load(text)) {
        for (const auto& n : doc["nodes"]) {
            const auto name = n["name"].as<std::string>();
            order.push_back(name);
            kind[name] = n["kind"].as<std::string>();
            socket[name] = n["socket"] ? n["socket"].as<int>() : 0;
        }
        for (const auto& l : doc["links"]) {
            links.push_back({l["a"].as<std::string>(), l["b"].as<std::string>(),
                             l["kind"] ? l["kind"].as<std::string>() : "pcie", l});
        }
    }
    int count(const std::string& k) const {
        return static_cast<int>(std::count_if(kind.begin(), kind.end(), [&](const auto& e) { return e.second == k; }));
    }
    std::vector<const Link*> links_of(const std::string& n, const std::string& k) const {
        std::vector<const Link*> out;
        for (const auto& l : links) {
            if ((l.a == n || l.b == n) && l.kind == k) out.push_back(&l);
        }
        return out;
    }
    const Link* between(const std::string& x, const std::string& y) const {
        for (const auto& l : links) {
            if ((l.a == x && l.b == y) || (l.a == y && l.b == x)) return &l;
        }
        return nullptr;
    }
    // Fewest-hop path over PCIe, internal and socket links (NVLink left out).
    std::vector<std::string> pcie_path(const std::string& from, const std::string& to) const {
        std::map<std::string, std::string> prev{{from, ""}};
        std::queue<std::string> q;
        q.push(from);
        while (!q.empty()) {
            const auto at = q.front();
            q.pop();
            for (const auto& l : links) {
                if (l.kind == "nvlink" || (l.a != at && l.b != at)) continue;
                const auto next = l.a == at ? l.b : l.a;
                if (prev.emplace(next, at).second) q.push(next);
            }
        }
        std::vector<std::string> path;
        if (prev.count(to) == 0) return path;
        for (std::string n = to; !n.empty(); n = prev.at(n)) path.push_back(n);
        std::reverse(path.begin(), path.end());
        return path;
    }
    // The node above `n`, on its path to cpu0.
    std::string parent(const std::string& n) const {
        const auto path = pcie_path("cpu0", n);
        return path.size() >= 2 ? path[path.size() - 2] : "";
    }
    // The route class (docs/platforms.md) of the PCIe route between two devices.
    std::string route_class(const std::string& x, const std::string& y) const {
        const auto path = pcie_path(x, y);
        if (path.empty()) return "unreachable";
        int switches = 0, rcs = 0;
        bool other_socket = false;
        for (std::size_t i = 0; i < path.size(); ++i) {
            if (i > 0 && socket.at(path[i - 1]) != socket.at(path[i])) other_socket = true;
            if (i == 0 || i + 1 == path.size()) continue;
            const auto& k = kind.at(path[i]);
            switches += k == "switch";
            rcs += k == "root_complex";
        }
        if (other_socket) return "SYS";
        if (rcs >= 2) return "NODE";
        if (rcs == 1) return "PHB";
        return switches >= 2 ? "PXB" : "PIX";
    }
};

// The text line of a node (its comment carries the BDF or the nvidia-smi label).
std::string node_line(const std::string& yaml, const std::string& name) {
    std::istringstream in(yaml);
    for (std::string line; std::getline(in, line);) {
        if (line.find("{ name: " + name + ",") != std::string::npos) return line;
    }
    return "";
}

// `nvidia-smi topo -m` read independently of the importer: device labels and matrix cells.
struct Matrix {
    std::vector<std::string> labels;
    std::vector<std::vector<std::string>> cells;
};

// The text without its SGR escape codes (ESC [ ... m), as a terminal shows it.
std::string without_escapes(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
            i = text.find('m', i);
            if (i == std::string::npos) break;
            continue;
        }
        out += text[i];
    }
    return out;
}

Matrix parse_matrix(const std::string& text) {
    const std::string clean = without_escapes(text);
    std::istringstream in(clean);
    Matrix m;
    std::string line;
    while (std::getline(in, line) && line.find("CPU Affinity") == std::string::npos) {
    }
    std::istringstream h(line);
    for (std::string t; h >> t && t != "CPU";) m.labels.push_back(t);
    for (std::size_t r = 0; r < m.labels.size() && std::getline(in, line); ++r) {
        std::istringstream row(line);
        std::string t;
        row >> t;
        EXPECT_EQ(t, m.labels[r]);
        m.cells.emplace_back();
        for (std::size_t c = 0; c < m.labels.size() && row >> t; ++c) m.cells.back().push_back(t);
    }
    return m;
}

// GPUk -> gpuk, NICk -> nick.
std::string node_of(const std::string& label) {
    std::string s = label;
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// Every pair's route class in the imported platform is the one the matrix shows (NV# pairs: an
// NVLink path exists instead).
void expect_classes_round_trip(const std::string& text, const Imported& p) {
    const Matrix m = parse_matrix(text);
    ASSERT_FALSE(m.labels.empty());
    for (std::size_t i = 0; i < m.labels.size(); ++i) {
        for (std::size_t j = i + 1; j < m.labels.size(); ++j) {
            const auto& want = m.cells[i][j];
            const auto x = node_of(m.labels[i]);
            const auto y = node_of(m.labels[j]);
            if (want.rfind("NV", 0) == 0) continue;
            EXPECT_EQ(p.route_class(x, y), want) << m.labels[i] << " - " << m.labels[j];
        }
    }
}

// The project's own platform-file reader takes the text, with the same nodes and links; where
// no NVLink is on the graph (routes cannot detour through a GPU), it agrees on every device
// pair's route class.
void expect_loads(const std::string& yaml, const Imported& p, bool compare_classes) {
    const Platform plat = parse_platform(yaml, "imported.yaml", config::ModelParams{});
    EXPECT_EQ(boost::num_vertices(plat.graph()), p.order.size());
    EXPECT_EQ(boost::num_edges(plat.graph()), p.links.size());
    if (!compare_classes) return;
    std::vector<std::string> devs;
    for (const auto& n : p.order) {
        const auto& k = p.kind.at(n);
        if (k == "gpu" || k == "nic" || k == "nvme") devs.push_back(n);
    }
    for (std::size_t i = 0; i < devs.size(); ++i) {
        for (std::size_t j = i + 1; j < devs.size(); ++j) {
            EXPECT_EQ(route_class(plat, plat.at(devs[i]), plat.at(devs[j])), p.route_class(devs[i], devs[j]))
                << devs[i] << " - " << devs[j];
        }
    }
}

// The strongest round trip: the project's own reader and route classes give back every cell of
// the matrix the platform was imported from, X and NV# included.
void expect_matrix_from_loader(const std::string& text, const std::string& yaml) {
    const Matrix m = parse_matrix(text);
    ASSERT_FALSE(m.labels.empty());
    const Platform plat = parse_platform(yaml, "imported.yaml", config::ModelParams{});
    for (std::size_t i = 0; i < m.labels.size(); ++i) {
        for (std::size_t j = 0; j < m.labels.size(); ++j) {
            EXPECT_EQ(route_class(plat, plat.at(node_of(m.labels[i])), plat.at(node_of(m.labels[j]))), m.cells[i][j])
                << m.labels[i] << " - " << m.labels[j];
        }
    }
}

template <class F>
std::string input_error_of(F&& f) {
    try {
        f();
    } catch (const core::InputError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("not an InputError: ") + e.what();
    }
    return "no exception";
}

// --------------------------------------------------------------------------------------------
// sysfs

TEST(ImportSysfs, LentH100VmFlatTree) {
    const std::string yaml = import_sysfs(fixture("h100-vm-sysfs"), "h100-vm");
    const Imported p(yaml);
    EXPECT_EQ(p.doc["name"].as<std::string>(), "h100-vm");
    EXPECT_NE(p.doc["description"].as<std::string>().find("sysfs"), std::string::npos);
    EXPECT_EQ(p.count("cpu"), 1);
    EXPECT_EQ(p.count("root_complex"), 1);
    EXPECT_EQ(p.count("switch"), 0);
    EXPECT_EQ(p.count("gpu"), 1);
    EXPECT_EQ(p.count("nic"), 1);  // 00:03.0, class 0x020000 (virtio-net)
    EXPECT_EQ(p.count("nvme"), 0);
    EXPECT_EQ(p.order.size(), 4U);

    ASSERT_NE(p.between("cpu0", "rc0"), nullptr);
    EXPECT_EQ(p.between("cpu0", "rc0")->kind, "internal");
    const auto gpu = p.links_of("gpu0", "pcie");
    ASSERT_EQ(gpu.size(), 1U);
    EXPECT_TRUE(gpu[0]->a == "rc0" || gpu[0]->b == "rc0");
    EXPECT_EQ(gpu[0]->node["generation"].as<int>(), 5);
    EXPECT_EQ(gpu[0]->node["lanes"].as<int>(), 16);
    EXPECT_NE(node_line(yaml, "gpu0").find("0000:00:06.0"), std::string::npos);
    // The virtio NIC reports no link: no generation or lanes (the scenario's apply).
    const auto nic = p.links_of("nic0", "pcie");
    ASSERT_EQ(nic.size(), 1U);
    EXPECT_TRUE(nic[0]->a == "rc0" || nic[0]->b == "rc0");
    EXPECT_FALSE(nic[0]->node["generation"]);
    EXPECT_FALSE(nic[0]->node["lanes"]);
    EXPECT_NE(node_line(yaml, "nic0").find("0000:00:03.0"), std::string::npos);
    for (const auto& [name, s] : p.socket) EXPECT_EQ(s, 0) << name;
    // The rest is listed as not imported: the host bridge device, virtio block devices, unknown class.
    for (const char* bdf : {"0000:00:00.0", "0000:00:01.0", "0000:00:02.0", "0000:00:04.0", "0000:00:05.0"}) {
        const auto at = yaml.find(std::string("#   ") + bdf);
        EXPECT_NE(at, std::string::npos) << bdf << " not listed as skipped";
    }
    EXPECT_NE(yaml.find("0000:00:00.0  8086:0d57  class 0x060000  host bridge"), std::string::npos);
    expect_loads(yaml, p, true);
}

TEST(ImportSysfs, DeepTreeCollapsesSwitchPortsAndSplitsSockets) {
    const std::string yaml = import_sysfs(fixture("dgx-like-sysfs"), "dgx-like");
    const Imported p(yaml);
    EXPECT_EQ(p.count("cpu"), 2);
    EXPECT_EQ(p.count("root_complex"), 2);
    EXPECT_EQ(p.count("switch"), 1);  // one upstream + three downstream ports
    EXPECT_EQ(p.count("gpu"), 2);
    EXPECT_EQ(p.count("nic"), 1);
    EXPECT_EQ(p.count("nvme"), 1);
    EXPECT_EQ(p.order.size(), 9U);  // no nodes for root ports or the host bridge device

    // Numbered in PCI order.
    EXPECT_NE(node_line(yaml, "gpu0").find("0000:03:00.0"), std::string::npos);
    EXPECT_NE(node_line(yaml, "gpu1").find("0000:04:00.0"), std::string::npos);
    EXPECT_NE(node_line(yaml, "rc0").find("pci0000:00"), std::string::npos);
    EXPECT_NE(node_line(yaml, "rc1").find("pci0000:80"), std::string::npos);

    EXPECT_EQ(p.socket.at("cpu0"), 0);
    EXPECT_EQ(p.socket.at("cpu1"), 1);
    EXPECT_EQ(p.socket.at("rc1"), 1);
    EXPECT_EQ(p.socket.at("sw0"), 0);
    EXPECT_EQ(p.socket.at("nvme0"), 1);
    EXPECT_EQ(p.between("cpu0", "rc0")->kind, "internal");
    EXPECT_EQ(p.between("cpu1", "rc1")->kind, "internal");
    ASSERT_NE(p.between("rc0", "rc1"), nullptr);
    EXPECT_EQ(p.between("rc0", "rc1")->kind, "socket");

    const auto up = p.between("rc0", "sw0");
    ASSERT_NE(up, nullptr);
    EXPECT_EQ(up->kind, "pcie");
    EXPECT_EQ(up->node["generation"].as<int>(), 5);
    EXPECT_EQ(up->node["lanes"].as<int>(), 16);
    for (const char* dev : {"gpu0", "gpu1", "nic0"}) {
        const auto l = p.links_of(dev, "pcie");
        ASSERT_EQ(l.size(), 1U) << dev;
        EXPECT_EQ(p.parent(dev), "sw0") << dev;
        EXPECT_EQ(l[0]->node["generation"].as<int>(), 5) << dev;
        EXPECT_EQ(l[0]->node["lanes"].as<int>(), 16) << dev;
    }
    const auto nvme = p.links_of("nvme0", "pcie");
    ASSERT_EQ(nvme.size(), 1U);
    EXPECT_EQ(p.parent("nvme0"), "rc1");  // under a root port: straight to the root complex
    EXPECT_EQ(nvme[0]->node["generation"].as<int>(), 4);
    EXPECT_EQ(nvme[0]->node["lanes"].as<int>(), 4);
    EXPECT_EQ(p.links.size(), 8U);

    EXPECT_EQ(p.route_class("gpu0", "gpu1"), "PIX");
    EXPECT_EQ(p.route_class("gpu0", "nvme0"), "SYS");
    EXPECT_EQ(yaml, import_sysfs(fixture("dgx-like-sysfs"), "dgx-like"));
    expect_loads(yaml, p, true);
}

TEST(ImportSysfs, AbsoluteLinksResolveInsideRootAndThePortFillsInTheLink) {
    TempTree t("abs");
    const std::string rp = "sys/devices/pci0000:00/0000:00:02.0";
    t.write(rp + "/class", "0x060400");
    t.write(rp + "/current_link_speed", "16.0 GT/s PCIe");
    t.write(rp + "/current_link_width", "8");
    t.write(rp + "/0000:01:00.0/class", "0x030000");  // a GPU with no link attributes of its own
    t.write(rp + "/0000:01:00.1/class", "0x040300");  // its audio function
    t.write("sys/devices/pci0000:00/0000:00:03.0/class", "0x060400");
    t.write("sys/devices/pci0000:00/0000:00:03.0/0000:02:00.0/class", "0x010802");
    t.write("sys/devices/pci0000:00/0000:00:03.0/0000:02:00.0/current_link_speed", "Unknown");
    t.write("sys/devices/pci0000:00/0000:00:03.0/0000:02:00.0/current_link_width", "0");
    fs::create_directories(t.root / "sys/bus/pci/devices");
    for (const char* d : {"0000:00:02.0/0000:01:00.0", "0000:00:02.0/0000:01:00.1", "0000:00:02.0", "0000:00:03.0",
                          "0000:00:03.0/0000:02:00.0"}) {
        const fs::path rel(d);
        fs::create_symlink(fs::path("/sys/devices/pci0000:00") / rel, t.root / "sys/bus/pci/devices" / rel.filename());
    }
    const std::string yaml = import_sysfs(t.root.string(), "abs");
    const Imported p(yaml);
    EXPECT_EQ(p.count("gpu"), 1);
    EXPECT_EQ(p.count("nvme"), 1);
    EXPECT_EQ(p.order.size(), 4U);
    const auto gpu = p.links_of("gpu0", "pcie");
    ASSERT_EQ(gpu.size(), 1U);
    EXPECT_EQ(p.parent("gpu0"), "rc0");
    EXPECT_EQ(gpu[0]->node["generation"].as<int>(), 4);  // the root port's end of the link
    EXPECT_EQ(gpu[0]->node["lanes"].as<int>(), 8);
    const auto nvme = p.links_of("nvme0", "pcie");
    ASSERT_EQ(nvme.size(), 1U);
    EXPECT_FALSE(nvme[0]->node["generation"]);  // "Unknown"
    EXPECT_FALSE(nvme[0]->node["lanes"]);       // 0
    EXPECT_NE(yaml.find("0000:01:00.1"), std::string::npos);
    EXPECT_NE(yaml.find("audio device"), std::string::npos);
    expect_loads(yaml, p, true);
}

TEST(ImportSysfs, MissingTreeIsAnInputErrorNamingTheRoot) {
    const std::string root = "/nonexistent/dmasim-import-test";
    try {
        import_sysfs(root, "x");
        FAIL() << "no exception";
    } catch (const core::InputError& e) {
        EXPECT_EQ(e.file(), root);
        EXPECT_NE(std::string(e.what()).find(root), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("sys/bus/pci/devices"), std::string::npos) << e.what();
    }
}

TEST(ImportSysfs, EmptyDevicesDirectoryIsAnInputError) {
    TempTree t("empty");
    fs::create_directories(t.root / "sys/bus/pci/devices");
    const std::string what = input_error_of([&] { import_sysfs(t.root.string(), "x"); });
    EXPECT_EQ(what.rfind(t.root.string() + ": ", 0), 0U) << what;
    EXPECT_NE(what.find("empty"), std::string::npos) << what;
}

TEST(ImportSysfs, BrokenLinkIsAnInputErrorNamingTheDevice) {
    TempTree t("broken");
    fs::create_directories(t.root / "sys/bus/pci/devices");
    fs::create_symlink("../../../devices/pci0000:00/0000:00:05.0", t.root / "sys/bus/pci/devices/0000:00:05.0");
    const std::string what = input_error_of([&] { import_sysfs(t.root.string(), "x"); });
    EXPECT_EQ(what.rfind(t.root.string() + ": ", 0), 0U) << what;
    EXPECT_NE(what.find("0000:00:05.0"), std::string::npos) << what;
}

// --------------------------------------------------------------------------------------------
// nvidia-smi topo -m

TEST(ImportNvidiaSmi, LentH100) {
    const std::string text = slurp(fixture("nvidia-smi-topo/h100.txt"));
    const std::string yaml = import_nvidia_smi_topo(text, "h100.txt", "h100 \"lent\": VM");
    const Imported p(yaml);
    EXPECT_EQ(p.doc["name"].as<std::string>(), "h100 \"lent\": VM");  // quoted where it must be
    EXPECT_EQ(p.count("cpu"), 1);
    EXPECT_EQ(p.count("root_complex"), 1);
    EXPECT_EQ(p.count("gpu"), 1);
    EXPECT_EQ(p.order.size(), 3U);
    EXPECT_EQ(p.between("cpu0", "rc0")->kind, "internal");
    const auto l = p.between("rc0", "gpu0");
    ASSERT_NE(l, nullptr);
    EXPECT_EQ(l->kind, "pcie");
    EXPECT_FALSE(l->node["generation"]);  // not in the matrix
    EXPECT_EQ(p.links.size(), 2U);
    expect_loads(yaml, p, true);
    expect_matrix_from_loader(text, yaml);
}

TEST(ImportNvidiaSmi, H200PairIsOneNvlinkBondOnOneRootComplex) {
    const std::string text = slurp(fixture("nvidia-smi-topo/h200x2.txt"));
    const std::string yaml = import_nvidia_smi_topo(text, "h200x2.txt", "h200x2");
    const Imported p(yaml);
    EXPECT_EQ(p.count("gpu"), 2);
    EXPECT_EQ(p.count("cpu"), 1);
    EXPECT_EQ(p.count("root_complex"), 1);
    EXPECT_EQ(p.count("switch"), 0);
    EXPECT_EQ(p.count("nvswitch"), 0);
    const auto nv = p.between("gpu0", "gpu1");
    ASSERT_NE(nv, nullptr);
    EXPECT_EQ(nv->kind, "nvlink");
    EXPECT_EQ(nv->node["links"].as<int>(), 18);
    EXPECT_EQ(p.parent("gpu0"), "rc0");
    EXPECT_EQ(p.parent("gpu1"), "rc0");
    EXPECT_EQ(p.route_class("gpu0", "gpu1"), "PHB");  // the PCIe route NV18 hides
    expect_matrix_from_loader(text, yaml);
}

TEST(ImportNvidiaSmi, DgxH100) {
    const std::string text = slurp(fixture("nvidia-smi-topo/dgx-h100.txt"));
    const std::string yaml = import_nvidia_smi_topo(text, "dgx-h100.txt", "dgx-h100");
    const Imported p(yaml);
    EXPECT_EQ(p.count("gpu"), 8);
    EXPECT_EQ(p.count("nic"), 8);
    EXPECT_EQ(p.count("cpu"), 2);
    EXPECT_EQ(p.count("root_complex"), 4);
    EXPECT_EQ(p.count("switch"), 12);  // 4 switch trees of a parent and two leaves
    ASSERT_EQ(p.count("nvswitch"), 1);

    int nvlinks = 0;
    for (const auto& l : p.links) {
        if (l.kind != "nvlink") continue;
        ++nvlinks;
        EXPECT_TRUE(p.kind.at(l.a) == "nvswitch" || p.kind.at(l.b) == "nvswitch");
        EXPECT_EQ(l.node["links"].as<int>(), 18);
    }
    EXPECT_EQ(nvlinks, 8);
    for (int g = 0; g < 8; ++g) EXPECT_EQ(p.links_of("gpu" + std::to_string(g), "nvlink").size(), 1U);

    for (int i = 0; i < 8; ++i) {
        const auto gpu = "gpu" + std::to_string(i);
        const auto nic = "nic" + std::to_string(i);
        EXPECT_EQ(p.socket.at(gpu), i < 4 ? 0 : 1) << gpu;
        EXPECT_EQ(p.socket.at(nic), i < 4 ? 0 : 1) << nic;
        EXPECT_EQ(p.kind.at(p.parent(gpu)), "switch") << gpu;
        EXPECT_EQ(p.parent(gpu), p.parent(nic)) << gpu << " and " << nic << " are PIX";
        EXPECT_EQ(p.socket.at(p.parent(gpu)), i < 4 ? 0 : 1);
        EXPECT_NE(node_line(yaml, nic).find("mlx5_" + std::to_string(i)), std::string::npos) << "NIC Legend";
    }
    for (int pair = 0; pair < 4; ++pair) {
        const auto a = "gpu" + std::to_string(2 * pair);
        const auto b = "gpu" + std::to_string(2 * pair + 1);
        EXPECT_NE(p.parent(a), p.parent(b));
        EXPECT_EQ(p.parent(p.parent(a)), p.parent(p.parent(b))) << a << " " << b << " share a parent switch";
        EXPECT_EQ(p.kind.at(p.parent(p.parent(a))), "switch");
    }
    const auto rc_of = [&](const std::string& gpu) { return p.parent(p.parent(p.parent(gpu))); };
    EXPECT_NE(rc_of("gpu0"), rc_of("gpu2"));
    EXPECT_EQ(p.kind.at(rc_of("gpu0")), "root_complex");
    EXPECT_EQ(p.socket.at(rc_of("gpu2")), 0);
    EXPECT_EQ(p.socket.at(rc_of("gpu6")), 1);
    // Root complexes joined directly (packets do not cross the CPU nodes' internal links): within
    // each socket, and the sockets' first ones to each other.
    int socket_links = 0;
    for (const auto& l : p.links) socket_links += l.kind == "socket";
    EXPECT_EQ(socket_links, 3);
    ASSERT_NE(p.between(rc_of("gpu0"), rc_of("gpu2")), nullptr);
    EXPECT_EQ(p.between(rc_of("gpu0"), rc_of("gpu2"))->kind, "socket");
    EXPECT_EQ(p.between(rc_of("gpu0"), rc_of("gpu2"))->node["bandwidth"].as<std::string>(), "256GB/s");
    ASSERT_NE(p.between(rc_of("gpu0"), rc_of("gpu4")), nullptr);
    EXPECT_FALSE(p.between(rc_of("gpu0"), rc_of("gpu4"))->node["bandwidth"]);  // the default UPI values
    for (const auto& path : {p.pcie_path("gpu2", "gpu0"), p.pcie_path("nic7", "nic1")}) {
        for (const auto& n : path) EXPECT_NE(p.kind.at(n), "cpu");
    }
    EXPECT_EQ(p.route_class("gpu0", "nic4"), "SYS");
    expect_classes_round_trip(text, p);
    expect_loads(yaml, p, false);
    expect_matrix_from_loader(text, yaml);
}

TEST(ImportNvidiaSmi, EveryClassRoundTripsAndMixedBondsArePairwise) {
    // Socket 0: GPU0, GPU1 (NV4 pair), GPU2 + NIC0 below one root complex, GPU2/NIC0 on different
    // switches of one tree (PXB); GPU3 + NIC1 on one switch under another root complex (NODE).
    // Socket 1: an NV12-bridged GPU4/GPU5 pair whose PCIe route the matrix hides.
    const std::string text =
        "\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
        "GPU0\t X \tNV4\tPHB\tNODE\tSYS\tSYS\tPHB\tNODE\t0-15\t0\t\tN/A\n"
        "GPU1\tNV4\t X \tPHB\tNODE\tSYS\tSYS\tPHB\tNODE\t0-15\t0\t\tN/A\n"
        "GPU2\tPHB\tPHB\t X \tNODE\tSYS\tSYS\tPXB\tNODE\t0-15\t0\t\tN/A\n"
        "GPU3\tNODE\tNODE\tNODE\t X \tSYS\tSYS\tNODE\tPIX\t0-15\t0\t\tN/A\n"
        "GPU4\tSYS\tSYS\tSYS\tSYS\t X \tNV12\tSYS\tSYS\t16-31\t1\t\tN/A\n"
        "GPU5\tSYS\tSYS\tSYS\tSYS\tNV12\t X \tSYS\tSYS\t16-31\t1\t\tN/A\n"
        "NIC0\tPHB\tPHB\tPXB\tNODE\tSYS\tSYS\t X \tNODE\n"
        "NIC1\tNODE\tNODE\tNODE\tPIX\tSYS\tSYS\tNODE\t X \n"
        "\nLegend:\n\n  X    = Self\n";
    const std::string yaml = import_nvidia_smi_topo(text, "inline", "mixed");
    const Imported p(yaml);
    EXPECT_EQ(p.count("cpu"), 2);
    EXPECT_EQ(p.count("root_complex"), 3);
    EXPECT_EQ(p.count("switch"), 4);
    EXPECT_EQ(p.count("nvswitch"), 0);
    ASSERT_NE(p.between("gpu0", "gpu1"), nullptr);
    EXPECT_EQ(p.between("gpu0", "gpu1")->node["links"].as<int>(), 4);
    ASSERT_NE(p.between("gpu4", "gpu5"), nullptr);
    EXPECT_EQ(p.between("gpu4", "gpu5")->node["links"].as<int>(), 12);
    EXPECT_EQ(p.links_of("gpu2", "nvlink").size(), 0U);
    EXPECT_EQ(p.parent("gpu0"), p.parent("gpu1"));
    EXPECT_EQ(p.kind.at(p.parent("gpu0")), "root_complex");
    EXPECT_EQ(p.socket.at("gpu4"), 1);
    EXPECT_EQ(p.parent("gpu4"), p.parent("gpu5"));  // no NODE between them: one root complex
    expect_classes_round_trip(text, p);
    expect_loads(yaml, p, false);
    expect_matrix_from_loader(text, yaml);
}

TEST(ImportNvidiaSmi, UniformBondsTheGpusCouldHaveDirectlyStayPairwise) {
    // Four GPUs, NV4 to each other: 3 x 4 links fit on each GPU, so no NVSwitch is implied.
    const std::string text =
        "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n"
        "GPU0\t X \tNV4\tNV4\tNV4\t0-63\t0\n"
        "GPU1\tNV4\t X \tNV4\tNV4\t0-63\t0\n"
        "GPU2\tNV4\tNV4\t X \tNV4\t0-63\t0\n"
        "GPU3\tNV4\tNV4\tNV4\t X \t0-63\t0\n";
    const Imported p(import_nvidia_smi_topo(text, "inline", "hgx-a100-4"));
    EXPECT_EQ(p.count("nvswitch"), 0);
    int nvlinks = 0;
    for (const auto& l : p.links) nvlinks += l.kind == "nvlink";
    EXPECT_EQ(nvlinks, 6);
}

TEST(ImportNvidiaSmi, SpacesInsteadOfTabsReadTheSame) {
    const std::string text = slurp(fixture("nvidia-smi-topo/dgx-h100.txt"));
    std::string spaced;
    for (const char c : without_escapes(text)) spaced += c == '\t' ? std::string("   ") : std::string(1, c);
    ASSERT_EQ(spaced.find('\t'), std::string::npos);
    ASSERT_EQ(spaced.find('\x1b'), std::string::npos);
    EXPECT_EQ(import_nvidia_smi_topo(spaced, "dgx-h100.txt", "d"), import_nvidia_smi_topo(text, "dgx-h100.txt", "d"));
}

TEST(ImportNvidiaSmi, RaggedRowIsAnInputErrorNamingTheFile) {
    std::string text = slurp(fixture("nvidia-smi-topo/h200x2.txt"));
    const auto row = text.find("GPU1\tNV18\t");
    ASSERT_NE(row, std::string::npos);
    text.erase(row + 5, 5);  // GPU1's NV18 entry
    const std::string what = input_error_of([&] { import_nvidia_smi_topo(text, "h200x2.txt", "x"); });
    EXPECT_EQ(what.rfind("h200x2.txt: ", 0), 0U) << what;
    EXPECT_NE(what.find("ragged row"), std::string::npos) << what;
    EXPECT_NE(what.find("GPU1"), std::string::npos) << what;
}

TEST(ImportNvidiaSmi, UnknownClassTokenIsAnInputErrorNamingIt) {
    std::string text = slurp(fixture("nvidia-smi-topo/dgx-h100.txt"));
    const auto row = text.find("\nNIC3\t");
    ASSERT_NE(row, std::string::npos);
    const auto cell = text.find("PXB", row);
    text.replace(cell, 3, "PXQ");
    const std::string what = input_error_of([&] { import_nvidia_smi_topo(text, "dgx-h100.txt", "x"); });
    EXPECT_EQ(what.rfind("dgx-h100.txt: ", 0), 0U) << what;
    EXPECT_NE(what.find("unknown class token 'PXQ'"), std::string::npos) << what;
    EXPECT_NE(what.find("NIC3"), std::string::npos) << what;
}

TEST(ImportNvidiaSmi, MissingHeaderIsAnInputError) {
    std::string text = slurp(fixture("nvidia-smi-topo/h200x2.txt"));
    text.erase(0, text.find('\n') + 1);
    const std::string what = input_error_of([&] { import_nvidia_smi_topo(text, "h200x2.txt", "x"); });
    EXPECT_EQ(what.rfind("h200x2.txt: ", 0), 0U) << what;
    EXPECT_NE(what.find("no header row"), std::string::npos) << what;
    EXPECT_NE(input_error_of([&] { import_nvidia_smi_topo("NVIDIA-SMI has failed\n", "f.txt", "x"); })
                  .find("f.txt: no header row"),
              std::string::npos);
}

TEST(ImportNvidiaSmi, AsymmetricOrContradictoryMatrixIsAnInputError) {
    const std::string asym =
        "\tGPU0\tGPU1\tCPU Affinity\n"
        "GPU0\t X \tPIX\t0-7\n"
        "GPU1\tPHB\t X \t0-7\n";
    std::string what = input_error_of([&] { import_nvidia_smi_topo(asym, "a.txt", "x"); });
    EXPECT_EQ(what.rfind("a.txt: ", 0), 0U) << what;
    EXPECT_NE(what.find("not symmetric"), std::string::npos) << what;

    const std::string contradictory =
        "\tGPU0\tGPU1\tGPU2\tCPU Affinity\n"
        "GPU0\t X \tPIX\tSYS\t0-7\n"
        "GPU1\tPIX\t X \tPIX\t0-7\n"
        "GPU2\tSYS\tPIX\t X \t0-7\n";
    what = input_error_of([&] { import_nvidia_smi_topo(contradictory, "c.txt", "x"); });
    EXPECT_EQ(what.rfind("c.txt: ", 0), 0U) << what;
    EXPECT_NE(what.find("contradictory"), std::string::npos) << what;
}

}  // namespace
}  // namespace dmasim::topology
