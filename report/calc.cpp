#include "report/calc.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "hardware_db/database.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/limits.hpp"
#include "hardware_db/units.hpp"
#include "schedules/schedule.hpp"

namespace llmsim::report {

namespace {

using drills::Calc;

// Sizes ("350GB", "3.5e11", "326GiB") and counts ("175B", "1.4T", "8k"): hardware_db/units.hpp.
double size_of(const std::string& text, const char* flag) {
    return quantity_in(text, flag, QuantityKind::bytes, 1, limits::kMaxBytes);
}
double count_of(const std::string& text, const char* flag, double max = limits::kMaxParams) {
    return quantity_in(text, flag, QuantityKind::count, 1, max);
}

ModelSpec model_of(const CalcInputs& f) {
    if (f.model.empty()) throw ConfigError("--model: missing: expected a model name (llmsim model list)");
    return Database::builtin().model(f.model);
}
AcceleratorSpec gpu_of(const CalcInputs& f) {
    if (f.gpu.empty()) throw ConfigError("--gpu: missing: expected an accelerator name (llmsim hw list)");
    return Database::builtin().accelerator(f.gpu);
}
Precision precision_of(const std::string& text, const std::string& flag) {
    const auto p = precision_from_string(text);
    if (!p)
        throw ConfigError(
            fmt::format("{}: {}: expected fp32, tf32, bf16, fp16, fp8, int8, int4, fp4 or nf4", flag, text));
    return *p;
}

// A finite number > 0 (>= 0 with `zero`): CLI11's PositiveNumber let "inf" through to its range message
// ("Value inf not in range 0.000000 to 1797693134862315708145...").
CLI::Validator finite_number(bool zero) {
    const std::string expected = zero ? "a finite number >= 0" : "a finite number > 0";
    return CLI::Validator(
        [zero, expected](std::string& s) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(s.c_str(), &end);
            const bool whole = !s.empty() && end == s.c_str() + s.size();
            if (!whole || !std::isfinite(v) || (zero ? v < 0 : v <= 0))
                return fmt::format("'{}': expected {}", s.substr(0, 40), expected);
            return {};
        },
        zero ? "NUMBER >= 0" : "NUMBER > 0", "finite_number");
}
const CLI::Validator kPositive = finite_number(false), kNonNegative = finite_number(true);

// --precision of a GPU's math: as given, else the chip's 16-bit one (bf16; fp16 without bf16, e.g. V100).
Precision math_precision(const CalcInputs& f, const AcceleratorSpec& g) {
    return f.precision.empty() ? g.half_precision() : precision_of(f.precision, "--precision");
}

}   // namespace

const std::vector<CalcDef>& calc_defs() {
    static const std::vector<CalcDef> defs{
        {"allreduce",
         "All-reduce time: ring, NCCL pipelined tree, textbook tree (and every registry algorithm on --system)",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--bytes", f.bytes, "Buffer size (350GB, 3.5e11, 326GiB)");
             c->add_option("--params", f.params, "Or: parameters (175B), times --bytes-per-param");
             c->add_option("--bytes-per-param", f.bytes_per_param, "Bytes per parameter (default 2: fp16/bf16)")
                 ->check(kPositive);
             c->add_option("--ranks", f.ranks, "Ranks p")->required()->check(CLI::Range(2, 1 << 24));
             c->add_option("--GBps", f.GBps, "Link bandwidth per rank and direction, GB/s")
                 ->required()
                 ->check(kPositive);
             c->add_option("--latency-us", f.latency_us, "Per-step latency α in us (default 0)")->check(kNonNegative);
             c->add_option("--system", f.system, "Also price every registry algorithm on this system");
         },
         [](const CalcInputs& f) {
             drills::CollectiveQuery q;
             if (!f.bytes.empty() == !f.params.empty())
                 throw ConfigError("--bytes/--params: expected exactly one of them");
             q.bytes =
                 !f.bytes.empty() ? size_of(f.bytes, "--bytes") : count_of(f.params, "--params") * f.bytes_per_param;
             q.ranks = f.ranks;
             q.GBps = f.GBps;
             q.alpha_s = f.latency_us * 1e-6;
             SystemSpec sys;
             if (!f.system.empty()) {
                 sys = Database::builtin().system(f.system);
                 q.system = &sys;
             }
             return drills::all_reduce_calc(q);
         }},
        {"gemm", "GEMM arithmetic intensity and roofline bound on a GPU",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--gpu", f.gpu, "Accelerator (llmsim hw list)")->required();
             c->add_option("--m", f.m_dim, "Rows of A and C (tokens)")->required()->check(kPositive);
             c->add_option("--n", f.n_dim, "Columns of B and C")->required()->check(kPositive);
             c->add_option("--k", f.k_dim, "Reduction depth")->required()->check(kPositive);
             c->add_option("--precision", f.precision, "Math precision (default bf16; fp16 on chips without bf16)");
         },
         [](const CalcInputs& f) {
             const auto g = gpu_of(f);
             return drills::gemm_calc(g, f.m_dim, f.n_dim, f.k_dim, math_precision(f, g));
         }},
        {"bubble", "Pipeline bubble for p stages, m micro-batches, v chunks and a schedule",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--p", f.p, "Pipeline stages")->required()->check(CLI::Range(1, 1 << 16));
             c->add_option("--m", f.m, "Micro-batches per step")->required()->check(CLI::Range(1, 1 << 24));
             c->add_option("--v", f.v, "Model chunks per stage (interleaved)")->check(CLI::Range(1, 1 << 10));
             c->add_option("--schedule", f.schedule, "Schedule: " + schedule_names());
         },
         [](const CalcInputs& f) {
             const auto* s = find_schedule(f.schedule);
             if (!s) throw ConfigError(fmt::format("--schedule: {}: expected one of {}", f.schedule, schedule_names()));
             return drills::bubble_calc(*s, f.p, f.m, f.v);
         }},
        {"amdahl", "Amdahl's law: speedup of a fixed problem",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--serial", f.serial, "Serial fraction")->required()->check(CLI::Range(0.0, 1.0));
             c->add_option("--p", f.p, "Processors")->required()->check(CLI::Range(1, 1 << 24));
         },
         [](const CalcInputs& f) { return drills::amdahl_calc(f.serial, f.p); }},
        {"gustafson", "Gustafson's law: scaled speedup",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--serial", f.serial, "Serial fraction")->required()->check(CLI::Range(0.0, 1.0));
             c->add_option("--p", f.p, "Processors")->required()->check(CLI::Range(1, 1 << 24));
         },
         [](const CalcInputs& f) { return drills::gustafson_calc(f.serial, f.p); }},
        {"scaling", "Strong or weak scaling efficiency from two measurements",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--p1", f.p1, "GPUs of the first run")->required()->check(CLI::Range(1, 1 << 24));
             c->add_option("--t1", f.t1, "Time of the first run (s)")->required()->check(kPositive);
             c->add_option("--p2", f.p2, "GPUs of the second run")->required()->check(CLI::Range(1, 1 << 24));
             c->add_option("--t2", f.t2, "Time of the second run (s)")->required()->check(kPositive);
             c->add_flag("--weak", f.weak, "Weak scaling (same work per GPU); default strong");
         },
         [](const CalcInputs& f) { return drills::scaling_efficiency_calc(f.p1, f.t1, f.p2, f.t2, f.weak); }},
        {"train-time", "Training days, GPU-hours and cost from N, D, GPUs and an MFU",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--params", f.params, "Parameters N (70B, 7e10)")->required();
             c->add_option("--tokens", f.tokens, "Training tokens D (1.4T, 1.4e12)")->required();
             c->add_option("--gpus", f.gpus, "GPUs")->required()->check(CLI::Range(1, 1 << 24));
             c->add_option("--gpu", f.gpu, "Accelerator (its dense bf16 peak; fp16 without bf16)");
             c->add_option("--peak-tflops", f.peak_tflops, "Or: peak TFLOP/s per GPU")->check(kPositive);
             c->add_option("--mfu", f.mfu, "Model FLOPs utilisation (0.4)")->required()->check(CLI::Range(1e-6, 1.0));
             c->add_option("--usd-per-gpu-hour", f.usd, "Price per GPU-hour")->check(kNonNegative);
         },
         [](const CalcInputs& f) {
             const auto g = gpu_of(f);
             const double peak = f.peak_tflops > 0 ? f.peak_tflops * 1e12 : g.peak(g.half_precision());
             return drills::training_time_calc(count_of(f.params, "--params"),
                                               count_of(f.tokens, "--tokens", limits::kMaxTokens), f.gpus, peak, f.mfu,
                                               f.usd);
         }},
        {"chinchilla", "Compute-optimal tokens: 20 per parameter beside the fitted laws",
         [](CLI::App* c, CalcInputs& f) { c->add_option("--params", f.params, "Parameters N (70B)")->required(); },
         [](const CalcInputs& f) { return drills::chinchilla_calc(count_of(f.params, "--params")); }},
        {"checkpointing", "Activation checkpointing with √L checkpoints: memory and recompute",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--layers", f.layers, "Layers L")->required()->check(CLI::Range(1, 1 << 16));
             c->add_option("--layer-bytes", f.layer_bytes, "Activations per layer (0.64GB)")->required();
         },
         [](const CalcInputs& f) {
             return drills::checkpointing_calc(f.layers, size_of(f.layer_bytes, "--layer-bytes"));
         }},
        {"activations", "Activation memory of a model with and without recompute",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--model", f.model, "Model (llmsim model list)")->required();
             c->add_option("--seq", f.seq, "Sequence length")->check(CLI::Range(1, 1 << 24));
             c->add_option("--micro-batch", f.micro_batch, "Micro-batch")->check(CLI::Range(1, 1 << 20));
             c->add_option("--tp", f.tp, "Tensor parallelism")->check(CLI::Range(1, 1 << 10));
             c->add_flag("--sp", f.sp, "Sequence parallelism");
         },
         [](const CalcInputs& f) { return drills::activations_calc(model_of(f), f.seq, f.micro_batch, f.tp, f.sp); }},
        {"kv", "KV cache bytes and the largest batch that fits",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--model", f.model, "Model")->required();
             c->add_option("--gpu", f.gpu, "Accelerator")->required();
             c->add_option("--context", f.context, "Tokens per sequence")->check(CLI::Range(1, 1 << 24));
             c->add_option("--batch", f.batch, "Sequences")->check(CLI::Range(1, 1 << 24));
             c->add_option("--kv-precision", f.kv_precision, "KV cache precision (bf16, fp8, int8)");
             c->add_option("--weights", f.weights, "Weight precision (bf16, fp8, int8, int4)");
         },
         [](const CalcInputs& f) {
             return drills::kv_cache_calc(model_of(f), gpu_of(f), f.context, f.batch,
                                          precision_of(f.kv_precision, "--kv-precision"),
                                          precision_of(f.weights, "--weights"));
         }},
        {"decode", "Decode tokens/s bound from HBM bandwidth",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--model", f.model, "Model")->required();
             c->add_option("--gpu", f.gpu, "Accelerator")->required();
             c->add_option("--batch", f.batch, "Sequences decoded together")->check(CLI::Range(1, 1 << 24));
             c->add_option("--context", f.context, "Tokens of context per sequence (KV read per step)")
                 ->check(CLI::Range(0, 1 << 24));
             c->add_option("--weights", f.weights, "Weight precision (bf16, fp8, int8, int4)");
         },
         [](const CalcInputs& f) {
             return drills::decode_bound_calc(model_of(f), gpu_of(f), f.batch, f.context,
                                              precision_of(f.weights, "--weights"));
         }},
        {"littles-law", "Continuous batching: sequences in flight = rate × time (Little's law)",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--rate", f.rate, "Requests per second")->required()->check(kPositive);
             c->add_option("--latency", f.latency_s, "Seconds each request spends in the system")
                 ->required()
                 ->check(kPositive);
             c->add_option("--kv-bytes-per-seq", f.kv_bytes_per_seq, "KV cache bytes per sequence")
                 ->check(kNonNegative);
         },
         [](const CalcInputs& f) { return drills::littles_law_calc(f.rate, f.latency_s, f.kv_bytes_per_seq); }},
        {"speculative", "Speculative decoding: expected tokens per pass and speedup",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--alpha", f.alpha, "Acceptance rate α in [0, 1)")
                 ->required()
                 ->check(CLI::Range(0.0, 0.999999));
             c->add_option("--k", f.k, "Draft tokens per round")->check(CLI::Range(1, 64));
             c->add_option("--draft-cost", f.draft_cost, "Draft step cost as a fraction of a target step (0.05)")
                 ->check(kNonNegative);
         },
         [](const CalcInputs& f) { return drills::speculative_calc(f.alpha, f.k, f.draft_cost); }},
        {"lora", "LoRA / QLoRA memory of model states",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--model", f.model, "Model")->required();
             c->add_option("--rank", f.rank, "Adapter rank")->check(CLI::Range(1, 1 << 16));
             c->add_flag("--qlora", f.qlora, "NF4 base weights (QLoRA)");
         },
         [](const CalcInputs& f) { return drills::lora_calc(model_of(f), f.rank, f.qlora); }},
        {"rlhf", "RLHF (PPO) model states of actor, critic, reference and reward",
         [](CLI::App* c, CalcInputs& f) { c->add_option("--model", f.model, "Model")->required(); },
         [](const CalcInputs& f) { return drills::rlhf_calc(model_of(f)); }},
        {"flops", "FLOPs per token, training and inference",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--model", f.model, "Model")->required();
             c->add_option("--seq", f.seq, "Sequence length")->check(CLI::Range(1, 1 << 24));
         },
         [](const CalcInputs& f) { return drills::flops_per_token_calc(model_of(f), f.seq); }},
        {"mfu", "MFU from measured tokens/s",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--model", f.model, "Model")->required();
             c->add_option("--gpu", f.gpu, "Accelerator")->required();
             c->add_option("--gpus", f.gpus, "GPUs")->required()->check(CLI::Range(1, 1 << 24));
             c->add_option("--tokens-per-s", f.tokens_per_s, "Measured tokens/s (whole job)")
                 ->required()
                 ->check(kPositive);
             c->add_option("--seq", f.seq, "Sequence length")->check(CLI::Range(1, 1 << 24));
             c->add_option("--precision", f.precision, "Peak to divide by (default bf16; fp16 on chips without bf16)");
         },
         [](const CalcInputs& f) {
             const auto g = gpu_of(f);
             return drills::mfu_calc(model_of(f), f.seq, f.tokens_per_s, f.gpus, g, math_precision(f, g));
         }},
        {"params", "Parameter count: QKV with GQA, MLP, embeddings",
         [](CLI::App* c, CalcInputs& f) { c->add_option("--model", f.model, "Model")->required(); },
         [](const CalcInputs& f) { return drills::params_calc(model_of(f)); }},
        {"memory", "Model states per GPU with a ZeRO stage over dp ranks",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--model", f.model, "Model")->required();
             c->add_option("--dp", f.dp, "Data-parallel ranks")->check(CLI::Range(1, 1 << 24));
             c->add_option("--zero", f.zero, "ZeRO stage 0..3")->check(CLI::Range(0, 3));
         },
         [](const CalcInputs& f) { return drills::model_states_calc(model_of(f), f.dp, f.zero); }},
        {"tp-comm", "Tensor-parallel communication volume of one layer",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--model", f.model, "Model")->required();
             c->add_option("--seq", f.seq, "Sequence length")->check(CLI::Range(1, 1 << 24));
             c->add_option("--micro-batch", f.micro_batch, "Micro-batch")->check(CLI::Range(1, 1 << 20));
             c->add_option("--tp", f.tp, "Tensor parallelism")->required()->check(CLI::Range(2, 1 << 10));
             c->add_flag("--sp", f.sp, "Sequence parallelism");
             f.GBps = 450;
             c->add_option("--GBps", f.GBps, "Scale-up link GB/s per GPU and direction (default 450, NVLink 4)")
                 ->check(kPositive);
         },
         [](const CalcInputs& f) {
             return drills::tp_comm_calc(model_of(f), f.seq, f.micro_batch, f.tp, f.sp, f.GBps);
         }},
        {"fsdp", "Bytes sent per GPU per step: DDP vs FSDP (ZeRO-3)",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--params", f.params, "Parameters (70B)")->required();
             c->add_option("--ranks", f.ranks, "Ranks")->required()->check(CLI::Range(2, 1 << 24));
             c->add_option("--bytes-per-param", f.bytes_per_param, "Bytes per parameter (2)")->check(kPositive);
         },
         [](const CalcInputs& f) {
             return drills::fsdp_vs_ddp_calc(count_of(f.params, "--params"), f.ranks, f.bytes_per_param);
         }},
        {"grad-accum", "Gradient accumulation steps and tokens per step",
         [](CLI::App* c, CalcInputs& f) {
             c->add_option("--global-batch", f.global_batch, "Sequences per optimizer step")
                 ->required()
                 ->check(CLI::Range(1, 1 << 30));
             c->add_option("--micro-batch", f.micro_batch, "Sequences per GPU per micro-step")
                 ->check(CLI::Range(1, 1 << 20));
             c->add_option("--dp", f.dp, "Data-parallel ranks")->required()->check(CLI::Range(1, 1 << 24));
             c->add_option("--seq", f.seq, "Sequence length")->check(CLI::Range(1, 1 << 24));
         },
         [](const CalcInputs& f) { return drills::grad_accum_calc(f.global_batch, f.micro_batch, f.dp, f.seq); }},
    };
    return defs;
}

drills::Calc compute_calc(const CalcDef& def, const CalcInputs& inputs) {
    Calc c = def.compute(inputs);
    for (const auto& st : c.steps)
        if (!std::isfinite(st.value))
            throw ConfigError(fmt::format("{}: the inputs give a non-finite {} ({}): expected finite, realistic values",
                                          def.name, st.label, st.value));
    return c;
}

Json calc_json(const Calc& c) {
    Json steps = Json::array();
    for (const auto& s : c.steps)
        steps.push_back({{"label", s.label},
                         {"formula", s.formula},
                         {"numbers", s.numbers},
                         {"value", s.value},
                         {"unit", s.unit},
                         {"why", s.why}});
    return {{"title", c.title},
            {"given", c.given},
            {"steps", steps},
            {"note", c.note},
            {"answer", {{"value", c.result().value}, {"unit", c.result().unit}, {"label", c.result().label}}}};
}

Json run_calc(const std::string& name, const std::vector<std::string>& args) {
    const auto& defs = calc_defs();
    const auto it = std::find_if(defs.begin(), defs.end(), [&](const CalcDef& d) { return name == d.name; });
    if (it == defs.end()) {
        std::string names;
        for (const auto& d : defs) names += fmt::format("{}{}", names.empty() ? "" : ", ", d.name);
        throw ConfigError(fmt::format("calc: {}: expected one of {}", json_brief(Json(name)), names));
    }
    CalcInputs inputs;
    CLI::App app(it->summary, std::string("llmsim calc ") + it->name);
    it->flags(&app, inputs);
    std::vector<std::string> reversed(args.rbegin(), args.rend());   // CLI11 parses a vector from its back
    try {
        app.parse(reversed);
    } catch (const CLI::ParseError& e) {
        throw ConfigError(e.what());
    }
    return calc_json(compute_calc(*it, inputs));
}

}   // namespace llmsim::report
