#include "app/explain.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "app/estimate.hpp"
#include "cost_models/memory.hpp"
#include "cost_models/recompute.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/layout_rules.hpp"
#include "hardware_db/limits.hpp"

namespace llmsim::app {

namespace {

// Whether a changed scenario is a layout Megatron would run (the reader's rules).
bool valid(const Scenario& s) {
    const auto& p = s.parallel;
    const auto& t = s.training;
    if (p.tp < 1 || p.pp < 1 || p.dp < 1 || p.cp < 1 || p.vp < 1 || t.micro_batch < 1) return false;
    if (tp_rules(s.model, p.tp) | pp_rules(s.model, p.pp, p.vp) | cp_rules(t.seq_len, p.cp) |
        batch_rules(t.global_batch, t.micro_batch, p.dp) | ep_rules(s.model, p.ep, p.dp * p.cp) |
        framework_rules(p.zero, p.pp, p.framework))
        return false;
    if (p.vp > 1 && !p.schedule->uses_chunks) return false;
    if (p.schedule->m_multiple_of_p) {
        const std::int64_t m = t.global_batch / (t.micro_batch * p.dp);
        if (m % p.pp != 0) return false;
    }
    if (p.sequence_parallel && p.tp == 1) return false;
    // Megatron-Core: activation offload with one stage, no recompute, fewer layers than the model.
    if (t.activation_offload_layers > 0 &&
        (p.pp > 1 || t.recompute != Recompute::none || t.activation_offload_layers >= s.model.layers))
        return false;
    if (t.recompute_num_layers > 0 && t.recompute != Recompute::full) return false;
    if (!optimizer_precision_violations(t).empty()) return false;
    // The scenario reader's checks on the system and the precision (hardware_db/scenario.cpp): a lever
    // the reader would refuse is not priced (optimizer offload on a system without a host link was
    // priced at an infinite step).
    if (p.world() > limits::kGpus) return false;
    if ((t.offload != Offload::none || t.activation_offload_layers > 0) && !(s.system.pcie_GBps > 0)) return false;
    if (t.offload != Offload::none && !(s.system.host_memory_GBps > 0)) return false;
    if (t.offload == Offload::optimizer_params && p.zero != 3) return false;
    if (t.fp8_params && (t.precision != Precision::fp8 || t.finetune.method == FinetuneConfig::Method::qlora))
        return false;
    if (!(s.system.gpu.peak(t.precision) > 0)) return false;
    return true;
}

StepEstimate run(const Scenario& s) {
    EstimateOptions o;
    o.fast = true;   // the closed form: what the search ranks with, fast enough for every lever
    sim::StepSimulator simulator;
    return estimate_training(s.training_job(), o, simulator).chosen();
}

std::string mem_component(const MemoryBreakdown& m) {
    const std::pair<double, const char*> parts[] = {{m.weights_bytes, "weights"},
                                                    {m.gradients_bytes, "gradients"},
                                                    {m.optimizer_bytes, "optimizer states"},
                                                    {m.activations_bytes, "activations"},
                                                    {m.other_bytes, "other (reserve, buffers)"}};
    return std::max_element(std::begin(parts), std::end(parts),
                            [](const auto& a, const auto& b) { return a.first < b.first; })
        ->second;
}

}   // namespace

namespace {

// The base run's binding constraint (memory when it does not fit, else the step time) and the memory and
// time parts it is read from.
void training_binding(Explanation& e) {
    const auto& mem = e.base.memory;
    const auto& b = e.base.breakdown;
    e.memory_parts = {{"weights", mem.weights_bytes},
                      {"gradients", mem.gradients_bytes},
                      {"optimizer states", mem.optimizer_bytes},
                      {"activations", mem.activations_bytes},
                      {"other", mem.other_bytes},
                      {"total", mem.total_bytes},
                      {"capacity", mem.capacity_bytes}};
    e.time_parts = {{"compute", b.compute},
                    {"tensor-parallel comm", b.tp_comm},
                    {"context-parallel comm", b.cp_comm},
                    {"expert-parallel comm", b.ep_comm},
                    {"pipeline send/recv", b.pp_comm},
                    {"data-parallel comm (exposed)", b.dp_comm},
                    {"pipeline bubble", b.bubble},
                    {"optimizer step", b.optimizer},
                    {"step", e.base.step_time_s}};
    const bool memory_binds = !mem.fits;
    e.binding = memory_binds ? "memory" : "time";
    e.binding_value = memory_binds ? mem.total_bytes : e.base.step_time_s;
    if (memory_binds)
        e.constraint = fmt::format(
            "memory: pipeline stage {} needs {:.1f} GiB of {:.1f} GiB; its largest component is "
            "{} ({:.1f} GiB)",
            mem.stage, mem.total_bytes / kGiB, mem.capacity_bytes / kGiB, mem_component(mem),
            std::max(
                {mem.weights_bytes, mem.gradients_bytes, mem.optimizer_bytes, mem.activations_bytes, mem.other_bytes}) /
                kGiB);
    else
        e.constraint = fmt::format(
            "time: the step takes {:.3g} s (MFU {:.1f}%); the largest part is {} ({:.3g} s, "
            "{:.0f}% of the step); memory fits with {:.1f} GiB to spare",
            e.base.step_time_s, 100 * e.base.mfu, e.base.dominant,
            std::max({b.compute, b.tp_comm, b.cp_comm, b.ep_comm, b.pp_comm, b.dp_comm, b.bubble, b.optimizer}),
            100 * std::max({b.compute, b.tp_comm, b.cp_comm, b.ep_comm, b.pp_comm, b.dp_comm, b.bubble, b.optimizer}) /
                e.base.step_time_s,
            mem.headroom_bytes / kGiB);
}

// Appends a lever to e.levers: the scenario changed by `apply`, re-run through the closed form (a change
// the readers would refuse, or one whose estimate fails, is left out).
struct LeverAdder {
    const Scenario& s;
    Explanation& e;
    bool memory_binds = false;
    void operator()(std::string name, std::string change, std::string tradeoff,
                    const std::function<void(Scenario&)>& apply) const {
        Scenario x = s;
        apply(x);
        x.gpus = x.parallel.world();
        if (!valid(x)) return;
        // The unstated memory levers decided afresh for the changed layout, as estimate decides them (a lever
        // priced without them read "NO" fit where estimate of the same layout fits).
        resolve_memory_levers(x);
        StepEstimate r;
        try {
            r = run(x);
        } catch (const ConfigError&) {
            return;
        }
        if (!std::isfinite(r.step_time_s) || !(r.step_time_s > 0) || !std::isfinite(r.memory.total_bytes)) return;
        Lever l;
        l.name = std::move(name);
        l.change = std::move(change);
        l.tradeoff = std::move(tradeoff);
        l.gpus = x.parallel.world();
        l.step_time_s = r.step_time_s;
        l.tokens_per_s_per_gpu = r.tokens_per_s_per_gpu;
        l.mfu = r.mfu;
        l.peak_bytes = r.memory.total_bytes;
        l.fits = r.memory.fits;
        l.binding_after = memory_binds ? r.memory.total_bytes : r.step_time_s;
        l.improves = l.binding_after < e.binding_value * (1 - 1e-9);
        l.scenario = std::move(x);
        e.levers.push_back(std::move(l));
    }
};

// The layout's levers: tensor, sequence, pipeline and context parallelism.
void layout_levers(const Scenario& s, const LeverAdder& lever) {
    const auto& p0 = s.parallel;
    const int domain = s.system.scaleup_domain;
    if (p0.dp % 2 == 0 && p0.tp * 2 <= domain)
        lever("more tensor parallelism", fmt::format("tp {} -> {}, dp {} -> {}", p0.tp, p0.tp * 2, p0.dp, p0.dp / 2),
              "splits weights, gradients, optimizer and activations; adds per-layer all-reduces on NVLink",
              [](Scenario& x) {
                  x.parallel.tp *= 2;
                  x.parallel.dp /= 2;
              });
    if (p0.tp > 1 && p0.tp % 2 == 0)
        lever("less tensor parallelism", fmt::format("tp {} -> {}, dp {} -> {}", p0.tp, p0.tp / 2, p0.dp, p0.dp * 2),
              "fewer per-layer collectives and larger GEMMs; more memory per GPU", [](Scenario& x) {
                  x.parallel.tp /= 2;
                  x.parallel.dp *= 2;
              });
    if (p0.tp > 1 && !p0.sequence_parallel)
        lever("sequence parallelism", "sp off -> on",
              "divides norm/dropout activations by tp; same bytes as the all-reduces it replaces",
              [](Scenario& x) { x.parallel.sequence_parallel = true; });
    if (p0.dp % 2 == 0)
        lever("more pipeline stages", fmt::format("pp {} -> {}, dp {} -> {}", p0.pp, p0.pp * 2, p0.dp, p0.dp / 2),
              "fewer layers (weights, states) per GPU; a larger bubble unless micro-batches grow", [](Scenario& x) {
                  x.parallel.pp *= 2;
                  x.parallel.dp /= 2;
              });
    if (p0.pp > 1 && p0.pp % 2 == 0)
        lever("fewer pipeline stages", fmt::format("pp {} -> {}, dp {} -> {}", p0.pp, p0.pp / 2, p0.dp, p0.dp * 2),
              "a smaller bubble; more layers per GPU", [](Scenario& x) {
                  x.parallel.pp /= 2;
                  x.parallel.dp *= 2;
              });
    if (p0.pp > 1)
        lever("interleaved schedule (more model chunks)",
              p0.schedule->uses_chunks ? fmt::format("vp {} -> {}", p0.vp, p0.vp * 2)
                                       : fmt::format("vp {} -> {}, schedule {} -> {}", p0.vp, p0.vp * 2,
                                                     p0.schedule->name, default_schedule(p0.vp * 2).name),
              "divides the bubble by v; v times more pipeline sends and more in-flight activations", [](Scenario& x) {
                  x.parallel.vp *= 2;
                  x.parallel.schedule = &default_schedule(x.parallel.vp);
              });
    if (p0.dp % 2 == 0)
        lever("context parallelism", fmt::format("cp {} -> {}, dp {} -> {}", p0.cp, p0.cp * 2, p0.dp, p0.dp / 2),
              "splits the sequence (activations) across GPUs; ring attention exchanges K/V", [](Scenario& x) {
                  x.parallel.cp *= 2;
                  x.parallel.dp /= 2;
              });
}

// Recompute, ZeRO stage and micro-batch levers.
void state_levers(const Scenario& s, const LeverAdder& lever) {
    const auto& p0 = s.parallel;
    const auto& t0 = s.training;
    if (t0.recompute != Recompute::selective)
        lever("selective recompute", fmt::format("recompute {} -> selective", to_string(t0.recompute)),
              t0.recompute == Recompute::full ? "stores more activations, recomputes only attention internals"
                                              : "drops attention internals from memory for a few % compute",
              [](Scenario& x) {
                  x.training.recompute = Recompute::selective;
                  x.training.recompute_num_layers = 0;
                  x.training.activation_offload_layers = 0;
              });
    if (t0.recompute != Recompute::full)
        lever("full recompute", fmt::format("recompute {} -> full", to_string(t0.recompute)),
              "keeps only layer inputs; one extra forward (~+33% compute)", [](Scenario& x) {
                  x.training.recompute = Recompute::full;
                  x.training.recompute_num_layers = 0;
                  x.training.activation_offload_layers = 0;
              });
    if (t0.recompute != Recompute::none)
        lever("no recompute", fmt::format("recompute {} -> none", to_string(t0.recompute)),
              "saves the recompute FLOPs; stores every activation", [](Scenario& x) {
                  x.training.recompute = Recompute::none;
                  x.training.recompute_num_layers = 0;
              });
    if (p0.zero < 3 && p0.dp > 1)
        lever("higher ZeRO stage", fmt::format("zero {} -> {}", p0.zero, p0.zero + 1),
              p0.zero == 2   ? "shards weights too: an all-gather per layer forward and backward (1.5x DDP volume)"
              : p0.zero == 1 ? "shards gradients too: a reduce-scatter in every micro-batch's backward"
                             : "shards optimizer states over dp at no extra communication",
              [](Scenario& x) { x.parallel.zero += 1; });
    if (p0.zero > 0)
        lever("lower ZeRO stage", fmt::format("zero {} -> {}", p0.zero, p0.zero - 1), "less communication, more memory",
              [](Scenario& x) { x.parallel.zero -= 1; });
    if (t0.micro_batch > 1)
        lever("smaller micro-batch", fmt::format("micro_batch {} -> {}", t0.micro_batch, t0.micro_batch / 2),
              "halves activations; smaller GEMMs and more pipeline steps",
              [](Scenario& x) { x.training.micro_batch /= 2; });
    lever("larger micro-batch", fmt::format("micro_batch {} -> {}", t0.micro_batch, t0.micro_batch * 2),
          "larger GEMMs, fewer micro-batches (a larger bubble share); more activations",
          [](Scenario& x) { x.training.micro_batch *= 2; });
}

// The levers sized to fit: Megatron's partial recompute and activation offload at the fewest layers that fit.
void fitting_levers(const Scenario& s, const LeverAdder& lever) {
    const bool memory_binds = lever.memory_binds;
    const auto& p0 = s.parallel;
    const auto& t0 = s.training;
    // The fewest layers that fit (memory falls with n), or 0 when even `hi` does not. `gpu_only`: the
    // GPU's memory alone (host memory rises with offloaded layers: checked by the lever).
    auto fewest_fitting = [&](int hi, const std::function<void(Scenario&, int)>& set, bool gpu_only = false) {
        return fewest_satisfying(hi, [&](int n) {
            Scenario x = s;
            set(x, n);
            if (!valid(x)) return false;
            resolve_memory_levers(x);
            const auto m = training_memory(x.training_job());
            return gpu_only ? m.total_bytes <= m.capacity_bytes : m.fits;
        });
    };
    // Megatron's --recompute-num-layers: full recompute of only the first n layers of every model chunk,
    // the fewest that fit (when memory binds, or when full recompute of every layer is more than needed).
    {
        const int most = max_layers_per_chunk(s.model.layers, p0);
        const bool all_recomputed = t0.recompute == Recompute::full;
        if (t0.activation_offload_layers == 0 && (memory_binds || all_recomputed)) {
            auto set = [](Scenario& x, int n) {
                x.training.recompute = Recompute::full;
                x.training.recompute_num_layers = n;
            };
            const int current = all_recomputed && t0.recompute_num_layers > 0 ? t0.recompute_num_layers : most;
            const int n = fewest_fitting(std::min(most, current) - 1, set);
            if (n > 0)
                lever("recompute fewer layers",
                      fmt::format("recompute {}{} -> full, first {} layers of each chunk", to_string(t0.recompute),
                                  all_recomputed && t0.recompute_num_layers > 0
                                      ? fmt::format(" (first {})", t0.recompute_num_layers)
                                      : "",
                                  n),
                      fmt::format("recomputes {} of every chunk's {} layers, the fewest that fit: less recompute than "
                                  "full, less memory than none (Megatron --recompute-num-layers)",
                                  n, most),
                      [&set, n](Scenario& x) { set(x, n); });
        }
    }
    // Megatron-Core's activation offload (one stage, no recompute): the fewest layers that fit.
    if (memory_binds && p0.pp == 1 && t0.recompute == Recompute::none && s.system.pcie_GBps > 0) {
        auto set = [](Scenario& x, int n) { x.training.activation_offload_layers = n; };
        const int n = fewest_fitting(s.model.layers - 1, set, true);
        if (n > 0 && n != t0.activation_offload_layers)
            lever("activation offload",
                  fmt::format("activation_offload_layers {} -> {}", t0.activation_offload_layers, n),
                  fmt::format("the first {} layers' activations go to host memory and back over the host link ({:.0f} "
                              "GB/s); hidden behind compute while the link keeps up",
                              n, s.system.pcie_GBps),
                  [&set, n](Scenario& x) { set(x, n); });
    }
}

// Offload and precision levers.
void precision_levers(const Scenario& s, const LeverAdder& lever) {
    const auto& p0 = s.parallel;
    const auto& t0 = s.training;
    if (t0.offload == Offload::none)
        lever("optimizer offload", "offload none -> optimizer",
              "optimizer states and step on the host; PCIe traffic and a CPU Adam step each iteration",
              [](Scenario& x) { x.training.offload = Offload::optimizer; });
    if (t0.grad_precision == Precision::fp32 && t0.precision != Precision::fp32)
        lever("bf16 gradient reduction", "grad_precision fp32 -> bf16",
              "halves gradient memory and DP gradient traffic (NeMo recipes' grad_sync_dtype); bf16 accumulation",
              [](Scenario& x) { x.training.grad_precision = Precision::bf16; });
    if (t0.optimizer_state_precision == Precision::fp32)
        lever("bf16 optimizer moments", "optimizer_state_precision fp32 -> bf16",
              "halves the optimizer's moments, Adam's m and v (Megatron-Core --use-precision-aware-optimizer "
              "--exp-avg-dtype bf16; "
              "DeepSeek-V3 trained so); less optimizer traffic, a convergence check",
              [](Scenario& x) { x.training.optimizer_state_precision = Precision::bf16; });
    if (t0.master_weights == MasterWeights::fp32)
        lever("master-weight remainders", "master_weights fp32 -> remainder",
              "keeps only the low 16 bits of each fp32 master beside the bf16 weight, bit-exact (Apex "
              "DistributedFusedAdam in NeMo, Transformer Engine FusedAdam store_param_remainders)",
              [](Scenario& x) { x.training.master_weights = MasterWeights::remainder; });
    if (t0.precision == Precision::fp8 && !t0.fp8_params && t0.finetune.method != FinetuneConfig::Method::qlora)
        lever("FP8 parameters", "fp8_params false -> true",
              "the layers' weights kept and gathered in FP8, 1 byte instead of 2 (Megatron --fp8-param-gather)",
              [](Scenario& x) { x.training.fp8_params = true; });
    if (eager_elementwise(p0))
        lever("torch.compile", "torch_compile false -> true",
              "fuses the eager RMSNorm, RoPE and activation kernels (fp32 intermediates) as Transformer Engine "
              "does; compile time at start-up, graph breaks to watch",
              [](Scenario& x) { x.parallel.torch_compile = true; });
    if (t0.precision != Precision::fp8 && s.system.gpu.peak(Precision::fp8) > 0)
        lever("FP8 training", fmt::format("precision {} -> fp8", to_string(t0.precision)),
              "about 2x GEMM peak on Hopper and later; needs scaling recipes and convergence checks",
              [](Scenario& x) { x.training.precision = Precision::fp8; });
}

// Every training lever, each re-run through the closed form, appended to e.levers.
void training_levers(const Scenario& s, Explanation& e) {
    const LeverAdder lever{s, e, !e.base.memory.fits};
    layout_levers(s, lever);
    state_levers(s, lever);
    fitting_levers(s, lever);
    precision_levers(s, lever);
    const auto& p0 = s.parallel;
    // ZeRO shards its states over the data-parallel ranks: with a stage on, dp moves the memory per GPU.
    const std::string sharded = p0.zero >= 3   ? "weights, gradients and optimizer states"
                                : p0.zero == 2 ? "gradients and optimizer states"
                                : p0.zero == 1 ? "optimizer states"
                                               : "";
    lever("more GPUs", fmt::format("dp {} -> {} ({} GPUs)", p0.dp, p0.dp * 2, 2 * p0.world()),
          sharded.empty() ? "shorter steps at the same global batch; more money and a smaller batch per GPU"
                          : fmt::format("shorter steps at the same global batch; more money and a smaller batch per "
                                        "GPU; less memory per GPU (ZeRO-{} shards {} over twice the ranks)",
                                        p0.zero, sharded),
          [](Scenario& x) { x.parallel.dp *= 2; });
    if (p0.dp % 2 == 0)
        lever("fewer GPUs", fmt::format("dp {} -> {} ({} GPUs)", p0.dp, p0.dp / 2, p0.world() / 2),
              sharded.empty() ? "cheaper per step, longer steps; same memory per GPU"
                              : fmt::format("cheaper per step, longer steps; more memory per GPU (ZeRO-{} shards {} "
                                            "over half the ranks)",
                                            p0.zero, sharded),
              [](Scenario& x) { x.parallel.dp /= 2; });
}

// The recommended lever (e.recommended) and its sentence (e.recommendation).
void training_recommendation(const Scenario& s, Explanation& e) {
    const auto& mem = e.base.memory;
    const bool memory_binds = !mem.fits;
    const auto& p0 = s.parallel;
    const int gpus0 = p0.world();
    int best = -1;
    for (std::size_t i = 0; i < e.levers.size(); ++i) {
        const auto& l = e.levers[i];
        if (!l.improves) continue;
        // Whatever binds: the fastest step among the levers that fit at the same GPU count.
        if (!l.fits || l.gpus != gpus0) continue;
        if (best < 0 || l.step_time_s < e.levers[static_cast<std::size_t>(best)].step_time_s)
            best = static_cast<int>(i);
    }
    // Nothing fits alone: the largest saving at the same GPU count among the levers that cost at most 10%
    // of the step (the cheap ones first), else among all.
    for (const double slack : {1.10, 1e300}) {
        if (best >= 0 || !memory_binds) break;
        for (std::size_t i = 0; i < e.levers.size(); ++i) {
            const auto& l = e.levers[i];
            if (!l.improves || l.gpus != gpus0 || l.step_time_s > slack * e.base.step_time_s) continue;
            if (best < 0 || l.peak_bytes < e.levers[static_cast<std::size_t>(best)].peak_bytes)
                best = static_cast<int>(i);
        }
    }
    e.recommended = best;
    if (best >= 0) {
        const auto& l = e.levers[static_cast<std::size_t>(best)];
        e.recommendation =
            memory_binds ? fmt::format("{} ({}): peak {:.1f} GiB -> {:.1f} GiB{}, step {:.3g} s", l.name, l.change,
                                       mem.total_bytes / kGiB, l.peak_bytes / kGiB,
                                       l.fits ? " (fits)" : " (still too large)", l.step_time_s)
                         : fmt::format("{} ({}): step {:.3g} s -> {:.3g} s, MFU {:.1f}% -> {:.1f}%", l.name, l.change,
                                       e.base.step_time_s, l.step_time_s, 100 * e.base.mfu, 100 * l.mfu);
    } else {
        e.recommendation = memory_binds ? "no single lever at this GPU count fits: add GPUs or combine levers"
                                        : "no single lever at this GPU count shortens the step: the layout is at a "
                                          "local optimum (try `llmsim search`)";
    }
}

}   // namespace

Explanation explain_training(const Scenario& s) {
    if (s.is_inference) throw ConfigError("/inference: present: `explain` covers training scenarios");
    Explanation e;
    e.base = run(s);
    training_binding(e);
    training_levers(s, e);
    training_recommendation(s, e);
    return e;
}

std::vector<Lever> fit_path(const Scenario& s, int max_steps) {
    std::vector<Lever> path;
    Scenario cur = s;
    for (int i = 0; i < max_steps; ++i) {
        const Explanation e = explain_training(cur);
        if (e.binding != "memory" || e.recommended < 0) break;
        path.push_back(e.levers[static_cast<std::size_t>(e.recommended)]);
        if (path.back().fits) break;
        cur = path.back().scenario;
    }
    return path;
}

}   // namespace llmsim::app
