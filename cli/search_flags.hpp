// Flags shared by llmsim search, plan and scaling: the scenario (--scenario and/or --model,
// --system, --seq-len, ...), the GPU budget, and the search constraints. They are written into the
// scenario JSON (its "parallel", "training" and "search" blocks) and read by the same strict reader
// as a file, so flags and files fail alike.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "report/search_request.hpp"

namespace llmsim::cli {

struct SearchFlags {
    std::string scenario, model, system, precision;
    std::optional<int> gpus, max_gpus, min_gpus, max_tp, min_pp, max_pp, threads, top_k, confirm;
    std::optional<std::int64_t> seq_len, global_batch;
    std::string global_batch_range, objective;
    std::optional<double> memory_headroom, price;
    std::string memory_headroom_bytes;   // a size with an optional unit ("4GiB")
    bool allow_cross_node_tp = false;
    std::optional<bool> activation_offload;
    std::string tp, pp, cp, ep, vp, dp, zero, micro_batch, recompute, offload, schedules, sp;
    std::string tp_comm_overlap, overlap_grad_reduce, overlap_param_gather, framework, torch_compile, grad_precision;
    bool json = false;
};

// `with_gpus`: add --gpus/--max-gpus (scaling has its own --gpus list).
void add_search_flags(CLI::App* cmd, SearchFlags& f, bool with_gpus);
search::SearchRequest resolve_search_request(const SearchFlags& f);

}   // namespace llmsim::cli
