// The serving-engine registry (inference.engine): the engines a scenario may name, their releases, and
// the behaviours of each release that the cost models and the serving simulator price (docs/serving.md
// "Engines", each behaviour with its source). One table; the scenario reader, the help text and the
// reference read it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hardware_db/specs.hpp"

namespace llmsim {

// Names a scenario may give, in the registry's order.
const std::vector<std::string>& engine_names();
std::optional<EngineKind> engine_from_string(std::string_view name);

// "MAJOR[.MINOR[.PATCH]]", each part a decimal integer in [0, 9999] without a sign or leading zeros
// (but "0"); anything else is nullopt. A pre-release suffix ("0.17.0rc1") is not a release number.
// An engine's first public release: TensorRT-LLM v0.5.0 (2023-10, its GitHub releases), vLLM v0.1.0
// (2023-06, PyPI), SGLang v0.1.0 (2024-01, PyPI). A version before it never existed (vllm@0.0.1 was priced).
[[nodiscard]] EngineVersion first_release(EngineKind kind) noexcept;
std::optional<EngineVersion> parse_engine_version(std::string_view text);
std::string to_string(const EngineVersion& v);

// The inference keys a scenario stated (the engine's defaults fill the others).
struct EngineStated {
    bool max_batch = false, max_batch_tokens = false, cuda_graphs = false, scheduler = false, kv_admission = false;
};

// Fills the behaviours of `in.engine` at its release on `gpu` (docs/serving.md "Engines", each with its
// source): the scheduler policy, the KV admission policy, chunked prefill and its token budget, the
// whole-prompt budget, the sequence cap, CUDA graphs and the decode attention kernel; keys the scenario
// stated are kept.
void apply_engine_defaults(InferenceConfig& in, const AcceleratorSpec& gpu, const ModelSpec& model,
                           const EngineStated& stated);

}   // namespace llmsim
