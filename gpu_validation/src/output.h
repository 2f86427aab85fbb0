// All-or-nothing output: a failed or interrupted run must never leave a measured.csv that
// looks complete, nor a metadata.json or JSON document from another run beside it.
#pragma once

#include <string>
#include <vector>

namespace dmaprobe {

struct OutputFile {
    std::string path;     // any directory; created (with its parents) if missing
    std::string content;
};

// Writes every file to a temporary name beside its final path (".<name>.tmp<pid>") and renames
// them into place only once all were written; existing files are replaced. Throws
// std::runtime_error naming the file when one cannot be written, after removing the temporary
// files: then no final file has been touched. (A rename failing midway, which needs the
// directory to change under the run, leaves the files renamed before it.) Returns the paths.
//
// dmasim::core::OutputFiles does the same for files of one directory; --json may name a file
// elsewhere.
std::vector<std::string> write_all_or_nothing(const std::vector<OutputFile>& files);

}  // namespace dmaprobe
