// dmasim-import: the platform importers without the rest of dmasim (standard library only), for
// machines that cannot build dmasim, such as the GPU machines. `dmasim topo import` is the
// same code.
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "dmasim/core/input_file.h"
#include "dmasim/core/error.h"
#include "dmasim/topology/import.h"

namespace {
const char* const kUsage =
    "usage: dmasim-import --sysfs [ROOT] [--name NAME] [-o FILE]\n"
    "       dmasim-import --nvidia-smi FILE [--name NAME] [-o FILE]\n"
    "Writes a platform file (docs/platforms.md) built from the sysfs PCI tree under ROOT\n"
    "(default /), or from the text of `nvidia-smi topo -m`, to FILE or standard output.\n";
}  // namespace

int main(int argc, char** argv) {
    std::string sysfs;
    std::string smi;
    std::string name = "imported";
    std::string out;
    bool use_sysfs = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&](const char* what) -> std::string {
            if (i + 1 >= argc) {
                std::cerr << "dmasim-import: " << a << " needs " << what << "\n" << kUsage;
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--sysfs") {
            use_sysfs = true;
            sysfs = (i + 1 < argc && argv[i + 1][0] != '-') ? argv[++i] : "/";
        } else if (a == "--nvidia-smi") {
            smi = next("a file");
        } else if (a == "--name") {
            name = next("a name");
        } else if (a == "-o" || a == "--out") {
            out = next("a file");
        } else if (a == "-h" || a == "--help") {
            std::cout << kUsage;
            return 0;
        } else {
            std::cerr << "dmasim-import: unknown argument '" << a << "'\n" << kUsage;
            return 2;
        }
    }
    if (use_sysfs == !smi.empty()) {
        std::cerr << "dmasim-import: give exactly one of --sysfs and --nvidia-smi\n" << kUsage;
        return 2;
    }
    try {
        std::string yaml;
        if (use_sysfs) {
            yaml = dmasim::topology::import_sysfs(sysfs, name);
        } else {
            yaml = dmasim::topology::import_nvidia_smi_topo(
                dmasim::core::read_input_file(smi, "nvidia-smi output"), smi, name);
        }
        if (out.empty()) {
            std::cout << yaml;
        } else {
            const std::string tmp = out + ".tmp";
            std::ofstream f(tmp);
            f << yaml;
            f.close();
            if (!f || std::rename(tmp.c_str(), out.c_str()) != 0) {
                std::remove(tmp.c_str());
                throw dmasim::core::InputError(out, "", "cannot write");
            }
        }
    } catch (const dmasim::core::InputError& e) {
        std::cerr << "dmasim-import: error: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
