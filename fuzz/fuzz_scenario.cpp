// The scenario reader on arbitrary bytes: strict JSON parse, then parse_scenario.
#include "fuzz/fuzz_common.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const llmsim::Json j = llmsim::parse_json_text(llmsim::fuzz::text_of(data, size), "fuzz.json");
        const llmsim::Scenario s = llmsim::parse_scenario(j, "/nonexistent-fuzz-dir");
        // A disaggregated deployment's prefill pool takes its GPUs out of /gpus; /parallel lays out the rest.
        FUZZ_CHECK(s.gpus >= 1 && s.gpus == s.parallel.world() + s.inference.disaggregation.prefill_gpus);
    } catch (const llmsim::ConfigError& e) {
        FUZZ_CHECK(!e.problems().empty());
    }
    return 0;
}
