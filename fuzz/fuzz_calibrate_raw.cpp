// The llmsim-probe raw reader on arbitrary bytes, then the fits: a profile never carries a figure
// that is not finite and >= 0.
#include <cmath>

#include "calibrate/profile.hpp"
#include "calibrate/raw.hpp"
#include "fuzz/fuzz_common.hpp"
#include "hardware_db/database.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/json_reader.hpp"

namespace {
void check_numbers(const nlohmann::json& j) {
    if (j.is_number()) FUZZ_CHECK(std::isfinite(j.get<double>()));
    if (j.is_structured())
        for (const auto& x : j) check_numbers(x);
}
}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace llmsim;
    static const calibrate::Nominal nominal = calibrate::nominal_from_system(Database::builtin().system("dgx-h100"));
    try {
        const Json j = parse_json_text(fuzz::text_of(data, size), "raw.json");
        const calibrate::RawMeasurements raw = calibrate::parse_raw(j, "raw.json");
        calibrate::CalibrateInputs in;
        in.raw = &raw;
        in.nominal = nominal;
        const auto c = calibrate::calibrate(in);
        for (const auto& [key, value] : c.keys)
            if (value.is_number()) FUZZ_CHECK(std::isfinite(value.get<double>()) && value.get<double>() >= 0);
        check_numbers(calibrate::profile_json(c)["system"]);
    } catch (const ConfigError& e) {
        FUZZ_CHECK(!e.problems().empty());
    }
    return 0;
}
