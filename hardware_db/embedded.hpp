// Files compiled into the binary by cmake/embed_data.cmake.
#pragma once
#include <string_view>
#include <vector>

namespace llmsim {
struct EmbeddedFile {
    std::string_view path;   // relative to its folder, e.g. "systems/dgx-h100.json", "training.json"
    std::string_view content;
};
// hardware_db/data/**/*.json: accelerators, systems, models, profiles.
const std::vector<EmbeddedFile>& embedded_files();
// validation/*.json: the published runs `llmsim validate` checks by default.
const std::vector<EmbeddedFile>& embedded_validation_files();
}   // namespace llmsim
