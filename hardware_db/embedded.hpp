// The JSON files of hardware_db/data/, compiled into the binary by cmake/embed_data.cmake.
#pragma once
#include <string_view>
#include <vector>

namespace llmsim {
struct EmbeddedFile {
    std::string_view path;   // relative to hardware_db/data, e.g. "systems/dgx-h100.json"
    std::string_view content;
};
const std::vector<EmbeddedFile>& embedded_files();
}   // namespace llmsim
