// Chrome trace event format writer and the text Gantt of a simulated step. Names are built here
// only, never in the simulation loop.
#include <algorithm>
#include <cmath>
#include <ostream>

#include <fmt/format.h>

#include "sim/serving.hpp"
#include "sim/step_sim.hpp"

namespace llmsim::sim {

namespace {

constexpr int kInlineZero3Tid = kStreamsPerStage;   // an extra track: ZeRO-3 gathers inside passes

const char* stream_name(int k) {
    switch (k) {
        case kCompute: return "compute";
        case kTpStream: return "tp comm (inside passes)";
        case kCpEpStream: return "cp/ep comm (inside passes)";
        case kPpFwd: return "pp send activations";
        case kPpBwd: return "pp send gradients";
        case kDpStream: return "dp comm";
        default: return "zero-3 gather (inside passes)";
    }
}

void task_name(fmt::memory_buffer& b, const Task& t, int v, bool rs) {
    const auto& g = t.tag;
    auto chunk = [&] {
        if (v > 1) fmt::format_to(std::back_inserter(b), " c{}", g.index);
    };
    switch (static_cast<TaskKind>(g.kind)) {
        case TaskKind::F:
            fmt::format_to(std::back_inserter(b), "F mb{}", g.mb);
            chunk();
            break;
        case TaskKind::B:
            fmt::format_to(std::back_inserter(b), "B mb{}", g.mb);
            chunk();
            break;
        case TaskKind::W:
            fmt::format_to(std::back_inserter(b), "W mb{}", g.mb);
            chunk();
            break;
        case TaskKind::SendAct:
            fmt::format_to(std::back_inserter(b), "send act mb{}", g.mb);
            chunk();
            break;
        case TaskKind::SendGrad:
            fmt::format_to(std::back_inserter(b), "send grad mb{}", g.mb);
            chunk();
            break;
        case TaskKind::GradBucket:
            fmt::format_to(std::back_inserter(b), "{} grads bucket {}", rs ? "RS" : "AR", g.index);
            break;
        case TaskKind::Barrier: fmt::format_to(std::back_inserter(b), "grad-norm barrier"); break;
        case TaskKind::Optimizer: fmt::format_to(std::back_inserter(b), "optimizer"); break;
        case TaskKind::ParamGather: fmt::format_to(std::back_inserter(b), "AG params"); break;
    }
    if ((g.kind == static_cast<std::uint8_t>(TaskKind::B) || g.kind == static_cast<std::uint8_t>(TaskKind::W)) &&
        g.piece > 0)
        fmt::format_to(std::back_inserter(b), " part {}", g.piece + 1);
}

}   // namespace

void StepSimulator::write_trace(std::ostream& os) const {
    fmt::memory_buffer b;
    auto out = std::back_inserter(b);
    const double us = 1e6;
    bool first = true;
    // Streamed: the text goes to `os` a MiB at a time (a 2^21-pass step is ~1 GB of trace; it was built
    // whole in memory first).
    auto sep = [&] {
        if (b.size() >= (std::size_t{1} << 20)) {
            os.write(b.data(), static_cast<std::streamsize>(b.size()));
            b.clear();
        }
        if (!first) b.push_back(',');
        b.push_back('\n');
        first = false;
    };
    fmt::format_to(out,
                   "{{\"displayTimeUnit\": \"ms\", \"otherData\": {{\"schedule\": \"{}\", \"step_time_s\": {}, "
                   "\"pipeline_time_s\": {}, \"bubble_fraction\": {}, \"stages\": {}, \"microbatches\": {}, "
                   "\"chunks\": {}}},\n\"traceEvents\": [",
                   res_.schedule->name, res_.step_time_s, res_.pipeline_time_s, res_.bubble_fraction, p_, m_, v_);
    // Track names.
    for (int s = 0; s < p_; ++s) {
        sep();
        fmt::format_to(out, R"({{"ph": "M", "name": "process_name", "pid": {}, "args": {{"name": "stage {}"}}}})", s,
                       s);
        sep();
        fmt::format_to(out, R"({{"ph": "M", "name": "process_sort_index", "pid": {}, "args": {{"sort_index": {}}}}})",
                       s, s);
        for (int k = 0; k <= kInlineZero3Tid; ++k) {
            sep();
            fmt::format_to(out,
                           R"({{"ph": "M", "name": "thread_name", "pid": {}, "tid": {}, "args": {{"name": "{}"}}}})", s,
                           k, stream_name(k));
        }
    }
    // Tasks.
    fmt::memory_buffer name;
    for (const Task& t : eng_.tasks()) {
        if (t.tag.kind == static_cast<std::uint8_t>(TaskKind::Barrier)) continue;
        name.clear();
        task_name(name, t, v_, reduce_scatter_);
        const int stage = t.tag.stage;
        const int tid = t.stream - stage * kStreamsPerStage;
        sep();
        // Rounded to the nanosecond at both ends, so rounding never makes neighbours overlap.
        const double ts = std::round(t.start * us * 1e3) / 1e3, te = std::round(t.end * us * 1e3) / 1e3;
        fmt::format_to(out,
                       R"({{"ph": "X", "cat": "task", "name": "{}", "pid": {}, "tid": {}, "ts": {:.3f}, "dur": {:.3f})",
                       std::string_view(name.data(), name.size()), stage, tid, ts, te - ts);
        if (t.tag.mb >= 0) fmt::format_to(out, R"(, "args": {{"mb": {}, "chunk": {}}})", t.tag.mb, t.tag.index);
        b.push_back('}');
        // Exposed TP / CP-EP / ZeRO-3 communication happens inside F and B passes (blocking, layer by
        // layer): drawn as a slice over the pass on its stream's track, with the exposed time.
        const auto k = static_cast<TaskKind>(t.tag.kind);
        if ((k == TaskKind::F || k == TaskKind::B) && t.tag.piece == 0) {
            const std::size_t su = static_cast<std::size_t>(stage);
            const double shares[3] = {tp_share_[su], cpep_share_[su], zero3_share_[su]};
            const int tids[3] = {kTpStream, kCpEpStream, kInlineZero3Tid};
            const char* what[3] = {"TP", "CP/EP", "ZeRO-3 AG"};
            for (int x = 0; x < 3; ++x) {
                if (shares[x] <= 0) continue;
                sep();
                fmt::format_to(
                    out,
                    R"({{"ph": "X", "cat": "inline", "name": "{} {} mb{}", "pid": {}, "tid": {}, "ts": {:.3f}, "dur": {:.3f}, "args": {{"exposed_per_microbatch_fwd_plus_bwd_us": {:.3f}}}}})",
                    what[x], k == TaskKind::F ? "F" : "B", t.tag.mb, stage, tids[x], t.start * us, t.dur_s * us,
                    shares[x] * us);
            }
        }
    }
    // Activation memory counters per stage.
    for (int s = 0; s < p_; ++s) {
        const std::size_t su = static_cast<std::size_t>(s);
        double live = 0;
        sep();
        fmt::format_to(out, R"({{"ph": "C", "name": "activations", "pid": {}, "ts": 0, "args": {{"GiB": 0}}}})", s);
        for (std::int32_t i = stage_ops_[su]; i < stage_ops_[su + 1]; ++i) {
            const auto& op = ops_[static_cast<std::size_t>(i)];
            double ts;
            if (op.kind == PassKind::F) {
                live += chunk_bytes_[su];
                ts = eng_.task(op_first_[static_cast<std::size_t>(i)]).start;
            } else if (op.kind == PassKind::B) {
                live -= chunk_bytes_[su];
                ts = eng_.task(op_last_[static_cast<std::size_t>(i)]).end;
            } else {
                continue;
            }
            sep();
            fmt::format_to(
                out, R"({{"ph": "C", "name": "activations", "pid": {}, "ts": {:.3f}, "args": {{"GiB": {:.4f}}}}})", s,
                ts * us, std::max(0.0, live) / kGiB);
        }
    }
    fmt::format_to(out, "\n]}}\n");
    os.write(b.data(), static_cast<std::streamsize>(b.size()));
}

std::string StepSimulator::timeline(int columns) const {
    const int label = static_cast<int>(fmt::format("stage {}", p_ - 1).size());
    const int width = std::max(20, columns - label - 3);   // "label |row|"
    const double span = res_.step_time_s > 0 ? res_.step_time_s : eng_.makespan();
    if (span <= 0) return "";
    // Per stage: compute-stream tasks are in time order in the engine (ids per stream increase).
    std::string out =
        fmt::format("{} schedule, {} stages, {} micro-batches{}; one column = {:.3g} ms\n", res_.schedule->name, p_, m_,
                    v_ > 1 ? fmt::format(", {} chunks", v_) : "", span / width * 1e3);
    const auto& tasks = eng_.tasks();
    std::vector<std::vector<std::int32_t>> by_stream(static_cast<std::size_t>(eng_.streams()));
    for (std::int32_t id = 0; id < static_cast<std::int32_t>(tasks.size()); ++id)
        by_stream[static_cast<std::size_t>(tasks[static_cast<std::size_t>(id)].stream)].push_back(id);
    auto row = [&](const std::vector<std::int32_t>& ids, auto glyph) {
        std::string r(static_cast<std::size_t>(width), '.');
        std::size_t k = 0;
        for (int col = 0; col < width; ++col) {
            const double t = (col + 0.5) * span / width;
            while (k < ids.size() && tasks[static_cast<std::size_t>(ids[k])].end <= t) ++k;
            if (k < ids.size() && tasks[static_cast<std::size_t>(ids[k])].start <= t)
                r[static_cast<std::size_t>(col)] = glyph(tasks[static_cast<std::size_t>(ids[k])]);
        }
        return r;
    };
    auto compute_glyph = [&](const Task& t) {
        const bool odd = v_ > 1 && (t.tag.index % 2) == 1;
        switch (static_cast<TaskKind>(t.tag.kind)) {
            case TaskKind::F: return odd ? 'f' : 'F';
            case TaskKind::B: return odd ? 'b' : 'B';
            case TaskKind::W: return 'W';
            case TaskKind::Optimizer: return 'O';
            default: return '?';
        }
    };
    auto dp_glyph = [](const Task& t) {
        return static_cast<TaskKind>(t.tag.kind) == TaskKind::ParamGather ? 'g' : 'r';
    };
    for (int s = 0; s < p_; ++s) {
        out += fmt::format("{:>{}} |{}|\n", fmt::format("stage {}", s), label,
                           row(by_stream[static_cast<std::size_t>(s) * kStreamsPerStage + kCompute], compute_glyph));
        const auto& dp = by_stream[static_cast<std::size_t>(s) * kStreamsPerStage + kDpStream];
        if (!dp.empty()) out += fmt::format("{:>{}} |{}|\n", "dp", label, row(dp, dp_glyph));
    }
    out +=
        "F forward, B backward (input+weight gradient, or input gradient when W is shown), W weight gradient, "
        "O optimizer";
    if (v_ > 1) out += ", f/b odd model chunks";
    out += "; dp row: r gradient reduction, g parameter all-gather; . idle\n";
    return out;
}

}   // namespace llmsim::sim

namespace llmsim::sim {

// Serving: one process per replica, one slice per iteration (prefill tokens and decode sequences).
void write_serving_trace(std::ostream& os, const ServingResult& r) {
    fmt::memory_buffer b;
    auto out = std::back_inserter(b);
    fmt::format_to(out,
                   "{{\"displayTimeUnit\": \"ms\", \"otherData\": {{\"requests\": {}, \"replicas\": {}, "
                   "\"iterations\": {}, \"makespan_s\": {}}},\n\"traceEvents\": [",
                   r.requests, r.replicas, r.iterations, r.makespan_s);
    bool first = true;
    // Streamed: the text goes to `os` a MiB at a time (a 2^21-pass step is ~1 GB of trace; it was built
    // whole in memory first).
    auto sep = [&] {
        if (b.size() >= (std::size_t{1} << 20)) {
            os.write(b.data(), static_cast<std::streamsize>(b.size()));
            b.clear();
        }
        if (!first) b.push_back(',');
        b.push_back('\n');
        first = false;
    };
    for (std::int64_t p = 0; p < r.replicas; ++p) {
        sep();
        fmt::format_to(out, R"({{"ph": "M", "name": "process_name", "pid": {}, "args": {{"name": "replica {}"}}}})", p,
                       p);
    }
    for (const auto& it : r.timeline) {
        sep();
        const char* kind = it.prefill_tokens > 0 ? (it.decode_seqs > 0 ? "mixed" : "prefill") : "decode";
        fmt::format_to(out,
                       R"({{"ph": "X", "pid": {}, "tid": 0, "name": "{} p{} d{}", "ts": {:.3f}, "dur": {:.3f}, )"
                       R"("args": {{"prefill_tokens": {}, "decode_seqs": {}, "bound": "{}"}}}})",
                       it.replica, kind, it.prefill_tokens, it.decode_seqs, it.start_s * 1e6,
                       (it.end_s - it.start_s) * 1e6, it.prefill_tokens, it.decode_seqs,
                       it.compute_bound ? "compute" : "memory");
    }
    fmt::format_to(out, "\n]}}\n");
    os.write(b.data(), static_cast<std::streamsize>(b.size()));
}

}   // namespace llmsim::sim
