// Importers: platform files (docs/platforms.md) from what a real machine reports. Each returns
// the text of a platform file, with comments that say where every node came from and what was
// left out. Plain functions: no SystemC, no Platform object.
#pragma once

#include <string>
#include <vector>

namespace dmasim::topology {

// A platform from the sysfs PCI tree under `root` ("/" for this machine, or the directory a
// scripts/capture-pci.sh snapshot was extracted to): every entry of ROOT/sys/bus/pci/devices is
// a link to its device's directory under ROOT/sys/devices (resolved inside ROOT, also when the
// link is absolute), and the chain of directories above it is the device's chain of bridges.
//   pciDDDD:BB host bridge          -> a root_complex (and a cpu per NUMA node, socket links
//                                      between the sockets' first root complexes)
//   root port (bridge under it)     -> no node: what is below links to the root complex
//   switch upstream + downstream    -> one switch
//   class 0x0300/0x0302             -> gpu, 0x0200/0x0207 -> nic, 0x0108 -> nvme
//   anything else                   -> left out, listed in a comment
// Links take generation and lanes from the downstream device's current link. Names are numbered
// in PCI address order. Throws core::InputError(root, "", ...) when the tree is missing, empty
// or broken.
std::string import_sysfs(const std::string& root, const std::string& name);

// A platform from the text of `nvidia-smi topo -m` (escape codes, tabs or spaces): its GPUs and
// NICs, NVLink bonds from NV# (one nvswitch when every GPU pair shows the same bond and the
// bonds could not all be direct), and the smallest PCIe hierarchy whose route classes are the
// matrix's: PIX share a switch, PXB share a parent switch, PHB a root complex, NODE a socket,
// SYS different sockets. `origin` names the text in errors (core::InputError(origin, "", ...)
// for a missing header, a ragged row, an unknown class token or contradictory classes).
std::string import_nvidia_smi_topo(const std::string& text, const std::string& origin, const std::string& name);

// The matrix of `nvidia-smi topo -m` itself: the class of each pair of devices as the machine
// printed it ("NV18", "PIX", "PHB", ...). It tells which path a measurement between two GPUs
// took, so a peer row can be checked against the platform a scenario models. The same checks
// and errors as import_nvidia_smi_topo.
struct SmiTopology {
    std::vector<std::string> devices;              // GPU0, GPU1, NIC0, ... in header order
    std::vector<std::vector<std::string>> classes;  // [i][j], "X" on the diagonal
    // The class between two devices; "" when either is not in the matrix.
    std::string route_class(const std::string& a, const std::string& b) const;
};
SmiTopology read_nvidia_smi_topo(const std::string& text, const std::string& origin);

}  // namespace dmasim::topology
