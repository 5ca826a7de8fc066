#include "hardware_db/specs.hpp"

#include <tuple>

#include <fmt/format.h>

#include "hardware_db/enum_names.hpp"

namespace llmsim {

const char* to_string(Precision p) {
    switch (p) {
        case Precision::fp32: return "fp32";
        case Precision::tf32: return "tf32";
        case Precision::bf16: return "bf16";
        case Precision::fp16: return "fp16";
        case Precision::fp8: return "fp8";
        case Precision::int8: return "int8";
        case Precision::int4: return "int4";
        case Precision::fp4: return "fp4";
        case Precision::nf4: return "nf4";
    }
    return "?";
}

std::optional<Precision> precision_from_string(const std::string& s) {
    for (int i = 0; i < kPrecisionCount; ++i) {
        const auto p = static_cast<Precision>(i);
        if (s == to_string(p)) return p;
    }
    return std::nullopt;
}

double precision_bytes(Precision p) {
    switch (p) {
        case Precision::fp32:
        case Precision::tf32: return 4.0;
        case Precision::bf16:
        case Precision::fp16: return 2.0;
        case Precision::fp8:
        case Precision::int8: return 1.0;
        case Precision::int4:
        case Precision::fp4:
        case Precision::nf4: return 0.5;
    }
    return 2.0;
}

double training_element_bytes(Precision training_precision) {
    return training_precision == Precision::fp32 ? 4.0 : 2.0;
}

const char* to_string(Recompute r) {
    switch (r) {
        case Recompute::none: return "none";
        case Recompute::selective: return "selective";
        case Recompute::full: return "full";
    }
    return "?";
}

const char* to_string(Framework f) {
    switch (f) {
        case Framework::unspecified: return "unspecified";
        case Framework::megatron: return "megatron";
        case Framework::deepspeed: return "deepspeed";
        case Framework::torchtitan: return "torchtitan";
        case Framework::llm_foundry: return "llm-foundry";
    }
    return "unspecified";
}

const char* to_string(Batching b) { return b == Batching::continuous ? "continuous" : "static"; }

namespace {
constexpr std::array kSchedulerPolicies{SchedulerPolicy::inflight, SchedulerPolicy::prefill_first};
}   // namespace

const char* to_string(SchedulerPolicy p) {
    switch (p) {
        case SchedulerPolicy::inflight: return "inflight";
        case SchedulerPolicy::prefill_first: return "prefill-first";
    }
    return "?";
}

const std::vector<std::string>& scheduler_policy_names() {
    static const std::vector<std::string> names = enum_names(kSchedulerPolicies);
    return names;
}

std::optional<SchedulerPolicy> scheduler_policy_from_string(std::string_view name) {
    return enum_from_string(kSchedulerPolicies, name);
}

namespace {
constexpr std::array kRouterPolicies{RouterPolicy::round_robin, RouterPolicy::least_requests,
                                     RouterPolicy::least_tokens, RouterPolicy::power_of_two, RouterPolicy::cache_aware};
}   // namespace

const char* to_string(RouterPolicy p) {
    switch (p) {
        case RouterPolicy::round_robin: return "round-robin";
        case RouterPolicy::least_requests: return "least-requests";
        case RouterPolicy::least_tokens: return "least-tokens";
        case RouterPolicy::power_of_two: return "power-of-two";
        case RouterPolicy::cache_aware: return "cache-aware";
    }
    return "?";
}

const std::vector<std::string>& router_policy_names() {
    static const std::vector<std::string> names = enum_names(kRouterPolicies);
    return names;
}

std::optional<RouterPolicy> router_policy_from_string(std::string_view name) {
    return enum_from_string(kRouterPolicies, name);
}

const char* to_string(EngineKind e) {
    switch (e) {
        case EngineKind::tensorrt_llm: return "tensorrt-llm";
        case EngineKind::vllm: return "vllm";
        case EngineKind::sglang: return "sglang";
    }
    return "?";
}

namespace {
// Every framework a scenario may name, in the enum's order.
constexpr std::array kFrameworks{Framework::megatron, Framework::deepspeed, Framework::torchtitan,
                                 Framework::llm_foundry};
}   // namespace

const std::vector<std::string>& framework_names() {
    static const std::vector<std::string> names = enum_names(kFrameworks);
    return names;
}

std::optional<Framework> framework_from_string(std::string_view name) { return enum_from_string(kFrameworks, name); }

bool pytorch_module_framework(Framework f) {
    return f == Framework::torchtitan || f == Framework::deepspeed || f == Framework::llm_foundry;
}

bool uses_fa2_attention(const ParallelConfig& p) { return pytorch_module_framework(p.framework) && p.sdpa_fa2; }

bool eager_elementwise(const ParallelConfig& p) { return pytorch_module_framework(p.framework) && !p.torch_compile; }

std::string framework_label(const ParallelConfig& p) {
    if (p.framework == Framework::unspecified) return {};
    std::string out = to_string(p.framework);
    if (pytorch_module_framework(p.framework)) out += eager_elementwise(p) ? " (eager)" : " + torch.compile";
    return out;
}

const char* to_string(Offload o) {
    switch (o) {
        case Offload::none: return "none";
        case Offload::optimizer: return "optimizer";
        case Offload::optimizer_params: return "optimizer+params";
    }
    return "?";
}

const char* to_string(MasterWeights w) {
    switch (w) {
        case MasterWeights::fp32: return "fp32";
        case MasterWeights::remainder: return "remainder";
        case MasterWeights::none: return "none";
    }
    return "?";
}

const char* to_string(Optimizer o) {
    switch (o) {
        case Optimizer::adam: return "adam";
        case Optimizer::sgd: return "sgd";
        case Optimizer::adafactor: return "adafactor";
    }
    return "?";
}

const char* to_string(MlpKind m) { return m == MlpKind::gelu ? "gelu" : "swiglu"; }

bool resolve_disaggregation_link(Scenario& s) {
    auto& d = s.inference.disaggregation;
    const bool one_domain = s.gpus <= s.system.scaleup_domain;
    d.link_latency_s = (one_domain ? s.system.intra_node_latency_us : s.system.inter_node_latency_us) * 1e-6;
    if (!d.link_stated)
        d.link_GBps = one_domain ? s.system.intra_node_GBps * s.system.intra_node_efficiency
                                 : s.system.inter_node_GBps * s.system.inter_node_efficiency;
    return one_domain;
}

std::string ServingSlo::Target::name() const { return fmt::format("{} p{}", ttft ? "TTFT" : "TPOT", percentile); }

std::vector<ServingSlo::Target> ServingSlo::targets() const {
    std::vector<Target> out;
    for (const auto& [ttft, pct, v] : {std::tuple{true, 90, ttft_p90_s}, std::tuple{true, 99, ttft_p99_s},
                                       std::tuple{false, 90, tpot_p90_s}, std::tuple{false, 99, tpot_p99_s}})
        if (v) out.push_back({ttft, pct, *v});
    return out;
}

}   // namespace llmsim
