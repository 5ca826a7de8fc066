#include "app/drills/calc.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cost_models/collectives.hpp"
#include "cost_models/flops.hpp"
#include "cost_models/inference.hpp"
#include "cost_models/layer/layer.hpp"
#include "cost_models/memory.hpp"
#include "cost_models/model_params.hpp"
#include "cost_models/roofline.hpp"
#include "cost_models/scaling_laws.hpp"
#include "hardware_db/errors.hpp"

namespace llmsim::drills {

namespace {

void require(bool ok, const std::string& what) {
    if (!ok) throw ConfigError(what);
}

Worked step(std::string label, std::string formula, std::string numbers, double value, std::string unit,
            std::string why = "") {
    return {std::move(label), std::move(formula), std::move(numbers), value, std::move(unit), std::move(why)};
}

constexpr double kGB = 1e9;

}   // namespace

// ------------------------------------------------------------------------------------------------
// Formatting
// ------------------------------------------------------------------------------------------------
std::string num(double v) {
    if (!std::isfinite(v)) return "n/a";
    const double a = std::fabs(v);
    if (a == 0) return "0";
    if (a >= 1e6 || a < 1e-3) return fmt::format("{:.3g}", v);
    if (v == std::round(v)) return fmt::format("{:.0f}", v);   // integers as integers: "10", "350"
    const int digits = static_cast<int>(std::floor(std::log10(a)));
    const int decimals = std::max(0, 2 - digits);
    std::string s = fmt::format("{:.{}f}", v, decimals);
    return s;
}

static std::string scaled(double v, const char* const* units, int count, double base) {
    int i = 0;
    while (i + 1 < count && std::fabs(v) >= base) {
        v /= base;
        ++i;
    }
    return num(v) + " " + units[i];
}

std::string bytes_str(double b) {
    static const char* const u[] = {"B", "KB", "MB", "GB", "TB", "PB"};
    return scaled(b, u, 6, 1000.0);
}

std::string flops_str(double f) {
    static const char* const u[] = {"FLOP", "KFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP", "ZFLOP", "YFLOP"};
    return scaled(f, u, 9, 1000.0);
}

std::string count_str(double n) {
    const double a = std::fabs(n);
    if (a >= 1e12) return num(n / 1e12) + "T";
    if (a >= 1e9) return num(n / 1e9) + "B";
    if (a >= 1e6) return num(n / 1e6) + "M";
    if (a >= 1e3) return num(n / 1e3) + "K";
    return num(n);
}

namespace {
// The formatters a block kind's formulas print their numbers with (cost_models/layer/layer.hpp).
constexpr NumberText kNumberText{num, count_str};
}   // namespace

std::string seconds_str(double s) {
    const double a = std::fabs(s);
    if (a >= 2 * 86400.0) return num(s / 86400.0) + " days";
    if (a >= 2 * 3600.0) return num(s / 3600.0) + " h";
    if (a >= 1.0 || a == 0) return num(s) + " s";
    if (a >= 1e-3) return num(s * 1e3) + " ms";
    return num(s * 1e6) + " us";
}

std::string render(const Calc& c) {
    std::string out = c.title + "\n";
    for (const auto& g : c.given) out += "  given: " + g + "\n";
    for (std::size_t i = 0; i < c.steps.size(); ++i) {
        const auto& s = c.steps[i];
        out += "  " + s.label + "\n";
        if (!s.formula.empty()) out += "    " + s.formula + "\n";
        if (!s.numbers.empty()) out += "      = " + s.numbers + "\n";
        // The answer's marker on its number's line: a short line, which no terminal's width breaks.
        out += "      = " + num(s.value) + (s.unit.empty() ? "" : " " + s.unit) + (i == c.answer ? "  <- answer" : "") +
               "\n";
        if (!s.why.empty()) out += "    why: " + s.why + "\n";
    }
    if (!c.note.empty()) out += "  " + c.note + "\n";
    return out;
}

// ------------------------------------------------------------------------------------------------
// Communication
// ------------------------------------------------------------------------------------------------
double textbook_tree_all_reduce_time(int n, double bytes, double alpha_s, double bw_Bps) noexcept {
    if (n <= 1) return 0.0;
    return 2.0 * std::log2(static_cast<double>(n)) * (alpha_s + bytes / bw_Bps);
}

Calc all_reduce_calc(const CollectiveQuery& q) {
    require(q.ranks >= 2, fmt::format("--ranks: {}: expected at least 2", q.ranks));
    require(q.bytes > 0 && std::isfinite(q.bytes), fmt::format("--bytes: {}: expected a positive size", q.bytes));
    require(q.GBps > 0 && std::isfinite(q.GBps), fmt::format("--GBps: {}: expected a positive bandwidth", q.GBps));
    require(q.alpha_s >= 0 && std::isfinite(q.alpha_s),
            fmt::format("--latency-us: {}: expected a latency >= 0", q.alpha_s * 1e6));
    const int p = q.ranks;
    const double B = q.GBps * kGB, M = q.bytes, a = q.alpha_s, lg = std::log2(static_cast<double>(p));
    Calc c;
    c.title = "All-reduce of one buffer";
    c.given = {fmt::format("M = {} buffer, p = {} ranks, B = {} GB/s per rank and direction, α = {} per step",
                           bytes_str(M), p, num(q.GBps), seconds_str(a))};
    const std::string lat = a > 0 ? fmt::format(" + 2·{}·{}", p - 1, seconds_str(a)) : "";
    // Results in s, ms or us after the ring's magnitude (one unit for every row).
    const double ring_s = ring_all_reduce_time(p, M, a, B);
    const double scale = ring_s >= 1.0 ? 1.0 : ring_s >= 1e-3 ? 1e3 : 1e6;
    const std::string unit = scale == 1.0 ? "s" : scale == 1e3 ? "ms" : "us";
    c.steps.push_back(step("ring (bandwidth-optimal; NCCL Ring)", "T = 2(p−1)/p · M/B + 2(p−1)·α",
                           fmt::format("2·{}/{} · {} / {} GB/s{}", p - 1, p, bytes_str(M), num(q.GBps), lat),
                           ring_s * scale, unit,
                           "each rank sends and receives 2(p−1)/p·M: the bandwidth term barely grows with p, the "
                           "latency term grows linearly"));
    c.steps.push_back(
        step("tree, NCCL pipelined (double binary tree)", "T = 2·M/B + 2·log2(p)·α",
             fmt::format("2 · {} / {} GB/s + 2·{}·{}", bytes_str(M), num(q.GBps), num(lg), seconds_str(a)),
             tree_all_reduce_time(p, M, a, B) * scale, unit,
             "NCCL cuts the buffer into chunks that stream up and down the tree, so the depth log2(p) "
             "costs latency only"));
    c.steps.push_back(
        step("tree, textbook (not pipelined)", "T = 2·log2(p) · (M/B + α)",
             fmt::format("2·{} · ({} / {} GB/s + {})", num(lg), bytes_str(M), num(q.GBps), seconds_str(a)),
             textbook_tree_all_reduce_time(p, M, a, B) * scale, unit,
             "the whole buffer crosses every level twice; no real library runs it this way for large "
             "buffers — it is the bound interview formulas quote"));
    if (q.system) {
        const SystemSpec& s = *q.system;
        const GroupPlacement g = place_group(p, 1, std::max(1, s.scaleup_domain));
        for (const auto& alg : algorithms()) {
            const double t = algorithm_time(s, Collective::all_reduce, alg, M, g);
            if (t < 0) continue;
            c.steps.push_back(step(fmt::format("{} on {} (collectives registry)", alg.name, s.name),
                                   std::string(alg.contract),
                                   fmt::format("{} ranks, {} per scale-up domain", p, g.per_domain), t * scale, unit));
        }
        const auto best = collective_time(s, Collective::all_reduce, M, g);
        c.note = fmt::format("NCCL's tuner on {} picks {}: {} (bus bandwidth {} GB/s)", s.name, best.algorithm_name(),
                             seconds_str(best.time_s), num(best.busbw_GBps));
    }
    c.answer = 0;
    return c;
}

Calc tp_comm_calc(const ModelSpec& m, std::int64_t seq, std::int64_t micro_batch, int tp, bool sp, double GBps) {
    require(tp >= 2, fmt::format("--tp: {}: expected at least 2", tp));
    const double h = static_cast<double>(m.hidden), s = static_cast<double>(seq), b = static_cast<double>(micro_batch);
    const double msg = s * b * h * 2.0;
    Calc c;
    c.title = fmt::format("Tensor-parallel communication of one {} layer", m.name);
    c.given = {fmt::format("s = {}, b = {}, h = {}, tp = {}, 16-bit activations{}", seq, micro_batch, m.hidden, tp,
                           sp ? ", sequence parallel" : "")};
    c.steps.push_back(step("message of one collective", "M = s·b·h·2 bytes",
                           fmt::format("{}·{}·{}·2", seq, micro_batch, m.hidden), msg / kGB, "GB"));
    c.steps.push_back(
        step(sp ? "collectives per layer: 2 all-gathers + 2 reduce-scatters forward, the same backward"
                : "collectives per layer: 2 all-reduces forward (attention, MLP), 2 backward",
             sp ? "V = 4 · M (4 all-gather + reduce-scatter pairs, each moving what one all-reduce of M moves)"
                : "V = 4 · M",
             fmt::format("4 · {}", bytes_str(msg)), 4.0 * msg / kGB, "GB",
             sp ? ""
                : "sequence parallelism replaces each all-reduce by a reduce-scatter and an "
                  "all-gather: same bytes, but norms and dropout then run on s/tp tokens"));
    const double t = 4.0 * ring_all_reduce_time(tp, msg, 0.0, GBps * kGB);
    c.steps.push_back(step("time on the scale-up link (ring, no latency)", "T = 4 · 2(tp−1)/tp · M/B",
                           fmt::format("4 · 2·{}/{} · {} / {} GB/s", tp - 1, tp, bytes_str(msg), num(GBps)), t * 1e3,
                           "ms", "TP sits inside one NVLink domain because this traffic repeats every layer"));
    c.answer = 1;
    return c;
}

Calc fsdp_vs_ddp_calc(double params, int ranks, double bytes_per_param) {
    require(ranks >= 2, fmt::format("--ranks: {}: expected at least 2", ranks));
    const double psi = params * bytes_per_param, f = (ranks - 1.0) / ranks;
    Calc c;
    c.title = "Bytes each GPU sends per step: DDP vs FSDP (ZeRO-3)";
    c.given = {fmt::format("Ψ = {} params · {} B = {}, n = {} ranks", count_str(params), num(bytes_per_param),
                           bytes_str(psi), ranks)};
    c.steps.push_back(step("DDP / ZeRO-1/2: one all-reduce of the gradients", "V = 2(n−1)/n · Ψ",
                           fmt::format("2·{}/{} · {}", ranks - 1, ranks, bytes_str(psi)), 2 * f * psi / kGB, "GB"));
    c.steps.push_back(step("FSDP / ZeRO-3: all-gather (forward) + all-gather (backward) + reduce-scatter",
                           "V = 3(n−1)/n · Ψ", fmt::format("3·{}/{} · {}", ranks - 1, ranks, bytes_str(psi)),
                           3 * f * psi / kGB, "GB",
                           "1.5× DDP's volume (ZeRO paper, Sec. 7); it overlaps with compute layer by layer, while "
                           "TP's per-layer activations traffic sits on the critical path"));
    c.answer = 1;
    return c;
}

// ------------------------------------------------------------------------------------------------
// Compute
// ------------------------------------------------------------------------------------------------
Calc gemm_calc(const AcceleratorSpec& gpu, double m, double n, double k, Precision p) {
    require(m >= 1 && n >= 1 && k >= 1, "--m/--n/--k: expected positive GEMM dimensions");
    require(gpu.peak(p) > 0, fmt::format("--precision: {}: {} has no peak for it", to_string(p), gpu.name));
    GemmSpec g;
    g.m = m;
    g.n = n;
    g.k = k;
    g.precision = p;
    g.sustained = false;
    const KernelTime kt = gemm_time(gpu, g);
    const double ai = kt.flops / kt.bytes;
    const double ridge = gpu.peak(p) / (gpu.hbm_GBps * kGB);
    const double eb = g.a_bytes > 0 ? g.a_bytes : precision_bytes(p);
    Calc c;
    c.title = fmt::format("GEMM C[{}×{}] = A[{}×{}]·B[{}×{}] on {} ({})", num(m), num(n), num(m), num(k), num(k),
                          num(n), gpu.display_name, to_string(p));
    c.steps.push_back(
        step("FLOPs", "F = 2·m·n·k", fmt::format("2·{}·{}·{}", num(m), num(n), num(k)), kt.flops / 1e9, "GFLOP"));
    c.steps.push_back(step("HBM bytes (A, B read once, C written once)", "Q = e_A·m·k + e_B·k·n + e_C·m·n",
                           fmt::format("{} B per input element, 16-bit output", num(eb)), kt.bytes / 1e6, "MB"));
    c.steps.push_back(step("arithmetic intensity", "I = F / Q",
                           fmt::format("{} / {}", flops_str(kt.flops), bytes_str(kt.bytes)), ai, "FLOP/byte"));
    c.steps.push_back(step("ridge point of the GPU", "I* = peak / HBM bandwidth",
                           fmt::format("{} / {} GB/s", flops_str(gpu.peak(p)) + "/s", num(gpu.hbm_GBps)), ridge,
                           "FLOP/byte"));
    const double bound = std::max(kt.flops / gpu.peak(p), kt.bytes / (gpu.hbm_GBps * kGB));
    c.steps.push_back(step(
        ai >= ridge ? "roofline bound: compute-bound (I > I*)" : "roofline bound: memory-bound (I < I*)",
        "T ≥ max(F / peak, Q / BW)",
        fmt::format("max({}, {})", seconds_str(kt.flops / gpu.peak(p)), seconds_str(kt.bytes / (gpu.hbm_GBps * kGB))),
        bound * 1e6, "us"));
    c.steps.push_back(step("llmsim's kernel time (tile/wave quantisation, achievable peak, launch)",
                           "roofline gemm_time", "", kt.time_s * 1e6, "us",
                           "real GEMMs reach 60-80% of peak: tiles and waves quantise the output, short k cannot hide "
                           "the prologue"));
    c.answer = 2;
    return c;
}

Calc flops_per_token_calc(const ModelSpec& m, std::int64_t seq) {
    const auto pc = count_parameters(m);
    TrainingConfig t;
    t.seq_len = seq;
    t.micro_batch = 1;
    t.global_batch = 1;
    const auto f = training_flops(m, t);
    Calc c;
    c.title = fmt::format("FLOPs per token of {} at sequence length {}", m.name, seq);
    c.given = {fmt::format("N = {} active parameters", count_str(pc.active))};
    c.steps.push_back(step("training, the 6N rule (forward 2N, backward 4N)", "F = 6·N",
                           fmt::format("6 · {}", count_str(pc.active)), 6 * pc.active / 1e9, "GFLOP"));
    c.steps.push_back(step("training, llmsim's count (attention scores, logits; causal)", "flops model_flops_per_token",
                           "", f.model_flops_per_token / 1e9, "GFLOP",
                           "6N counts every parameter (the input embedding does no matmul) and no attention scores "
                           "(≈ 6·L·s·h per token, causal), which grow with context"));
    c.steps.push_back(step("inference (one generated token)", "F ≈ 2·N", fmt::format("2 · {}", count_str(pc.active)),
                           2 * pc.active / 1e9, "GFLOP", "decode is limited by bytes read, not by these FLOPs"));
    c.answer = 0;
    return c;
}

Calc mfu_calc(const ModelSpec& m, std::int64_t seq, double tokens_per_s, int gpus, const AcceleratorSpec& gpu,
              Precision p) {
    require(tokens_per_s > 0 && gpus >= 1, "--tokens-per-s/--gpus: expected positive values");
    require(gpu.peak(p) > 0, fmt::format("--precision: {}: expected a precision {} has a peak for (it has none)",
                                         to_string(p), gpu.name));
    const auto pc = count_parameters(m);
    TrainingConfig t;
    t.seq_len = seq;
    const auto f = training_flops(m, t);
    const double mfu6 = 6 * pc.active * tokens_per_s / (gpus * gpu.peak(p));
    const double mfu = f.model_flops_per_token * tokens_per_s / (gpus * gpu.peak(p));
    // A measurement past the GPUs' peak is not one: MFU lies in (0, 1] by either count.
    const double most = gpus * gpu.peak(p) / std::max(6 * pc.active, f.model_flops_per_token);
    require(std::max(mfu, mfu6) <= 1.0,
            fmt::format("--tokens-per-s: {}: expected at most {} ({} GPUs at their {} peak, 100% MFU)",
                        num(tokens_per_s), num(most), gpus, to_string(p)));
    Calc c;
    c.title = fmt::format("MFU of {} on {} × {}", m.name, gpus, gpu.display_name);
    c.given = {
        fmt::format("{} tokens/s, peak {}/s per GPU ({})", num(tokens_per_s), flops_str(gpu.peak(p)), to_string(p))};
    c.steps.push_back(step(
        "MFU with 6N", "MFU = 6·N·tokens/s / (GPUs · peak)",
        fmt::format("6 · {} · {} / ({} · {}/s)", count_str(pc.active), num(tokens_per_s), gpus, flops_str(gpu.peak(p))),
        100 * mfu6, "%"));
    c.steps.push_back(step("MFU with llmsim's model FLOPs (attention included)",
                           "MFU = F_token·tokens/s / (GPUs · peak)",
                           fmt::format("{} · {} / ({} · {}/s)", flops_str(f.model_flops_per_token), num(tokens_per_s),
                                       gpus, flops_str(gpu.peak(p))),
                           100 * mfu, "%", "papers differ on whether attention FLOPs count; llmsim reports both"));
    c.answer = 0;
    return c;
}

Calc training_time_calc(double params, double tokens, int gpus, double peak_flops, double mfu,
                        double usd_per_gpu_hour) {
    require(params > 0 && tokens > 0, "--params/--tokens: expected positive values");
    require(gpus >= 1, fmt::format("--gpus: {}: expected at least 1", gpus));
    require(mfu > 0 && mfu <= 1, fmt::format("--mfu: {}: expected a fraction in (0, 1]", mfu));
    require(peak_flops > 0, "--peak-tflops: expected a positive peak");
    const double C = training_compute(params, tokens);
    const double secs = C / (gpus * peak_flops * mfu);
    Calc c;
    c.title = "Training time and cost";
    c.given = {fmt::format("N = {}, D = {} tokens, {} GPUs at {}/s peak, MFU {}%", count_str(params), count_str(tokens),
                           gpus, flops_str(peak_flops), num(100 * mfu))};
    c.steps.push_back(
        step("compute", "C = 6·N·D", fmt::format("6 · {} · {}", count_str(params), count_str(tokens)), C, "FLOP"));
    c.steps.push_back(step("wall time", "T = C / (GPUs · peak · MFU)",
                           fmt::format("{} / ({} · {}/s · {})", flops_str(C), gpus, flops_str(peak_flops), num(mfu)),
                           secs / 86400.0, "days",
                           "MFU already folds in communication, bubbles and restarts only if measured end to end"));
    c.steps.push_back(step("GPU-hours", "GPU·h = GPUs · T", fmt::format("{} · {} h", gpus, num(secs / 3600)),
                           gpus * secs / 3600.0, "GPU-hours"));
    if (usd_per_gpu_hour > 0)
        c.steps.push_back(step("cost", "$ = GPU·h · price",
                               fmt::format("{} · ${}", num(gpus * secs / 3600.0), num(usd_per_gpu_hour)),
                               gpus * secs / 3600.0 * usd_per_gpu_hour, "USD"));
    c.answer = 1;
    return c;
}

// ------------------------------------------------------------------------------------------------
// Pipeline and scaling
// ------------------------------------------------------------------------------------------------
Calc bubble_calc(const ScheduleDef& schedule, int p, std::int64_t m, int v, double wgrad_share) {
    require(p >= 1, fmt::format("--p: {}: expected at least 1", p));
    require(m >= 1, fmt::format("--m: {}: expected at least 1", m));
    require(v >= 1, fmt::format("--v: {}: expected at least 1", v));
    require(v == 1 || schedule.uses_chunks,
            fmt::format("--v: {}: schedule {} runs one chunk per stage", v, schedule.name));
    PipelineTimes t;
    t.stages = p;
    t.chunks = v;
    t.microbatches = m;
    t.max_stage_s = 1.0;   // one micro-batch through one stage: the unit of time
    t.sum_stage_s = p;
    t.sum_wgrad_s = p * wgrad_share;
    t.wgrad_of_max_stage_s = wgrad_share;
    const double bubble = schedule.bubble_s(t);
    const double frac = bubble / (m + bubble);
    Calc c;
    c.title = fmt::format("Pipeline bubble, {} schedule", schedule.name);
    c.given = {
        fmt::format("p = {} stages, m = {} micro-batches, v = {} chunks per stage; t = one micro-batch's "
                    "forward+backward on one stage",
                    p, m, v)};
    std::string formula = "bubble = (p−1)·t";
    std::string numbers = fmt::format("({}−1)·t", p);
    if (schedule.uses_chunks) {
        formula = "bubble = (p−1)·t / v";
        numbers = fmt::format("({}−1)/{}·t", p, v);
    } else if (schedule.split_backward) {
        formula = "bubble = (p−1)·(t − 2·t_W)";
        numbers = fmt::format("({}−1)·(1 − 2·{})·t", p, num(wgrad_share));
    }
    c.steps.push_back(step("idle time of a stage (schedules registry bubble_s)", formula, numbers, bubble, "t"));
    c.steps.push_back(step("bubble over ideal time", "bubble / (m·t)", fmt::format("{} / {}", num(bubble), m),
                           100 * bubble / static_cast<double>(m), "%"));
    c.steps.push_back(step("bubble fraction of the step", "bubble / (m·t + bubble)",
                           fmt::format("{} / ({} + {})", num(bubble), m, num(bubble)), 100 * frac, "%",
                           "textbooks quote (p−1)/m (over ideal time); the step loses (p−1)/(m+p−1) of its time"));
    c.answer = 2;
    return c;
}

Calc amdahl_calc(double serial_fraction, int p) {
    require(serial_fraction >= 0 && serial_fraction <= 1,
            fmt::format("--serial: {}: expected a fraction", serial_fraction));
    require(p >= 1, fmt::format("--p: {}: expected at least 1", p));
    const double s = serial_fraction, speed = 1.0 / (s + (1 - s) / p);
    Calc c;
    c.title = "Amdahl's law (fixed problem size)";
    c.given = {fmt::format("serial fraction s = {}, p = {}", num(s), p)};
    c.steps.push_back(
        step("speedup", "S = 1 / (s + (1−s)/p)", fmt::format("1 / ({} + {}/{})", num(s), num(1 - s), p), speed, "x"));
    c.steps.push_back(step("limit as p → ∞", "S_max = 1/s", fmt::format("1/{}", num(s)), s > 0 ? 1 / s : 0.0, "x",
                           "in training the 'serial' part is exposed communication and bubbles, which grow with p"));
    c.steps.push_back(step("efficiency", "E = S/p", fmt::format("{} / {}", num(speed), p), 100 * speed / p, "%"));
    c.answer = 0;
    return c;
}

Calc gustafson_calc(double serial_fraction, int p) {
    require(serial_fraction >= 0 && serial_fraction <= 1,
            fmt::format("--serial: {}: expected a fraction", serial_fraction));
    require(p >= 1, fmt::format("--p: {}: expected at least 1", p));
    const double s = serial_fraction, speed = s + (1 - s) * p;
    Calc c;
    c.title = "Gustafson's law (problem grows with p)";
    c.given = {fmt::format("serial fraction s = {} (of the run on p GPUs), p = {}", num(s), p)};
    c.steps.push_back(step("scaled speedup", "S = s + (1−s)·p", fmt::format("{} + {}·{}", num(s), num(1 - s), p), speed,
                           "x",
                           "weak scaling: data parallelism grows the batch with p, so the serial share stays put"));
    c.answer = 0;
    return c;
}

Calc scaling_efficiency_calc(int p1, double t1_s, int p2, double t2_s, bool weak) {
    require(p1 >= 1 && p2 > p1, "--p1/--p2: expected 1 <= p1 < p2");
    require(t1_s > 0 && t2_s > 0, "--t1/--t2: expected positive times");
    Calc c;
    c.title = weak ? "Weak scaling efficiency (same work per GPU)" : "Strong scaling efficiency (same problem)";
    c.given = {fmt::format("T({}) = {}, T({}) = {}", p1, seconds_str(t1_s), p2, seconds_str(t2_s))};
    if (weak) {
        c.steps.push_back(step("efficiency", "E = T(p1) / T(p2)", fmt::format("{} / {}", num(t1_s), num(t2_s)),
                               100 * t1_s / t2_s, "%"));
    } else {
        c.steps.push_back(
            step("speedup", "S = T(p1) / T(p2)", fmt::format("{} / {}", num(t1_s), num(t2_s)), t1_s / t2_s, "x"));
        c.steps.push_back(step("efficiency", "E = (p1·T(p1)) / (p2·T(p2))",
                               fmt::format("({}·{}) / ({}·{})", p1, num(t1_s), p2, num(t2_s)),
                               100 * (p1 * t1_s) / (p2 * t2_s), "%",
                               "below 100% when communication does not shrink with the per-GPU work"));
    }
    c.answer = c.steps.size() - 1;
    return c;
}

Calc grad_accum_calc(std::int64_t global_batch, std::int64_t micro_batch, int dp, std::int64_t seq) {
    require(micro_batch >= 1 && dp >= 1 && global_batch >= micro_batch * dp,
            "--global-batch: expected at least micro-batch · dp");
    require(global_batch % (micro_batch * dp) == 0, "--global-batch: expected a multiple of micro-batch · dp");
    const std::int64_t accumulation_steps = global_batch / (micro_batch * dp);   // exact: divisibility checked
    const auto steps = static_cast<double>(accumulation_steps);
    Calc c;
    c.title = "Gradient accumulation";
    c.given = {fmt::format("global batch {} sequences of {} tokens, micro-batch {}, {} data-parallel ranks",
                           global_batch, seq, micro_batch, dp)};
    c.steps.push_back(step("accumulation steps", "n = B_global / (b · dp)",
                           fmt::format("{} / ({} · {})", global_batch, micro_batch, dp), steps, "steps",
                           "accumulation keeps the optimizer's batch while activations hold only b sequences"));
    c.steps.push_back(step("tokens per optimizer step", "B_global · s", fmt::format("{} · {}", global_batch, seq),
                           static_cast<double>(global_batch * seq) / 1e6, "M tokens"));
    c.answer = 0;
    return c;
}

// ------------------------------------------------------------------------------------------------
// Memory
// ------------------------------------------------------------------------------------------------
Calc params_calc(const ModelSpec& m) {
    const auto pc = count_parameters(m);
    Calc c;
    c.title = fmt::format("Parameters of {}", m.name);
    c.given = {fmt::format("L = {}, h = {}, heads = {} (KV heads {}), head dim {}, FFN {} ({}), V = {}{}", m.layers,
                           m.hidden, m.heads, m.kv_heads, m.head_dim, m.ffn_hidden, to_string(m.mlp), m.vocab,
                           m.tied_embeddings ? ", tied embeddings" : "")};
    // The attention block's parameters, as its kind shows them (cost_models/layer/impl).
    const AttentionText at = attention_kind(m).text(m, 2.0, kNumberText);
    if (!at.given.empty()) c.given.push_back(at.given);
    for (const auto& f : at.params)
        c.steps.push_back(step(f.label, f.symbolic, f.substituted, f.value / 1e6, "M", f.note));
    c.steps.push_back(step(
        m.mlp == MlpKind::swiglu ? "MLP per layer (SwiGLU: gate, up, down)" : "MLP per layer (up, down)",
        m.mlp == MlpKind::swiglu ? "3·h·f" : "2·h·f (+ biases)",
        fmt::format("{}·{}·{}", m.mlp == MlpKind::swiglu ? 3 : 2, m.hidden, m.ffn_hidden), pc.dense_mlp_per_layer / 1e6,
        "M", m.mlp == MlpKind::swiglu ? "SwiGLU uses f ≈ 8h/3 so 3·h·f matches GELU's 2·h·4h" : ""));
    c.steps.push_back(
        step("embeddings (input, positions, untied LM head)",
             m.tied_embeddings ? "V·h (+ learned positions)" : "2·V·h (input and LM head) (+ learned positions)",
             fmt::format("{}{}·{}{}", m.tied_embeddings ? "" : "2·", m.vocab, m.hidden,
                         m.position == PositionKind::learned ? fmt::format(" + {}·{}", m.max_seq_len, m.hidden) : ""),
             (pc.embedding + pc.position + pc.output) / 1e6, "M"));
    c.steps.push_back(
        step("total", "L·(attention + MLP + norms) + embeddings + final norm",
             fmt::format("{}·({} + {} + {}) + {}", m.layers, count_str(pc.attention_per_layer),
                         count_str(has_moe_layers(m) ? pc.moe_mlp_per_layer : pc.dense_mlp_per_layer),
                         count_str(pc.norms_per_layer), count_str(pc.embedding + pc.position + pc.output)),
             pc.total / 1e9, "B"));
    c.answer = 4;
    return c;
}

Calc model_states_calc(const ModelSpec& m, int dp, int zero_stage) {
    require(dp >= 1, fmt::format("--dp: {}: expected at least 1", dp));
    require(zero_stage >= 0 && zero_stage <= 3, fmt::format("--zero: {}: expected 0..3", zero_stage));
    ParallelConfig p;
    p.dp = dp;
    p.zero = zero_stage;
    TrainingConfig t;
    t.global_batch = dp;
    SystemSpec sys;
    sys.gpu.hbm_capacity_bytes = 80e9;
    const auto mem = training_memory(m, sys, p, t);
    const double n = mem.params_on_gpu;
    Calc c;
    c.title = fmt::format("Model states per GPU, {} with ZeRO-{} over {} ranks (mixed precision, Adam)", m.name,
                          zero_stage, dp);
    c.given = {fmt::format("Ψ = {} parameters; bf16 weights 2 B, fp32 gradients 4 B, fp32 master + Adam m, v 12 B",
                           count_str(n))};
    const std::string w = zero_stage >= 3 ? fmt::format(" / {}", dp) : "";
    const std::string g = zero_stage >= 2 ? fmt::format(" / {}", dp) : "";
    const std::string o = zero_stage >= 1 ? fmt::format(" / {}", dp) : "";
    c.steps.push_back(
        step("weights", "2·Ψ" + w, fmt::format("2 · {}{}", count_str(n), w), mem.weights_bytes / kGB, "GB"));
    c.steps.push_back(step("gradients", "4·Ψ" + g, fmt::format("4 · {}{}", count_str(n), g), mem.gradients_bytes / kGB,
                           "GB", "Megatron accumulates fp32 main gradients; DeepSpeed's 16-bit gradients give 2·Ψ"));
    c.steps.push_back(step("optimizer (master + m + v)", "12·Ψ" + o, fmt::format("12 · {}{}", count_str(n), o),
                           mem.optimizer_bytes / kGB, "GB"));
    const double total = mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes;
    c.steps.push_back(step("model states", "weights + gradients + optimizer",
                           fmt::format("{} + {} + {}", bytes_str(mem.weights_bytes), bytes_str(mem.gradients_bytes),
                                       bytes_str(mem.optimizer_bytes)),
                           total / kGB, "GB",
                           "the 16Ψ rule of thumb counts 16-bit gradients; stages 1/2/3 shard optimizer / + "
                           "gradients / + weights"));
    c.answer = 3;
    return c;
}

Calc activations_calc(const ModelSpec& m, std::int64_t seq, std::int64_t micro_batch, int tp, bool sp) {
    ActivationQuery q;
    q.seq_len = seq;
    q.micro_batch = micro_batch;
    q.tp = tp;
    q.sequence_parallel = sp;
    const auto none = layer_activations(m, q);
    q.recompute = Recompute::selective;
    const auto sel = layer_activations(m, q);
    q.recompute = Recompute::full;
    const auto full = layer_activations(m, q);
    Calc c;
    c.title = fmt::format("Activations of {} (s = {}, b = {}, tp = {}{}, FlashAttention)", m.name, seq, micro_batch, tp,
                          sp ? ", SP" : "");
    c.steps.push_back(step("one layer, no recompute (memory layer_activations)",
                           "attention + scores + MLP + norms (Korthikanti et al.: s·b·h·(34 + 5·a·s/h) for GPT)",
                           fmt::format("{} + {} + {} + {}", bytes_str(none.attention), bytes_str(none.attention_scores),
                                       bytes_str(none.mlp), bytes_str(none.norms)),
                           none.total / kGB, "GB",
                           "FlashAttention never stores the s² scores, so the 5·a·s/h term drops out"));
    c.steps.push_back(step("all layers, no recompute", "L · A_layer",
                           fmt::format("{} · {}", m.layers, bytes_str(none.total)), m.layers * none.total / kGB, "GB"));
    c.steps.push_back(step("selective recompute (scores recomputed)", "L · A_selective",
                           fmt::format("{} · {}", m.layers, bytes_str(sel.total)), m.layers * sel.total / kGB, "GB"));
    c.steps.push_back(step("full recompute (layer inputs only)", "L · s·b·h·2 (+ one layer's working set in backward)",
                           fmt::format("{} · {}", m.layers, bytes_str(full.total)), m.layers * full.total / kGB, "GB",
                           "costs one extra forward: ≈ +33% compute (forward is 1/3 of forward+backward)"));
    c.answer = 1;
    return c;
}

Calc checkpointing_calc(int layers, double layer_bytes) {
    require(layers >= 1, fmt::format("--layers: {}: expected at least 1", layers));
    require(layer_bytes > 0, "--layer-bytes: expected a positive size");
    const double L = layers, k = std::max(1.0, std::round(std::sqrt(L)));
    const double mem = (std::ceil(L / k) + k) * layer_bytes;
    Calc c;
    c.title = "Activation checkpointing with √L checkpoints (Chen et al. 2016)";
    c.given = {fmt::format("L = {} layers, A = {} of activations per layer", layers, bytes_str(layer_bytes))};
    c.steps.push_back(step("without checkpointing", "M = L·A", fmt::format("{} · {}", layers, bytes_str(layer_bytes)),
                           L * layer_bytes / kGB, "GB"));
    c.steps.push_back(step("checkpoints", "k = round(√L)", fmt::format("round(√{})", layers), k, "checkpoints"));
    c.steps.push_back(step("peak with k checkpoints",
                           "M = (⌈L/k⌉ + k)·A  (the stored boundaries + one segment rebuilt)",
                           fmt::format("({} + {}) · {}", num(std::ceil(L / k)), num(k), bytes_str(layer_bytes)),
                           mem / kGB, "GB", "memory O(√L) instead of O(L)"));
    c.steps.push_back(step("recompute cost", "one extra forward: +1/3 of forward+backward", "1 / 3", 100.0 / 3.0, "%",
                           "the O(L√L) of textbooks is for chains without stored segments; with √L checkpoints each "
                           "layer is recomputed once"));
    c.answer = 2;
    return c;
}

// Serving memory of `batch` sequences of `context` tokens on one GPU (no parallelism): what the KV and
// decode calcs read, through the simulator's own inference_memory.
static InferenceMemory one_gpu_serving_memory(const ModelSpec& m, const AcceleratorSpec& gpu, std::int64_t batch,
                                              std::int64_t context, Precision weights, Precision kv) {
    SystemSpec sys;
    sys.gpu = gpu;
    InferenceConfig in;
    in.batch = batch;
    in.input_len = context;
    in.output_len = 0;
    in.weight_precision = weights;
    in.kv_precision = kv;
    return inference_memory(m, sys, ParallelConfig{}, in);
}

Calc kv_cache_calc(const ModelSpec& m, const AcceleratorSpec& gpu, std::int64_t context, std::int64_t batch,
                   Precision kv, Precision weights) {
    require(context >= 1 && batch >= 1, "--context/--batch: expected positive values");
    const auto mem = one_gpu_serving_memory(m, gpu, batch, context, weights, kv);
    Calc c;
    c.title = fmt::format("KV cache of {} ({} KV) on one {}", m.name, to_string(kv), gpu.display_name);
    // The KV cache per token, as the attention kind counts it (cost_models/layer/impl).
    const AttentionText at = attention_kind(m).text(m, precision_bytes(kv), kNumberText);
    c.given = {fmt::format("{}, context {} tokens, batch {}", at.cache_given, context, batch)};
    c.steps.push_back(step(at.cache.label, at.cache.symbolic, at.cache.substituted, mem.kv_bytes_per_token / 1e3, "KB",
                           at.cache.note));
    c.steps.push_back(
        step("for the batch", "per token · context · batch",
             fmt::format("{} · {} · {}", bytes_str(mem.kv_bytes_per_token), context, batch), mem.kv_cache_bytes / kGB,
             "GB", kv == Precision::int8 || kv == Precision::fp8 ? "8-bit KV halves the cache (and its reads)" : ""));
    c.steps.push_back(
        step("largest batch that fits", "⌊(HBM − weights − reserve) / (context · per token + prefill working set)⌋",
             fmt::format("({} − {} − 1 GiB) / …", bytes_str(gpu.hbm_capacity_bytes), bytes_str(mem.weights_bytes)),
             static_cast<double>(mem.max_batch), "sequences"));
    c.answer = 1;
    return c;
}

Calc decode_bound_calc(const ModelSpec& m, const AcceleratorSpec& gpu, std::int64_t batch, std::int64_t context,
                       Precision weights) {
    require(batch >= 1 && context >= 0, "--batch/--context: expected batch >= 1, context >= 0");
    const auto mem = one_gpu_serving_memory(m, gpu, batch, context, weights, Precision::bf16);
    const double bw = gpu.hbm_GBps * kGB;
    // A MoE decode step reads only the experts its tokens route to: of E experts, B tokens choosing k each
    // touch E·(1 − (1 − k/E)^B) on average (experts_touched; uniform routing); the rest of the weights every step.
    double weights_read = mem.weights_bytes;
    Calc c;
    if (m.moe.enabled()) {
        const auto pc = count_parameters(m);
        const double per_expert = pc.expert_params_per_layer / m.moe.experts;
        const double touched = experts_touched(m.moe.experts, m.moe.top_k, static_cast<double>(batch));
        const double unread = m.moe_layers() * per_expert * (m.moe.experts - touched);
        weights_read = mem.weights_bytes * (1.0 - unread / pc.total);
        c.steps.push_back(
            step("experts read per MoE layer", "E · (1 − (1 − k/E)^B)",
                 fmt::format("{} · (1 − (1 − {}/{})^{})", m.moe.experts, m.moe.top_k, m.moe.experts, batch), touched,
                 "experts",
                 "only routed experts' weights are read; uniform routing (real routers are skewed and "
                 "touch fewer)"));
    }
    const double step_bytes = weights_read + mem.kv_cache_bytes;
    const double steps_per_s = bw / step_bytes;
    const double bound = steps_per_s * static_cast<double>(batch);
    c.title =
        fmt::format("Decode throughput bound, {} on one {} ({} weights)", m.name, gpu.display_name, to_string(weights));
    c.given = {fmt::format("batch {}, {} tokens of context each, HBM {} GB/s", batch, context, num(gpu.hbm_GBps))};
    c.steps.push_back(step(
        "bytes read per decode step",
        m.moe.enabled() ? "weights read (shared + experts touched) + batch's KV cache" : "weights + batch's KV cache",
        fmt::format("{} + {}", bytes_str(weights_read), bytes_str(mem.kv_cache_bytes)), step_bytes / kGB, "GB"));
    c.steps.push_back(step("per-sequence speed bound", "tokens/s ≤ BW / bytes per step",
                           fmt::format("{} GB/s / {}", num(gpu.hbm_GBps), bytes_str(step_bytes)), steps_per_s,
                           "tokens/s", "kernels reach ~80-90% of HBM bandwidth; llmsim uses the GPU's hbm_efficiency"));
    c.steps.push_back(step("throughput bound of the batch", "batch · BW / bytes per step",
                           fmt::format("{} · {}", batch, num(steps_per_s)), bound, "tokens/s",
                           "batching amortises the weight reads until the KV reads or the FLOPs dominate"));
    c.answer = c.steps.size() - (batch > 1 ? 1 : 2);
    return c;
}

Calc littles_law_calc(double requests_per_s, double latency_s, double kv_bytes_per_seq) {
    require(requests_per_s > 0 && latency_s > 0, "--rate/--latency: expected positive values");
    const double inflight = requests_per_s * latency_s;
    Calc c;
    c.title = "Continuous batching and Little's law";
    c.given = {fmt::format("λ = {} requests/s, W = {} in the system, {} of KV cache per sequence", num(requests_per_s),
                           seconds_str(latency_s), bytes_str(kv_bytes_per_seq))};
    c.steps.push_back(step("sequences in flight", "L = λ·W",
                           fmt::format("{} · {}", num(requests_per_s), num(latency_s)), inflight, "sequences",
                           "continuous batching admits a request as soon as one finishes, so the batch tracks L"));
    if (kv_bytes_per_seq > 0)
        c.steps.push_back(step("KV cache they hold", "L · KV per sequence",
                               fmt::format("{} · {}", num(inflight), bytes_str(kv_bytes_per_seq)),
                               inflight * kv_bytes_per_seq / kGB, "GB"));
    c.answer = 0;
    return c;
}

Calc speculative_calc(double alpha, int k, double draft_cost_ratio) {
    require(alpha >= 0 && alpha < 1, fmt::format("--alpha: {}: expected an acceptance rate in [0, 1)", alpha));
    require(k >= 1, fmt::format("--k: {}: expected at least 1 draft token", k));
    require(draft_cost_ratio >= 0, fmt::format("--draft-cost: {}: expected >= 0", draft_cost_ratio));
    const double e = (1 - std::pow(alpha, k + 1)) / (1 - alpha);
    const double speed = e / (k * draft_cost_ratio + 1);
    Calc c;
    c.title = "Speculative decoding (Leviathan et al. 2023; Chen et al. 2023)";
    c.given = {fmt::format("acceptance α = {}, k = {} draft tokens, draft step costs c = {} of a target step",
                           num(alpha), k, num(draft_cost_ratio))};
    c.steps.push_back(step("expected tokens per target pass", "E = (1 − α^(k+1)) / (1 − α)",
                           fmt::format("(1 − {}^{}) / (1 − {})", num(alpha), k + 1, num(alpha)), e, "tokens"));
    c.steps.push_back(step("speedup", "S = E / (k·c + 1)",
                           fmt::format("{} / ({}·{} + 1)", num(e), k, num(draft_cost_ratio)), speed, "x",
                           "the target's verification pass costs about one decode step only while decode is "
                           "memory-bound (small batches)"));
    c.answer = 1;
    return c;
}

Calc lora_calc(const ModelSpec& m, int rank, bool qlora) {
    require(rank >= 1, fmt::format("--rank: {}: expected at least 1", rank));
    const auto pc = count_parameters(m);
    FinetuneConfig ft;
    ft.method = qlora ? FinetuneConfig::Method::qlora : FinetuneConfig::Method::lora;
    ft.rank = rank;
    const double adapters = m.layers * lora_params_per_layer(m, ft);
    const double linear = pc.total - pc.embedding - pc.position - pc.output;
    const double wpp = qlora ? weight_bytes_per_param(Precision::nf4, 64) : 2.0;
    const double base = linear * wpp + (pc.embedding + pc.position + pc.output) * 2.0;
    const double adapter_bytes = adapters * (2.0 + 2.0 + 12.0);
    Calc c;
    c.title = fmt::format("{} memory of {} (rank {}, targets q, k, v, o)", qlora ? "QLoRA" : "LoRA", m.name, rank);
    c.steps.push_back(step("adapter parameters", "L · r · Σ(d_in + d_out) over targets",
                           fmt::format("{} · {} · …", m.layers, rank), adapters / 1e6, "M"));
    c.steps.push_back(step(qlora ? "frozen base in NF4 (double-quantised scales: 4.127 bits)" : "frozen base in bf16",
                           qlora ? "linear params · 0.516 B + embeddings · 2 B" : "2 B · Ψ",
                           fmt::format("{} · {} B + {} · 2 B", count_str(linear), num(wpp),
                                       count_str(pc.embedding + pc.position + pc.output)),
                           base / kGB, "GB"));
    c.steps.push_back(step("adapters with gradients and Adam", "16 B · adapters",
                           fmt::format("16 · {}", count_str(adapters)), adapter_bytes / kGB, "GB"));
    c.steps.push_back(step(
        "model states", "base + adapters", fmt::format("{} + {}", bytes_str(base), bytes_str(adapter_bytes)),
        (base + adapter_bytes) / kGB, "GB", "activations are still full-size: LoRA shrinks states, not activations"));
    c.answer = 3;
    return c;
}

Calc rlhf_calc(const ModelSpec& m) {
    const auto pc = count_parameters(m);
    const auto ms = model_states_calc(m, 1, 0);
    const double trained = ms.result().value * kGB;   // weights + grads + optimizer of one model
    const double frozen = 2.0 * pc.total;
    Calc c;
    c.title = fmt::format("RLHF (PPO) model states, {} for all four models", m.name);
    c.steps.push_back(
        step("actor (trained)", "16-18 B · Ψ", fmt::format("{} params", count_str(pc.total)), trained / kGB, "GB"));
    c.steps.push_back(
        step("critic (trained)", "16-18 B · Ψ", fmt::format("{} params", count_str(pc.total)), trained / kGB, "GB"));
    c.steps.push_back(step("reference + reward (frozen, bf16)", "2 · 2 B · Ψ",
                           fmt::format("2 · 2 · {}", count_str(pc.total)), 2 * frozen / kGB, "GB"));
    c.steps.push_back(
        step("total", "2 · trained + 2 · frozen", fmt::format("2 · {} + 2 · {}", bytes_str(trained), bytes_str(frozen)),
             (2 * trained + 2 * frozen) / kGB, "GB",
             "a smaller critic/reward model, LoRA actors or ZeRO-3 across the four are the usual levers"));
    c.answer = 3;
    return c;
}

Calc chinchilla_calc(double params) {
    require(params > 0 && std::isfinite(params), "--params: expected a positive count");
    const auto h = optimal_for_params(ScalingFit::hoffmann, params);
    const auto e = optimal_for_params(ScalingFit::epoch, params);
    Calc c;
    c.title = fmt::format("Compute-optimal tokens for N = {} (Chinchilla)", count_str(params));
    c.steps.push_back(
        step("rule of thumb", "D = 20·N", fmt::format("20 · {}", count_str(params)), 20 * params / 1e9, "B tokens"));
    c.steps.push_back(step("compute of that run", "C = 6·N·D",
                           fmt::format("6 · {} · {}", count_str(params), count_str(20 * params)),
                           training_compute(params, 20 * params), "FLOP"));
    c.steps.push_back(step("Approach 3 fit (Hoffmann et al.)", "D_opt from L = E + A/N^α + B/D^β", "", h.tokens / 1e9,
                           "B tokens", fmt::format("{} tokens/param", num(h.tokens_per_param()))));
    c.steps.push_back(step("Epoch AI replication", "same form, refitted constants", "", e.tokens / 1e9, "B tokens",
                           fmt::format("{} tokens/param; Llama 3 trained 8B on 15T tokens (~1,900/param) on purpose: "
                                       "inference cost favours smaller, longer-trained models",
                                       num(e.tokens_per_param()))));
    c.answer = 0;
    return c;
}

}   // namespace llmsim::drills
