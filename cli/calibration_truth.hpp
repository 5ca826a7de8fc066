// Reads calibrate/probe/layer_truth.py's JSON into app::LayerTruth, strictly: a missing key or a value
// of the wrong type is a ConfigError naming `FILE#/pointer`, the value and what was expected.
#pragma once

#include <string>

#include "app/calibration_check.hpp"
#include "hardware_db/json_reader.hpp"

namespace llmsim::cli {

app::LayerTruth read_layer_truth(const Json& j, const std::string& file);
app::LayerTruth read_layer_truth_file(const std::string& path);

}   // namespace llmsim::cli
