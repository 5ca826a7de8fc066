// The Hugging Face config.json reader on arbitrary bytes: a model comes out within the bounds of
// hardware_db/limits.hpp, or the problems are reported.
#include "fuzz/fuzz_common.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/hf_config.hpp"
#include "hardware_db/json_reader.hpp"
#include "hardware_db/limits.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace llmsim;
    try {
        const Json j = parse_json_text(fuzz::text_of(data, size), "config.json");
        Problems pr;
        const ModelSpec m = model_from_hf_config(j, "", pr);
        if (pr.empty() && j.is_object()) {
            FUZZ_CHECK(m.layers >= 1 && m.layers <= limits::kLayers);
            FUZZ_CHECK(m.hidden >= 1 && m.hidden <= limits::kHidden);
            FUZZ_CHECK(m.heads >= 1 && m.kv_heads >= 1 && m.heads % m.kv_heads == 0);
            FUZZ_CHECK(m.head_dim >= 1 && m.ffn_hidden >= 1 && m.ffn_hidden <= limits::kFfnHidden);
            FUZZ_CHECK(m.vocab >= 1 && m.vocab <= limits::kVocab);
            if (m.moe.enabled()) {
                FUZZ_CHECK(m.moe.top_k >= 1 && m.moe.top_k <= m.moe.experts);
                FUZZ_CHECK(m.moe.dense_layers >= 0 && m.moe.dense_layers < m.layers);
            }
        }
    } catch (const ConfigError& e) {
        FUZZ_CHECK(!e.problems().empty());
    }
    return 0;
}
