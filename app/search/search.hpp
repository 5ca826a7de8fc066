// The layout search (docs/search.md): enumerate every valid parallel layout of a model on a GPU
// budget, reject by cheap rules first (check_layout's divisibility rules, then memory per GPU),
// rank what is left by the closed-form step time (app/search/fast_eval.hpp), and confirm the best
// few on the discrete-event simulator. Every rejected layout is counted under one reason.
// Multi-threaded; the result does not depend on the thread count (a total order breaks ties).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/search/fast_eval.hpp"
#include "hardware_db/errors.hpp"

namespace llmsim::search {

enum class Objective {
    time,      // seconds per token (= step time at a fixed global batch; = max tokens/s)
    cost,      // GPU-seconds per token (× price per GPU-hour = dollars); fewer GPUs win ties
    per_gpu,   // tokens/s per GPU (ranks exactly as cost)
};
const char* to_string(Objective o);
bool objective_from_string(const std::string& s, Objective& out);

// What may vary, and the limits. Empty sets mean "anything the rules allow".
struct SearchSpace {
    std::vector<int> gpu_counts;   // fixed counts to search (from --gpus), or ...
    int max_gpus = 0;              // ... every count 2^k and 3·2^k up to this (when > 0)
    int min_gpus = 1;
    std::vector<std::int64_t> global_batches;   // at least one
    std::vector<int> tp, pp, cp, ep, vp, dp, zero;
    std::vector<std::int64_t> micro_batch;
    std::vector<Recompute> recompute{Recompute::none, Recompute::selective, Recompute::full};
    std::vector<Offload> offload{Offload::none, Offload::optimizer};
    // Pipeline schedules to try (pointers into the registry); empty: those the registry marks searched.
    std::vector<const ScheduleDef*> schedules;
    std::optional<bool> sequence_parallel;   // unset: both when tp > 1
    // Overlap policies (docs/search.md, "Overlap policies"); unset: searched. tp_comm_overlap and
    // overlap_param_gather never cost time in the model, so unset they are on (tp_comm_overlap where
    // it acts: tp > 1 with SP); overlap_grad_reduce can, so unset it is priced on and off where it can
    // differ (pp > 1 with data parallelism; each layout keeps the faster) and is on elsewhere.
    std::optional<bool> tp_comm_overlap, overlap_grad_reduce, overlap_param_gather;
    int max_tp = 0;               // 0: no limit beyond the scale-up domain
    int min_pp = 0, max_pp = 0;   // 0: no limit
    bool allow_cross_node_tp = false;
    // Activation offload (Megatron-Core cpu_offloading_num_layers) tried on pp-1 layouts too large without
    // recompute: the fewest offloaded layers that fit (docs/search.md). Needs a host link. Off unless asked:
    // the host link is modelled per GPU, not as the PCIe uplinks GPUs share on HGX/DGX boards.
    bool activation_offload = false;
    // Memory kept free on each GPU: a fraction of its capacity, and bytes.
    double memory_headroom_fraction = 0;
    double memory_headroom_bytes = 0;
};

struct SearchOptions {
    Objective objective = Objective::time;
    int top_k = 10;
    int threads = 0;   // 0: std::thread::hardware_concurrency()
    // Called about ten times a second from the calling thread with the fraction of layouts done.
    std::function<void(double fraction)> progress;
    double price_per_gpu_hour = 0;   // for cost reporting
    // Re-rank the best `confirm` layouts with this step-time function (the simulator); 0: none.
    int confirm = 0;
    std::function<double(const Scenario&)> confirm_step_time;
    std::size_t pareto_limit = 64;   // largest Pareto front returned
    // Tests: called for every layout that reaches the memory check, with its verdict (must be
    // thread-safe when threads > 1).
    std::function<void(const Candidate&, bool fits)> on_leaf;
};

struct SearchEntry {
    Candidate c;
    FastTime time;
    FastMemory memory;
    double objective = 0;               // smaller is better
    double confirmed_step_time_s = 0;   // simulator step time (0 when not confirmed)
    // The closed form's step time; once confirmed, `time` holds the simulator's step and the throughput and
    // MFU it implies (what estimate reports for the same layout), and this the closed form's (0: not confirmed).
    double closed_form_step_time_s = 0;
};

struct SearchResult {
    std::vector<SearchEntry> top;      // best first
    std::vector<SearchEntry> pareto;   // (time per token, memory per GPU, GPUs), by time
    std::int64_t evaluated = 0;        // layouts priced by the closed form
    std::int64_t rejected_total = 0;
    std::map<std::string, std::int64_t> rejected;   // reason -> layouts
    std::int64_t considered() const { return evaluated + rejected_total; }
    double wall_s = 0;
    double eval_wall_s = 0;   // time spent in the parallel enumeration
    int threads = 1;
    std::vector<int> gpu_counts;   // the counts searched
    bool confirmed = false;
    bool overlap_searched = false;   // some overlap policy was not fixed by the request
    bool rlhf = false;               // RLHF: step_time_s is one PPO iteration (estimate_rlhf), not confirmed
};

// Confirms `e` on `step_time` (the simulator): its time becomes the simulated step and the throughput and
// MFU it implies, its objective scales with it, and the closed form's step is kept beside it. One rule for
// the search's re-ranking and the plan's layout.
void confirm_entry(const Scenario& base, SearchEntry& e, const std::function<double(const Scenario&)>& step_time);

// The memory limit the search applies to a GPU of `capacity_bytes`.
double memory_limit(double capacity_bytes, double headroom_fraction, double headroom_bytes);

// The GPU counts searched for `max_gpus` (2^k and 3·2^k, at least `min_gpus`).
std::vector<int> gpu_counts_up_to(int max_gpus, int min_gpus = 1);

// A space past limits::kSearchLayouts, refused before any layout is evaluated: a ConfigError in `search`'s
// words (its flags and keys), its numbers kept for callers that search on the user's behalf (plan, scaling)
// to say it in theirs.
class SearchWorkLimit : public ConfigError {
public:
    SearchWorkLimit(const std::string& problem, std::int64_t layouts_, std::int64_t limit_)
        : ConfigError(problem), layouts(layouts_), limit(limit_) {}
    std::int64_t layouts, limit;
};

// Runs the search over the base scenario's model, system and training settings (seq_len,
// precision, flash attention, optimizer). Throws ConfigError for an empty or invalid space
// (SearchWorkLimit past the layout work limit).
SearchResult run_search(const Scenario& base, const SearchSpace& space, const SearchOptions& options);

// The objective value of an evaluated layout (smaller is better).
double objective_value(Objective o, const Candidate& c, const FastTime& t, double tokens_per_step);

}   // namespace llmsim::search
