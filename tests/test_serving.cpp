// Serving: the iteration cost (KV bytes, decode memory-bound on the roofline with split-K) and the
// continuous-batching simulator (queueing laws, scheduling effects, determinism, speculation).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>

#include <fmt/format.h>

#include "cost_models/inference.hpp"
#include "cost_models/layer_bytes.hpp"
#include "cost_models/model_params.hpp"
#include "cost_models/roofline.hpp"
#include "hardware_db/engines.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/scenario.hpp"
#include "sim/length_dist.hpp"
#include "sim/router.hpp"
#include "sim/scheduler.hpp"
#include "sim/serving.hpp"

using namespace llmsim;

namespace {

Scenario serving(const std::string& model, int gpus, int tp, Json inference) {
    Json j = {{"model", model},
              {"system", "dgx-h100"},
              {"gpus", gpus},
              {"parallel", {{"tp", tp}, {"pp", 1}}},
              {"inference", std::move(inference)}};
    return parse_scenario(j);
}

// A stream of mixed lengths (short chats and long documents) for the scheduling tests.
Json mixed(Json extra = Json::object()) {
    Json in = {{"batching", "continuous"},
               {"input_len", {{"mean", 1000}, {"dist", "lognormal"}, {"stdev", 1500}, {"min", 16}, {"max", 8000}}},
               {"output_len", {{"mean", 200}, {"dist", "lognormal"}, {"stdev", 200}, {"min", 2}, {"max", 2000}}},
               {"requests", 1500},
               {"seed", 7}};
    for (auto it = extra.begin(); it != extra.end(); ++it) in[it.key()] = *it;
    return in;
}

}   // namespace

TEST_CASE("KV bytes per token by hand: MHA, GQA and MLA", "[serving][kv]") {
    // Llama-2-7B, MHA: 32 layers x 32 KV heads x 128 dims x (K, V) x 2 bytes = 524,288 bytes.
    const auto mha = serving("llama-2-7b", 1, 1, {{"kv_precision", "bf16"}});
    CHECK(kv_pool(mha.serving_job()).bytes_per_token == Approx(32.0 * 32 * 128 * 2 * 2));
    // Llama-3-8B, GQA with 8 KV heads: 32 x 8 x 128 x 2 x 2 = 131,072 bytes; fp8 halves it; TP 2
    // splits the KV heads.
    const auto gqa = serving("llama-3-8b", 1, 1, {{"kv_precision", "bf16"}});
    CHECK(kv_pool(gqa.serving_job()).bytes_per_token == Approx(32.0 * 8 * 128 * 2 * 2));
    const auto gqa8 = serving("llama-3-8b", 2, 2, {{"kv_precision", "fp8"}});
    CHECK(kv_pool(gqa8.serving_job()).bytes_per_token == Approx(32.0 * 4 * 128 * 2 * 1));
    // DeepSeek-V3, MLA: 61 layers x (512 latent + 64 RoPE key) x 1 byte (fp8), whole on every rank of
    // tp 8 — not 2 x 128 heads x 192 per layer.
    const auto mla = serving("deepseek-v3", 8, 8, {{"kv_precision", "fp8"}, {"weight_precision", "fp8"}});
    CHECK(kv_pool(mla.serving_job()).bytes_per_token == Approx(61.0 * 576 * 1));
    // The pool: 90% of what the weights and the 1 GiB runtime leave, in 16-token blocks.
    const auto p = kv_pool(gqa.serving_job());
    const auto m = inference_memory(gqa.model, gqa.system, gqa.parallel, gqa.inference);
    CHECK(p.pool_bytes == Approx(0.9 * (80.0 * 1e9 * 0 + m.capacity_bytes - m.weights_bytes - m.other_bytes)));
    CHECK(p.blocks == static_cast<std::int64_t>(p.pool_bytes / (16 * p.bytes_per_token)));
}

TEST_CASE("split-K: a decode GEMM keeps the SMs busy and stays memory-bound", "[serving][roofline]") {
    const auto s = serving("llama-3-8b", 1, 1, Json::object());
    const auto& a = s.system.gpu;
    // 128 tokens x (4096 -> 6144): 48 tiles of 128 columns on 132 SMs, split 2 ways along K (an integer
    // split-K within one wave: 96 CTAs; 3 ways would take two waves).
    const auto e = gemm_shape_efficiency(128, 6144, 4096, a.efficiency.gemm_tile_m, a.efficiency.gemm_tile_n,
                                         a.sm_count, a.efficiency.gemm_k_half);
    CHECK(e.tiles == 48);
    CHECK(e.split == 2.0);
    CHECK(e.occupancy == Approx(96.0 / 132));
    CHECK(e.depth == Approx(2048 / (2048 + a.efficiency.gemm_k_half)));
    // Rows sit on the MMA's N side in a power-of-two tile: 200 rows in a 256-wide tile, 100 in 128.
    CHECK(gemm_shape_efficiency(200, 6144, 4096, 128, 256, 132, 114).fill == Approx(200.0 / 256));
    CHECK(gemm_shape_efficiency(100, 6144, 4096, 128, 256, 132, 114).fill == Approx(100.0 / 128));
    CHECK(gemm_shape_efficiency(100, 6144, 4096, 128, 256, 132, 114).tile_m == 128);
    // A short reduction is not split below kGemmSplitMinK: 32 tiles x K 512 take at most 2 slices.
    CHECK(gemm_shape_efficiency(1, 4096, 512, 128, 256, 132, 114).split == 2.0);
    // Large training GEMMs keep the data-parallel tile schedule (wave quantization).
    const auto big = gemm_shape_efficiency(8192, 8192, 8192, 128, 256, 132, 114);
    CHECK(big.split == 1.0);
    CHECK(big.fill * big.occupancy == Approx(wave_efficiency(8192, 8192, 128, 256, 132)));
}

TEST_CASE("TPOT of Llama-3-8B bf16 on H100 is memory-bound to batch >= 200 and near bytes / bandwidth",
          "[serving][decode]") {
    for (int batch : {1, 32, 64, 128, 200, 256}) {
        const auto s = serving("llama-3-8b", 1, 1, {{"weight_precision", "bf16"}, {"kv_precision", "bf16"}});
        const auto job = s.serving_job();
        IterationBatch b;
        b.decode_seqs = batch;
        b.decode_kv_tokens = batch * 1024.0;
        const auto c = iteration_cost(job, b);
        INFO("batch " << batch);
        if (batch <= 200) CHECK_FALSE(c.compute_bound());
        const auto m = inference_memory(s.model, s.system, s.parallel, s.inference);
        const double kv = batch * 1024.0 * kv_pool(job).bytes_per_token;
        const auto& a = s.system.gpu;
        const double expect = (m.weights_bytes + kv) / (a.hbm_GBps * 1e9 * a.efficiency.hbm_efficiency) + c.overhead_s;
        if (batch <= 200) CHECK(c.time_s == Approx(expect).epsilon(0.10));
    }
}

TEST_CASE(
    "Llama-3-8B bf16 decode on one GPU of each added system: KV pool from the card's capacity, TPOT near "
    "bytes / bandwidth",
    "[serving][decode][hwdb]") {
    // One GPU of L40S (GDDR6 864 GB/s, 46068 MiB), L4 (300 GB/s, 23034 MiB), H20, A800, H100 NVL and GH200:
    // a decode step of 16 sequences x 1,024 tokens reads the weights once and each sequence's KV cache, so
    // TPOT = (weights + KV bytes) / (bandwidth x hbm_efficiency) + the kernels' fixed overhead (within 15%).
    for (const std::string sys : {"l40s-8x", "l4-8x", "hgx-h20", "dgx-a800", "h100-nvl-8x", "gh200"}) {
        INFO(sys);
        Json j = {{"model", "llama-3-8b"},
                  {"system", sys},
                  {"gpus", 1},
                  {"parallel", {{"tp", 1}, {"pp", 1}}},
                  {"inference", {{"weight_precision", "bf16"}, {"kv_precision", "bf16"}}}};
        const auto s = parse_scenario(j);
        const auto job = s.serving_job();
        const auto m = inference_memory(s.model, s.system, s.parallel, s.inference);
        const auto& a = s.system.gpu;
        // The KV pool: 90% of what the card's nvidia-smi capacity leaves after weights and runtime.
        CHECK(m.capacity_bytes == Approx(a.hbm_capacity_bytes));
        const auto p = kv_pool(job);
        CHECK(p.bytes_per_token == Approx(32.0 * 8 * 128 * 2 * 2));
        CHECK(p.pool_bytes == Approx(0.9 * (m.capacity_bytes - m.weights_bytes - m.other_bytes)));
        CHECK(p.pool_bytes > 16 * 1024.0 * p.bytes_per_token);
        IterationBatch b;
        b.decode_seqs = 16;
        b.decode_kv_tokens = 16 * 1024.0;
        const auto c = iteration_cost(job, b);
        CHECK_FALSE(c.compute_bound());
        const double kv = b.decode_kv_tokens * p.bytes_per_token;
        const double expect = (m.weights_bytes + kv) / (a.hbm_GBps * 1e9 * a.efficiency.hbm_efficiency) + c.overhead_s;
        CHECK(c.time_s == Approx(expect).epsilon(0.15));
    }
    // L40S at batch 1: the 16.06 GB of bf16 weights over 864 GB/s x 0.85, ~22 ms a step.
    Json j = {{"model", "llama-3-8b"},
              {"system", "l40s-8x"},
              {"gpus", 1},
              {"parallel", {{"tp", 1}, {"pp", 1}}},
              {"inference", {{"weight_precision", "bf16"}, {"kv_precision", "bf16"}}}};
    IterationBatch one;
    one.decode_seqs = 1;
    one.decode_kv_tokens = 1024;
    const double t_l40s = iteration_cost(parse_scenario(j).serving_job(), one).time_s;
    CHECK(t_l40s == Approx(16.06e9 / (864e9 * 0.85)).epsilon(0.15));
}

TEST_CASE("a chip without bf16 (V100) serves in fp16 by default, every iteration finite", "[serving][hwdb]") {
    // The V100 has fp16 tensor cores and no bf16: a scenario stating no precision computes and stores in
    // fp16 (it was refused as bf16 from flags, and priced at a 0 bf16 peak, inf, from a file stating fp16).
    Json j = {{"model", "llama-3-8b"},
              {"system", "dgx-v100"},
              {"gpus", 1},
              {"inference",
               {{"batching", "continuous"}, {"input_len", 100}, {"output_len", 100}, {"qps", 1}, {"requests", 20}}}};
    const auto s = parse_scenario(j);
    CHECK(s.inference.compute_precision == Precision::fp16);
    CHECK(s.inference.weight_precision == Precision::fp16);
    CHECK(s.inference.kv_precision == Precision::fp16);
    IterationBatch b;
    b.prefill_tokens = 100;
    b.prefill_seqs = 1;
    b.prefill_pairs = 100 * 101 / 2.0;
    b.prefill_kv_tokens = 100;
    b.decode_seqs = 4;
    b.decode_kv_tokens = 400;
    const auto c = iteration_cost(s.serving_job(), b);
    CHECK(std::isfinite(c.time_s));
    CHECK(c.time_s > 0);
    // A decode step of batch 1 reads the 16.06 GB of fp16 weights over 900 GB/s x 0.83: ~21.5 ms.
    IterationBatch one;
    one.decode_seqs = 1;
    one.decode_kv_tokens = 100;
    CHECK(iteration_cost(s.serving_job(), one).time_s == Approx(16.06e9 / (900e9 * 0.83)).epsilon(0.15));
    const auto r = sim::simulate_serving(s.serving_job());
    CHECK(std::isfinite(r.ttft_s.p99));
    CHECK(r.requests_per_s > 0);
    // Training on it too: no stated precision is fp16.
    Json t = {{"model", "gpt3-1.3b"}, {"system", "dgx-v100"}, {"gpus", 8}, {"training", {{"global_batch", 64}}}};
    CHECK(parse_scenario(t).training.precision == Precision::fp16);
}

TEST_CASE("continuous batching beats static batching on a mixed-length stream", "[serving][sim]") {
    const auto cont = serving("llama-3-8b", 1, 1, mixed({{"max_batch", 64}}));
    // The stream simulator's static batches (the reader refuses a stream's keys on a static scenario, whose
    // estimate is the closed form; the simulator's static policy is this comparison's baseline).
    auto stat = serving("llama-3-8b", 1, 1, mixed({{"max_batch", 64}}));
    stat.inference.batching = Batching::static_batches;
    stat.inference.batch = 64;
    stat.inference.max_batch = 0;
    const auto rc = sim::simulate_serving(cont.serving_job());
    const auto rs = sim::simulate_serving(stat.serving_job());
    CHECK(rc.output_tokens_per_s > 1.3 * rs.output_tokens_per_s);
    CHECK(rc.e2e_latency_s.mean < rs.e2e_latency_s.mean);
}

TEST_CASE("Little's law: requests in system = arrival rate x time in system (within 2%)", "[serving][sim]") {
    const auto s = serving("llama-3-8b", 1, 1, mixed({{"qps", 4.0}, {"requests", 6000}}));
    const auto r = sim::simulate_serving(s.serving_job());
    const double lambda = static_cast<double>(r.requests) / r.makespan_s;
    CHECK(r.mean_in_system == Approx(lambda * r.e2e_latency_s.mean).epsilon(0.02));
    CHECK(lambda == Approx(4.0).epsilon(0.05));   // under capacity, the deployment keeps up
}

TEST_CASE("past capacity p99 TTFT grows without bound; below it it does not", "[serving][sim]") {
    auto run = [](double qps, int n) {
        const auto s = serving("llama-3-8b", 1, 1,
                               {{"batching", "continuous"},
                                {"input_len", 1024},
                                {"output_len", 256},
                                {"requests", n},
                                {"qps", qps},
                                {"max_batch", 32}});
        return sim::simulate_serving(s.serving_job());
    };
    const auto cap = run(0, 2000).requests_per_s;   // offline: the capacity
    const auto over1 = run(2 * cap, 1000), over4 = run(2 * cap, 4000);
    CHECK(over4.ttft_s.p99 > 3.0 * over1.ttft_s.p99);
    const auto under1 = run(0.5 * cap, 1000), under4 = run(0.5 * cap, 4000);
    CHECK(under4.ttft_s.p99 < 1.5 * under1.ttft_s.p99);
}

TEST_CASE("offline throughput is the saturated rate: the same from 6,000 or 60,000 requests, above the batch's own",
          "[serving][sim][offline]") {
    // A long-tailed output length: a finite batch ends with its stragglers running at a batch of a few, so
    // its requests over its makespan read low; the rate while requests wait is the capacity.
    Json in = mixed({{"max_batch", 128}, {"requests", 6000}});
    const auto r6 = sim::simulate_serving(serving("llama-3-8b", 1, 1, in).serving_job());
    in["requests"] = 60000;
    const auto r60 = sim::simulate_serving(serving("llama-3-8b", 1, 1, in).serving_job());
    REQUIRE(r6.steadiness.applies);
    REQUIRE(r6.steadiness.long_enough);
    REQUIRE(r60.steadiness.long_enough);
    CHECK(r6.requests_per_s == Approx(r60.requests_per_s).epsilon(0.03));
    CHECK(r6.output_tokens_per_s == Approx(r60.output_tokens_per_s).epsilon(0.03));
    const double batch_rate = static_cast<double>(r6.requests) / r6.makespan_s;
    CHECK(r6.requests_per_s > 1.02 * batch_rate);
    // The batch's own rate tends to the saturated one as the drain's share shrinks.
    const double batch_rate60 = static_cast<double>(r60.requests) / r60.makespan_s;
    CHECK(std::abs(batch_rate60 / r60.requests_per_s - 1) < std::abs(batch_rate / r6.requests_per_s - 1));
    // Tokens and requests agree: output tokens per request near the stream's mean output.
    CHECK(r60.output_tokens_per_s / r60.requests_per_s == Approx(200).epsilon(0.1));
    // A stream that barely fills the batch once measures nothing: the rates stay the batch's own.
    in["requests"] = 150;
    const auto r150 = sim::simulate_serving(serving("llama-3-8b", 1, 1, in).serving_job());
    CHECK_FALSE(r150.steadiness.long_enough);
    CHECK(r150.requests_per_s == Approx(150.0 / r150.makespan_s));
}

TEST_CASE("offline saturated rate of equal lengths: a whole number of waves, whatever the stream's length",
          "[serving][sim][offline]") {
    // Equal lengths finish in waves of a batch (64 here), each wave's completions spread over the
    // iterations its prompts took to admit (four 2,048-token prompts per iteration). A window from the end
    // of one wave to the middle of another counted part of a wave over a whole period: 4.89, 5.89 and 5.65
    // requests/s from 260, 300 and 400 requests against 6.26 from a long stream.
    auto rate = [](int requests) {
        return sim::simulate_serving(serving("llama-3-8b", 1, 1,
                                             {{"batching", "continuous"},
                                              {"input_len", 2048},
                                              {"output_len", 512},
                                              {"max_batch", 64},
                                              {"requests", requests}})
                                         .serving_job());
    };
    const auto long_stream = rate(3000);
    REQUIRE(long_stream.steadiness.long_enough);
    for (int n : {260, 300, 330, 400}) {
        INFO(n << " requests");
        const auto r = rate(n);
        REQUIRE(r.steadiness.long_enough);
        CHECK(r.requests_per_s == Approx(long_stream.requests_per_s).epsilon(0.015));
        CHECK(r.output_tokens_per_s == Approx(512.0 * r.requests_per_s).epsilon(1e-9));
    }
}

TEST_CASE("chunked prefill lowers p99 TPOT of a mixed stream", "[serving][sim]") {
    const auto whole = serving("llama-3-8b", 1, 1, mixed({{"qps", 10.0}}));
    const auto chunked = serving("llama-3-8b", 1, 1, mixed({{"qps", 10.0}, {"max_batch_tokens", 512}}));
    const auto rw = sim::simulate_serving(whole.serving_job());
    const auto rc = sim::simulate_serving(chunked.serving_job());
    CHECK(rc.tpot_s.p99 < 0.85 * rw.tpot_s.p99);
}

TEST_CASE("speculative decoding: the Leviathan formula at batch 1, a smaller gain at large batch",
          "[serving][speculative]") {
    SpeculativeConfig sp;
    sp.enabled = true;
    sp.tokens = 4;
    sp.acceptance = 0.7;
    CHECK(speculative_tokens_per_step(sp) == Approx((1 - std::pow(0.7, 5)) / (1 - 0.7)));
    auto spec = [](int batch, bool on) {
        Json in = {{"batch", batch}, {"input_len", 512}, {"output_len", 256}};
        if (on) in["speculative"] = {{"draft_model", "llama-3.2-1b"}, {"tokens", 4}, {"acceptance", 0.7}};
        return serving("llama-3.1-70b", 4, 4, in);
    };
    for (int batch : {1, 256}) {
        const auto base = spec(batch, false), with = spec(batch, true);
        const double t1 = estimate_inference(base.serving_job()).tpot_s;
        const double ts = estimate_inference(with.serving_job()).tpot_s;
        // The formula: E tokens per (k draft steps + one verification of k + 1 tokens).
        const auto job = with.serving_job();
        IterationBatch v;
        v.decode_seqs = batch;
        v.decode_tokens_per_seq = 5;
        v.decode_kv_tokens = batch * (512 + 128.0);
        const double verify = iteration_cost(job, v).time_s;
        const double draft = draft_cost_s(job, batch, 512 + 128.0);
        const double E = speculative_tokens_per_step(job.inference.speculative);
        CHECK(t1 / ts == Approx(E * t1 / (draft + verify)).epsilon(1e-9));
        if (batch == 1) {
            CHECK(t1 / ts > 2.0);   // memory-bound: verifying 5 tokens costs about one
            CHECK(verify == Approx(t1).epsilon(0.05));
        } else {
            CHECK(t1 / ts < 1.6);
        }
    }
}

TEST_CASE("a speculative draft model's weights and K/V count in the deployment's memory", "[serving][speculative]") {
    // A 405B draft beside Llama-3.1-8B on one H100 "fit" a static batch of 409; the memory left it out.
    auto mem = [](const char* draft, int batch) {
        Json in = {{"batch", batch}, {"input_len", 512}, {"output_len", 256}};
        if (draft) in["speculative"] = {{"draft_model", draft}, {"tokens", 4}, {"acceptance", 0.7}};
        const auto s = serving("llama-3.1-8b", 1, 1, in);
        return inference_memory(s.model, s.system, s.parallel, s.inference);
    };
    const auto base = mem(nullptr, 8), small = mem("llama-3.2-1b", 8), huge = mem("llama-3.1-405b", 8);
    const auto draft = mem(nullptr, 8);
    const auto one_b = serving("llama-3.2-1b", 1, 1, {{"batch", 8}, {"input_len", 512}, {"output_len", 256}});
    const auto d = inference_memory(one_b.model, one_b.system, one_b.parallel, one_b.inference);
    CHECK(small.draft_weights_bytes == Approx(d.weights_bytes));
    CHECK(small.weights_bytes == Approx(base.weights_bytes + d.weights_bytes));
    CHECK(small.kv_bytes_per_token == Approx(base.kv_bytes_per_token + d.kv_bytes_per_token));
    CHECK(small.max_batch < base.max_batch);
    CHECK(draft.draft_weights_bytes == 0.0);
    CHECK_FALSE(huge.fits);
    CHECK(huge.max_batch == 0);
    // FP32 weights keep the embedding and LM head in FP32 too: 4 bytes per parameter throughout.
    const auto fp32 = serving("llama-3-8b", 1, 1,
                              {{"batch", 1}, {"input_len", 16}, {"output_len", 16}, {"weight_precision", "fp32"}});
    const auto m32 = inference_memory(fp32.model, fp32.system, fp32.parallel, fp32.inference);
    CHECK(m32.weights_bytes == Approx(4.0 * count_parameters(fp32.model).total).epsilon(1e-5));   // (norms aside)
}

TEST_CASE("the same seed gives the same run; another seed another", "[serving][sim]") {
    const auto a = serving("llama-3-8b", 2, 1, mixed({{"qps", 6.0}, {"requests", 800}}));
    const auto r1 = sim::simulate_serving(a.serving_job());
    const auto r2 = sim::simulate_serving(a.serving_job());
    CHECK(r1.ttft_s.p99 == r2.ttft_s.p99);
    CHECK(r1.tpot_s.mean == r2.tpot_s.mean);
    CHECK(r1.makespan_s == r2.makespan_s);
    CHECK(r1.iterations == r2.iterations);
    const auto b = serving("llama-3-8b", 2, 1, mixed({{"qps", 6.0}, {"requests", 800}, {"seed", 8}}));
    CHECK(sim::simulate_serving(b.serving_job()).makespan_s != r1.makespan_s);
    CHECK(r1.replicas == 2);
}

TEST_CASE("seeds k and k + 1 are independent replications: no arrival gap in common", "[serving][sim][seed]") {
    InferenceConfig in;
    in.requests = 20000;
    in.qps = 10;
    auto gaps = [&](std::uint64_t seed) {
        in.seed = seed;
        const auto reqs = sim::request_stream(in);
        std::vector<double> g;
        for (std::size_t i = 1; i < reqs.size(); ++i) g.push_back(reqs[i].arrival_s - reqs[i - 1].arrival_s);
        std::sort(g.begin(), g.end());
        return g;
    };
    for (std::uint64_t k : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{1000}}) {
        const auto a = gaps(k), b = gaps(k + 1);
        std::vector<double> common;
        std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
        INFO("seed " << k);
        CHECK(common.empty());
        // Both are exponential with mean 1/qps.
        CHECK(std::accumulate(b.begin(), b.end(), 0.0) / static_cast<double>(b.size()) == Approx(0.1).epsilon(0.03));
    }
}

namespace {
struct Drawn {
    double mean = 0, stdev = 0, lo = 1e300, hi = 0;
};
// Moments of the input lengths of a 100,000-request stream drawn from `d`.
Drawn drawn(const LengthDist& d) {
    InferenceConfig in;
    in.requests = 100000;
    in.input_dist = d;
    const auto reqs = sim::request_stream(in);
    Drawn r;
    double sum = 0, sq = 0;
    for (const auto& q : reqs) {
        sum += q.input;
        sq += static_cast<double>(q.input) * q.input;
        r.lo = std::min(r.lo, static_cast<double>(q.input));
        r.hi = std::max(r.hi, static_cast<double>(q.input));
    }
    r.mean = sum / static_cast<double>(reqs.size());
    r.stdev = std::sqrt(sq / static_cast<double>(reqs.size()) - r.mean * r.mean);
    return r;
}
}   // namespace

TEST_CASE("bounded length distributions keep the stated mean and stdev", "[serving][lengths]") {
    using K = LengthDist::Kind;
    // MLPerf Llama-2-70B outputs: lognormal, mean 291.9, stdev 229.8, at most 1024 (8.3% of the untruncated
    // lognormal lies above it). Clamped draws came out 281.8 on average; restricted draws keep 291.9.
    const auto out = LengthDist{K::lognormal, 291.9, 229.8, 1, 1024};
    const auto s = sim::length_sampling(out);
    CHECK(s.mean == Approx(291.9).epsilon(1e-6));
    CHECK(s.stdev == Approx(229.8).epsilon(1e-6));
    CHECK(s.in_range == Approx(0.917).margin(0.005));
    const auto d = drawn(out);
    CHECK(d.mean == Approx(291.9).epsilon(0.01));
    CHECK(d.stdev == Approx(229.8).epsilon(0.02));
    CHECK(d.lo >= 1);
    CHECK(d.hi <= 1024);
    // A normal cut at 1 token (a third of it below): the restriction, not the clamp, keeps the mean.
    const auto n = drawn(LengthDist{K::normal, 100, 80, 1, 1e9});
    CHECK(n.mean == Approx(100).epsilon(0.01));
    CHECK(n.stdev == Approx(80).epsilon(0.02));
    // Exponential cut to [150, 260]: the mean is held (its stdev is the family's).
    const auto e = sim::length_sampling(LengthDist{K::exponential, 200, 0, 150, 260});
    CHECK(e.mean == Approx(200).epsilon(1e-6));
    CHECK(drawn(LengthDist{K::exponential, 200, 0, 150, 260}).mean == Approx(200).epsilon(0.01));
    // A mean above the midpoint of the bounds (issue 34: 55.5 asked in [1, 64], 32.2 drawn): the rising
    // exponential, the mirror image of the falling one, keeps it; its lengths still cover the bounds.
    const auto high = sim::length_sampling(LengthDist{K::exponential, 55.5, 0, 1, 64});
    CHECK(high.rising);
    CHECK(high.mean == Approx(55.5).epsilon(1e-6));
    CHECK(drawn(LengthDist{K::exponential, 55.5, 0, 1, 64}).mean == Approx(55.5).epsilon(0.01));
    CHECK(high.length(1e-12) == 1);
    CHECK(high.length(1.0 - 1e-16) == 64);
    CHECK(high.length(0.3) <= high.length(0.7));
    // The midpoint itself, and a mean just above the lower bound.
    CHECK(sim::length_sampling(LengthDist{K::exponential, 32.5, 0, 1, 64}).mean == Approx(32.5).epsilon(1e-6));
    CHECK(sim::length_sampling(LengthDist{K::exponential, 1.2, 0, 1, 64}).mean == Approx(1.2).epsilon(1e-6));
    // A stdev the family cannot reach within the bounds: the mean is kept, the stdev is the nearest the
    // family reaches (a normal cut at 50 with mean 100 tends to an exponential from 49.5: stdev < 50.5).
    const auto far = sim::length_sampling(LengthDist{K::normal, 100, 60, 50, 300});
    CHECK(far.mean == Approx(100).epsilon(1e-6));
    CHECK(far.stdev < 50.5);
    CHECK(far.stdev > 45);
    CHECK(drawn(LengthDist{K::normal, 100, 60, 50, 300}).mean == Approx(100).epsilon(0.01));
    // Bounds that hold all of the mass change nothing: the untruncated parameters.
    const auto wide = sim::length_sampling(LengthDist{K::lognormal, 500, 100, 1, 1e7});
    CHECK(wide.scale == Approx(std::sqrt(std::log1p(0.04))));
    CHECK(wide.location == Approx(std::log(500.0) - 0.5 * std::log1p(0.04)));
    // The inverse-CDF draw is monotone in the uniform variate and covers the bounds.
    CHECK(s.length(1e-12) == 1);
    CHECK(s.length(1.0 - 1e-16) == 1024);
    CHECK(s.length(0.3) <= s.length(0.7));
}

TEST_CASE("serving keys: strict errors name the pointer", "[serving][errors]") {
    auto bad = [](Json in) {
        try {
            serving("llama-3-8b", 1, 1, in);
        } catch (const ConfigError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK_THAT(bad({{"batching", "dynamic"}}), Catch::Contains("/inference/batching"));
    CHECK_THAT(bad({{"input_len", {{"mean", 10}, {"dist", "poisson"}}}}), Catch::Contains("/inference/input_len/dist"));
    CHECK_THAT(bad({{"input_len", {{"dist", "normal"}, {"stdev", 3}}}}), Catch::Contains("/inference/input_len/mean"));
    CHECK_THAT(bad({{"qps", -1}}), Catch::Contains("/inference/qps"));
    // A mean outside its bounds.
    CHECK_THAT(bad({{"input_len", {{"mean", 100}, {"dist", "normal"}, {"stdev", 10}, {"min", 200}, {"max", 300}}}}),
               Catch::Contains("/inference/input_len/mean") && Catch::Contains("within [min, max] = [200, 300]"));
    CHECK_THAT(bad({{"slo", {{"ttft_p99", 1}}}}), Catch::Contains("/inference/slo/ttft_p99"));
    CHECK_THAT(bad({{"speculative", {{"tokens", 4}}}}), Catch::Contains("/inference/speculative/draft_model"));
    // A draft proposes the target's tokens: another vocabulary is refused (GPT-3 125M's beside Llama 3's).
    CHECK_THAT(bad({{"speculative", {{"draft_model", "gpt3-125m"}, {"tokens", 4}}}}),
               Catch::Contains("/inference/speculative/draft_model: \"gpt3-125m\": expected a draft with the target's "
                               "vocabulary"));
    CHECK_THAT(bad({{"speculative", {{"method", "eagle"}}}}),
               Catch::Contains("/inference/speculative/acceptance_length"));
    CHECK_THAT(bad({{"requests", 0}}), Catch::Contains("/inference/requests"));
    // A request longer than the KV cache can hold: the simulator refuses it, naming the key (the model
    // states a 2M-token context; the zoo's 131,072 would refuse the prompt in the reader).
    const auto huge = parse_scenario(
        Json{{"model", {{"preset", "llama-3.1-70b"}, {"max_seq_len", 2000000}}},
             {"system", "dgx-h100"},
             {"gpus", 1},
             {"inference", {{"batching", "continuous"}, {"weight_precision", "fp8"}, {"input_len", 1000000}}}});
    CHECK_THROWS_WITH(sim::simulate_serving(huge.serving_job()), Catch::Contains("/inference/input_len"));
    // Past the model's stated context the reader refuses the prompt.
    CHECK_THAT(bad({{"batching", "continuous"}, {"input_len", 8000}, {"output_len", 500}}),
               Catch::Contains("/inference/input_len: 8000: expected a prompt that, with the 500 output tokens, fits "
                               "the model's context length (8192 tokens"));
}

TEST_CASE("inference.engine: a registered name and a release number, echoed; anything else names its pointer",
          "[serving][engine][errors]") {
    auto bad = [](Json in) {
        try {
            serving("llama-3-8b", 1, 1, in);
        } catch (const ConfigError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    const auto s = serving("llama-3-8b", 1, 1, {{"engine", {{"name", "vllm"}, {"version", "0.6.3"}}}});
    CHECK(s.inference.engine.kind == EngineKind::vllm);
    CHECK(s.inference.engine.stated);
    REQUIRE(s.inference.engine.version);
    CHECK(*s.inference.engine.version == EngineVersion{0, 6, 3});
    CHECK(EngineVersion{0, 6, 3} < EngineVersion{0, 8, 0});
    CHECK(to_json(s.inference)["engine"] == Json{{"name", "vllm"}, {"version", "0.6.3"}});
    // Absent: a current TensorRT-LLM-class engine, echoed by name and without a version.
    const auto d = serving("llama-3-8b", 1, 1, Json::object());
    CHECK_FALSE(d.inference.engine.stated);
    CHECK(to_json(d.inference)["engine"] == Json{{"name", "tensorrt-llm"}});
    CHECK(parse_engine_version("1") == EngineVersion{1, 0, 0});
    for (const char* v : {"", "1.", ".1", "01.2", "1.2.3.4", "-1", "v1.2", "1.2rc1", "10000", "1 .2"}) {
        INFO(v);
        CHECK_FALSE(parse_engine_version(v));
    }
    CHECK_THAT(bad({{"engine", {{"name", "lmdeploy"}}}}),
               Catch::Contains("/inference/engine/name") && Catch::Contains("\"vllm\""));
    CHECK_THAT(bad({{"engine", {{"version", "0.6.1"}}}}), Catch::Contains("/inference/engine/name: missing"));
    CHECK_THAT(bad({{"engine", {{"name", "vllm"}, {"version", "0.6.x"}}}}),
               Catch::Contains("/inference/engine/version") && Catch::Contains("0.6.x"));
    CHECK_THAT(bad({{"engine", {{"name", "vllm"}, {"release", "0.6.1"}}}}),
               Catch::Contains("/inference/engine/release"));
    CHECK_THAT(bad({{"engine", "vllm"}}), Catch::Contains("/inference/engine"));
}

TEST_CASE("a uniform length given by its bounds: mean their midpoint, stdev (max - min)/sqrt(12)",
          "[serving][lengths]") {
    auto in = [](Json len) { return Json{{"batching", "continuous"}, {"input_len", std::move(len)}}; };
    const auto s = serving("llama-3-8b", 1, 1, in({{"dist", "uniform"}, {"min", 100}, {"max", 300}}));
    CHECK(s.inference.input_dist.kind == LengthDist::Kind::uniform);
    CHECK(s.inference.input_dist.mean == 200.0);
    CHECK(s.inference.input_len == 200);
    CHECK(s.inference.input_dist.stdev == Approx(200.0 / std::sqrt(12.0)).epsilon(1e-12));
    // Drawn: every length within the bounds, the sample mean and stdev those of U[100, 300].
    const auto reqs =
        sim::request_stream(parse_scenario({{"model", "llama-3-8b"},
                                            {"system", "dgx-h100"},
                                            {"gpus", 1},
                                            {"inference",
                                             {{"batching", "continuous"},
                                              {"requests", 20000},
                                              {"input_len", {{"dist", "uniform"}, {"min", 100}, {"max", 300}}}}}})
                                .inference);
    double sum = 0, sq = 0;
    int lo = 1 << 30, hi = 0;
    for (const auto& r : reqs) {
        sum += r.input;
        sq += static_cast<double>(r.input) * r.input;
        lo = std::min(lo, r.input);
        hi = std::max(hi, r.input);
    }
    const double n = static_cast<double>(reqs.size()), mean = sum / n;
    CHECK(lo >= 100);
    CHECK(hi <= 300);
    CHECK(mean == Approx(200.0).epsilon(0.01));
    CHECK(std::sqrt(sq / n - mean * mean) == Approx(200.0 / std::sqrt(12.0)).epsilon(0.03));
    // The same with its midpoint stated; another mean without a stdev contradicts the bounds.
    CHECK(serving("llama-3-8b", 1, 1, in({{"dist", "uniform"}, {"mean", 200}, {"min", 100}, {"max", 300}}))
              .inference.input_dist.stdev == Approx(200.0 / std::sqrt(12.0)));
    CHECK_THROWS_WITH(serving("llama-3-8b", 1, 1, in({{"dist", "uniform"}, {"mean", 150}, {"min", 100}, {"max", 300}})),
                      Catch::Contains("/inference/input_len/mean") && Catch::Contains("midpoint"));
    // The contract's stdev is optional: given with the bounds and no mean, the mean is still their midpoint
    // and the stdev the one given (a uniform of that spread, restricted to the bounds).
    const auto with_stdev =
        serving("llama-3-8b", 1, 1, in({{"dist", "uniform"}, {"min", 100}, {"max", 300}, {"stdev", 20}}));
    CHECK(with_stdev.inference.input_dist.mean == 200.0);
    CHECK(with_stdev.inference.input_dist.stdev == 20.0);
    // No max: the mean is required, and said missing once (not again as the default's range).
    try {
        (void)serving("llama-3-8b", 1, 1, in({{"dist", "uniform"}, {"min", 100}}));
        FAIL("a uniform length with only a min was accepted");
    } catch (const ConfigError& e) {
        int mean_lines = 0;
        for (const auto& l : e.problems()) mean_lines += l.find("/inference/input_len/mean") != std::string::npos;
        CHECK(mean_lines == 1);
    }
    CHECK_THROWS_WITH(serving("llama-3-8b", 1, 1, in({{"dist", "uniform"}, {"min", 300}, {"max", 300}})),
                      Catch::Contains("/inference/input_len/max"));
}

TEST_CASE("capacity search with a load-aware router: probed as round robin, the winner judged with its own router",
          "[serving][capacity][heavy]") {
    // Routing on load serves a fleet at least as well as turns, so the search probes candidates as round robin
    // on one sampled replica (a 20,000 req/s search simulated every replica of every probe for minutes, then
    // failed at the work limit) and judges the winner whole with least-requests, which must meet; within the
    // work limit it is not judged as round robin.
    Json in = {{"batching", "continuous"},
               {"input_len", 1000},
               {"output_len", 200},
               {"requests", 1500},
               {"qps", 60.0},
               {"weight_precision", "bf16"},
               {"slo", {{"ttft_p99_s", 1.0}, {"tpot_p99_s", 0.03}}}};
    const auto rr = sim::serving_capacity_search(serving("llama-3-8b", 1, 1, in), 32);
    in["router"] = "least-requests";
    const auto lr = sim::serving_capacity_search(serving("llama-3-8b", 1, 1, in), 32);
    REQUIRE_FALSE(rr.best.empty());
    REQUIRE_FALSE(lr.best.empty());
    const auto& w = lr.best.front();
    CHECK(w.meets);
    CHECK_FALSE(w.routed_round_robin);
    CHECK(w.result.ttft_s.p99 <= 1.0);
    CHECK(w.result.tpot_s.p99 <= 0.03);
    CHECK(w.gpus() <= rr.best.front().gpus() + w.tp * w.pp);   // at most the confirmation's one more replica
}

TEST_CASE("capacity search: the fewest GPUs meeting the SLO, confirmed; one replica fewer misses",
          "[serving][capacity][heavy]") {
    const auto s = serving("llama-3-8b", 1, 1,
                           {{"batching", "continuous"},
                            {"input_len", 1000},
                            {"output_len", 200},
                            {"requests", 1500},
                            {"qps", 60.0},
                            {"weight_precision", "bf16"},
                            {"slo", {{"ttft_p99_s", 1.0}, {"tpot_p99_s", 0.03}}}});
    const auto r = sim::serving_capacity_search(s, 32);
    REQUIRE_FALSE(r.best.empty());
    const auto& w = r.best.front();
    CHECK(w.meets);
    CHECK(w.result.ttft_s.p99 <= 1.0);
    CHECK(w.result.tpot_s.p99 <= 0.03);
    for (const auto& c : r.best) CHECK(c.gpus() >= w.gpus());
    REQUIRE(r.fewer);
    CHECK_FALSE(r.fewer->meets);
    CHECK(r.fewer->replicas == w.replicas - 1);
    // The same configuration (tp, pp, precision, max_batch, chunk) with one replica fewer.
    CHECK(r.fewer->tp == w.tp);
    CHECK(r.fewer->pp == w.pp);
    CHECK(r.fewer->weight_precision == w.weight_precision);
    CHECK(r.fewer->max_batch == w.max_batch);
    CHECK(r.fewer->max_batch_tokens == w.max_batch_tokens);
    // The winner is what a plain simulation of its configuration gives.
    Scenario again = s;
    again.parallel.tp = w.tp;
    again.parallel.pp = w.pp;
    again.parallel.dp = w.replicas;
    again.gpus = w.gpus();
    again.inference.weight_precision = w.weight_precision;
    again.inference.kv_precision = w.kv_precision;
    again.inference.max_batch = w.max_batch;
    again.inference.max_batch_tokens = w.max_batch_tokens;
    // ... on the stream the search judged it on: 600 s of arrivals at 60 req/s (36,000 requests, more
    // than the scenario's 1,500: a 25-second stream is decided by its warm-up and drain).
    again.inference.requests = sim::capacity_stream_requests(s.inference);
    CHECK(again.inference.requests == 36000);
    const auto replay = sim::simulate_serving(again.serving_job());
    CHECK(replay.ttft_s.p99 == w.result.ttft_s.p99);
    CHECK(replay.tpot_s.p99 == w.result.tpot_s.p99);
    CHECK(replay.steadiness.steady());
    // Searched: tp 1..8 x fp8/bf16 (pp 1: Llama 3 8B fits one H100) x max_batch {KV, 256, 128} x
    // chunk {none, 2048, 8192} = 72 configurations; the answer does not depend on the thread count.
    CHECK(r.variants == 4 * 2 * 3 * 3);
    const auto one = sim::serving_capacity_search(s, 32, 1);
    REQUIRE(one.best.size() == r.best.size());
    for (std::size_t i = 0; i < r.best.size(); ++i) {
        CHECK(one.best[i].gpus() == r.best[i].gpus());
        CHECK(one.best[i].result.tpot_s.p99 == r.best[i].result.tpot_s.p99);
    }
    CHECK(one.simulations == r.simulations);
    // Without an SLO the question has no answer: an error naming the key.
    const auto no_slo = serving("llama-3-8b", 1, 1, {{"batching", "continuous"}, {"qps", 10.0}});
    CHECK_THROWS_WITH(sim::serving_capacity_search(no_slo, 8), Catch::Contains("/inference/slo"));
}

TEST_CASE("capacity search: every candidate that could need fewer GPUs is judged whole, not only the first",
          "[serving][capacity]") {
    // Llama-3-70B FP8, 2,000-token prompts at 16 req/s, p99 TTFT 2 s / TPOT 40 ms (the colocated half of
    // scenarios/llama3-70b-h100-disaggregated.json). Sampled, tp 4 x 3 and tp 2 x 6 both looked like 12 GPUs;
    // whole, tp 4 needs 4 replicas (16 GPUs) and tp 2 needs 7 (14 GPUs). Only the first (tp 4, the lower
    // TPOT) was confirmed, so the search answered 16.
    Json j = {{"model", "llama-3-70b"},
              {"system", "dgx-h100"},
              {"gpus", 8},
              {"inference",
               {{"batching", "continuous"},
                {"weight_precision", "fp8"},
                {"kv_precision", "fp8"},
                {"input_len", {{"mean", 2000}, {"dist", "lognormal"}, {"stdev", 800}}},
                {"output_len", {{"mean", 200}, {"dist", "lognormal"}, {"stdev", 100}}},
                {"qps", 16},
                {"requests", 10000},
                {"slo", {{"ttft_p99_s", 2.0}, {"tpot_p99_s", 0.04}}}}}};
    const auto r = sim::serving_capacity_search(parse_scenario(j), 64);
    REQUIRE_FALSE(r.best.empty());
    const auto& w = r.best.front();
    CHECK(w.judged_whole);
    CHECK(w.meets);
    CHECK(w.gpus() == 14);
    CHECK(w.tp == 2);
    for (const auto& c : r.best) {
        INFO(c.tp << " x " << c.pp << " x " << c.replicas);
        CHECK(c.gpus() >= w.gpus());   // whole or sampled: no candidate could need fewer
    }
    REQUIRE(r.fewer);
    CHECK_FALSE(r.fewer->meets);
    CHECK(r.fewer->gpus() == 12);
}

TEST_CASE("the scheduler says why waiting requests were held back: seats, KV blocks, token budget", "[serving][sim]") {
    // Offline: every request waits from t = 0, so some reason holds the queue back in every iteration
    // but the last ones. With 8 seats the seats bind.
    const auto seats = sim::simulate_serving(
        serving(
            "llama-3-8b", 1, 1,
            {{"batching", "continuous"}, {"input_len", 500}, {"output_len", 100}, {"requests", 200}, {"max_batch", 8}})
            .serving_job());
    CHECK(seats.peak_batch == 8);
    CHECK(seats.seats_held_fraction > 0.9);
    CHECK(seats.kv_held_fraction == 0);
    CHECK(seats.seats_held_fraction + seats.kv_held_fraction + seats.budget_held_fraction <= 1.0 + 1e-12);
    // Without a seat cap, Llama 3 70B on tp 2 in bf16 (11.7 GiB of KV per GPU, ~76k tokens) holds about
    // 16 requests of 4,500 tokens: the KV cache binds and sequences are preempted.
    const auto kv = sim::simulate_serving(
        serving("llama-3-70b", 2, 2,
                {{"batching", "continuous"}, {"input_len", 4000}, {"output_len", 500}, {"requests", 100}})
            .serving_job());
    CHECK(kv.kv_held_fraction > 0.5);
    CHECK(kv.seats_held_fraction == 0);
    CHECK(kv.peak_batch < 20);
    CHECK(kv.prefill_iteration_s + kv.decode_iteration_s == Approx(kv.makespan_s).epsilon(1e-9));
}

TEST_CASE("without max_batch_tokens an iteration takes whole prompts up to the engine's 8192 tokens",
          "[serving][sim]") {
    // 100 prompts of 1,000 tokens queued at t = 0: the first iteration prefills 8 of them (8,000 <=
    // 8,192), never a part of one; a prompt longer than the budget runs alone in its iteration.
    sim::ServingOptions opt;
    opt.timeline = true;
    const auto r = sim::simulate_serving(
        serving("llama-3-8b", 1, 1,
                {{"batching", "continuous"}, {"input_len", 1000}, {"output_len", 4}, {"requests", 100}})
            .serving_job(),
        opt);
    REQUIRE(!r.timeline.empty());
    CHECK(r.timeline.front().prefill_tokens == 8000);
    for (const auto& it : r.timeline) CHECK(it.prefill_tokens % 1000 == 0);
    CHECK(r.budget_held_fraction > 0.5);
    const auto longp = sim::simulate_serving(
        serving("llama-3.1-8b", 1, 1,   // a 131,072-token context: a 12,000-token prompt is one it takes
                {{"batching", "continuous"}, {"input_len", 12000}, {"output_len", 2}, {"requests", 3}})
            .serving_job(),
        opt);
    for (const auto& it : longp.timeline) CHECK((it.prefill_tokens == 0 || it.prefill_tokens == 12000));
    CHECK(kTensorRtLlmMaxNumTokens == 8192);
}

TEST_CASE("kernels launched one by one cost the launch time more than in a CUDA graph", "[serving][decode]") {
    auto step = [](bool graphs) {
        const auto s = serving("llama-3-8b", 1, 1, {{"cuda_graphs", graphs}});
        IterationBatch b;
        b.decode_seqs = 8;
        b.decode_kv_tokens = 8 * 1000.0;
        return iteration_cost(s.serving_job(), b);
    };
    const auto eager = step(false), graph = step(true);
    const auto a = serving("llama-3-8b", 1, 1, Json::object()).system.gpu;
    // Same roofline; the difference is (launch - graph launch) per kernel.
    const double per_kernel = a.efficiency.kernel_launch_us * 1e-6 - kGraphLaunch_s;
    REQUIRE(per_kernel > 0);
    const double host = 8 * InferenceConfig{}.host_per_sequence_us * 1e-6;   // 8 sequences' host time
    const double kernels = (graph.overhead_s - host) / kGraphKernelFixed_s;
    CHECK(eager.time_s - graph.time_s == Approx(kernels * per_kernel).epsilon(1e-9));
    CHECK(eager.time_s > graph.time_s);
}

TEST_CASE("host time per sequence: every running sequence adds host_per_sequence_us to its iteration",
          "[serving][decode]") {
    IterationBatch b;
    b.decode_seqs = 64;
    b.decode_kv_tokens = 64 * 1000.0;
    b.prefill_tokens = 600;
    b.prefill_seqs = 2;
    b.prefill_pairs = 2 * 300.0 * 301 / 2;
    b.prefill_kv_tokens = 600;
    auto step = [&](Json in) { return iteration_cost(serving("llama-3-8b", 1, 1, std::move(in)).serving_job(), b); };
    const auto none = step({{"host_per_sequence_us", 0}});
    const auto dflt = step(Json::object());
    const auto ten = step({{"host_per_sequence_us", 10}});
    // The default is the value fitted on validation/serving.json (docs/serving.md): 5 us.
    CHECK(InferenceConfig{}.host_per_sequence_us == 5.0);
    // Same kernels, same roofline: the difference is 66 sequences (64 decoding, 2 prefilling) x the host time.
    CHECK(dflt.time_s - none.time_s == Approx(66 * 5e-6).epsilon(1e-9));
    CHECK(ten.time_s - none.time_s == Approx(66 * 10e-6).epsilon(1e-9));
    CHECK(dflt.compute_s == Approx(none.compute_s));
    CHECK(dflt.memory_s == Approx(none.memory_s));
    // A stream: throughput never rises as host time rises, and it falls by less than the host share.
    const auto slow =
        sim::simulate_serving(serving("llama-3-8b", 1, 1, mixed({{"host_per_sequence_us", 20}})).serving_job());
    const auto fast =
        sim::simulate_serving(serving("llama-3-8b", 1, 1, mixed({{"host_per_sequence_us", 0}})).serving_job());
    CHECK(slow.output_tokens_per_s < fast.output_tokens_per_s);
    CHECK(slow.output_tokens_per_s > 0.5 * fast.output_tokens_per_s);
}

TEST_CASE(
    "kv_admission: TensorRT-LLM reserves by default (GUARANTEED_NO_EVICT), vLLM and SGLang admit on demand; "
    "a stated policy is kept",
    "[serving][engine]") {
    const Json base = {{"batching", "continuous"}, {"input_len", 512}, {"output_len", 128}};
    auto admission = [&](const Json& engine, const char* stated) {
        Json in = base;
        if (!engine.is_null()) in["engine"] = engine;
        if (stated) in["kv_admission"] = stated;
        return serving("llama-3-8b", 1, 1, in).inference.kv_reserve;
    };
    CHECK(admission(nullptr, nullptr));   // absent: a current TensorRT-LLM-class engine
    CHECK(admission({{"name", "tensorrt-llm"}, {"version", "0.17.0"}}, nullptr));
    CHECK(admission({{"name", "tensorrt-llm"}, {"version", "0.6.1"}}, nullptr));
    CHECK_FALSE(admission({{"name", "vllm"}}, nullptr));
    CHECK_FALSE(admission({{"name", "sglang"}}, nullptr));
    CHECK_FALSE(admission({{"name", "tensorrt-llm"}}, "on_demand"));   // MLPerf's harness: MAX_UTILIZATION
    CHECK(admission({{"name", "vllm"}}, "reserve"));
    // The echo says what ran.
    CHECK(to_json(serving("llama-3-8b", 1, 1, base))["inference"]["kv_admission"] == "reserve");
}

TEST_CASE(
    "kv_admission reserve holds the output limit: output_len max for drawn lengths, else the length, "
    "never more than the cache holds beside the prompt",
    "[serving][sim]") {
    const sim::Request r{0.0, 200, 150, -1};
    // Drawn lengths with a stated max (MLPerf: max_new_tokens 1,024): the limit, not the length drawn.
    InferenceConfig drawn =
        serving("llama-3-8b", 1, 1,
                {{"batching", "continuous"},
                 {"input_len", 200},
                 {"output_len", {{"mean", 300}, {"dist", "lognormal"}, {"stdev", 200}, {"max", 1024}}}})
            .inference;
    CHECK(sim::reserved_output_tokens(drawn, r, 1e6) == 1024.0);
    // The cache caps it: 1,000 tokens of pool beside a 200-token prompt and the step in flight (2 tokens).
    CHECK(sim::reserved_output_tokens(drawn, r, 1000.0) == Approx(1000.0 - 200.0 - 2.0));
    // ... but never below the request's own length.
    CHECK(sim::reserved_output_tokens(drawn, r, 300.0) == 150.0);
    // No max stated: nothing bounds the client's max_tokens but the length itself.
    InferenceConfig unbounded = serving("llama-3-8b", 1, 1,
                                        {{"batching", "continuous"},
                                         {"input_len", 200},
                                         {"output_len", {{"mean", 300}, {"dist", "lognormal"}, {"stdev", 200}}}})
                                    .inference;
    CHECK(sim::reserved_output_tokens(unbounded, r, 1e6) == 150.0);
    // Fixed lengths (trtllm-bench sets max_tokens to the length): exact.
    InferenceConfig fixed =
        serving("llama-3-8b", 1, 1, {{"batching", "continuous"}, {"input_len", 200}, {"output_len", 150}}).inference;
    CHECK(sim::reserved_output_tokens(fixed, r, 1e6) == 150.0);
    // In the simulator: with the limit reserved, fewer sequences run at once than with the lengths drawn.
    Json in = {{"batching", "continuous"},
               {"input_len", 2000},
               {"output_len", {{"mean", 300}, {"dist", "lognormal"}, {"stdev", 200}, {"max", 4000}}},
               {"requests", 400}};
    const auto limit = sim::simulate_serving(serving("llama-3-70b", 2, 2, in).serving_job());
    in["output_len"].erase("max");
    const auto length = sim::simulate_serving(serving("llama-3-70b", 2, 2, in).serving_job());
    CHECK(limit.preemptions == 0);
    CHECK(limit.peak_batch < length.peak_batch);
}

TEST_CASE(
    "offline saturated rates: requests and tokens are counted over the same completions (equal lengths: "
    "output tokens/s = requests/s x output length)",
    "[serving][sim]") {
    // Equal lengths finish in waves; a window ending inside a wave used to count its tokens and none of
    // its requests (Llama-3.1-70B tp 4, 467/256 tokens: 345 output tokens per request measured).
    for (const char* admission : {"reserve", "on_demand"}) {
        INFO(admission);
        const auto r = sim::simulate_serving(serving("llama-3.1-70b", 4, 4,
                                                     {{"batching", "continuous"},
                                                      {"weight_precision", "bf16"},
                                                      {"input_len", 467},
                                                      {"output_len", 256},
                                                      {"requests", 9000},
                                                      {"kv_admission", admission}})
                                                 .serving_job());
        REQUIRE(r.steadiness.long_enough);
        CHECK(r.output_tokens_per_s == Approx(256.0 * r.requests_per_s).epsilon(1e-9));
        CHECK(r.input_tokens_per_s == Approx(467.0 * r.requests_per_s).epsilon(1e-9));
    }
}

TEST_CASE("kv_admission reserve: blocks for the whole request at admission, never a preemption", "[serving][sim]") {
    // Llama 3 70B on tp 2 in bf16 holds ~76k tokens of KV: 4,000 + 500-token requests oversubscribe it
    // under on-demand admission (preemptions), while reserving 4,501 tokens each runs at most
    // floor(blocks / 282) of them and preempts none.
    Json in = {{"batching", "continuous"},
               {"input_len", 4000},
               {"output_len", 500},
               {"requests", 100},
               {"kv_admission", "on_demand"}};
    const auto od = serving("llama-3-70b", 2, 2, in);
    in["kv_admission"] = "reserve";
    const auto rs = serving("llama-3-70b", 2, 2, in);
    const auto r_od = sim::simulate_serving(od.serving_job());
    const auto r_rs = sim::simulate_serving(rs.serving_job());
    CHECK(r_od.preemptions > 0);
    CHECK(r_rs.preemptions == 0);
    const auto blocks_each = static_cast<std::int64_t>(std::ceil((4000 + 500 + 2) / 16.0));
    CHECK(r_rs.peak_batch == std::min<std::int64_t>(100, r_rs.kv_blocks / blocks_each));
    CHECK(r_rs.peak_batch < r_od.peak_batch);
    CHECK_THROWS_WITH(parse_scenario({{"model", "llama-3-8b"},
                                      {"system", "dgx-h100"},
                                      {"inference", {{"batching", "continuous"}, {"kv_admission", "lazy"}}}}),
                      Catch::Contains("/inference/kv_admission"));
}

TEST_CASE(
    "capacity search values: max_batch halves and doubles the scenario's, chunk adds none/2048/8192; pp where "
    "the weights need it",
    "[serving][capacity]") {
    InferenceConfig in;
    CHECK(sim::capacity_max_batches(in) == std::vector<std::int64_t>{0, 256, 128});
    in.max_batch = 64;
    CHECK(sim::capacity_max_batches(in) == std::vector<std::int64_t>{64, 32, 128});
    in.max_batch = 1;
    CHECK(sim::capacity_max_batches(in) == std::vector<std::int64_t>{1, 2});
    CHECK(sim::capacity_chunks(in) == std::vector<std::int64_t>{0, 2048, 8192});
    in.max_batch_tokens = 8192;
    CHECK(sim::capacity_chunks(in) == std::vector<std::int64_t>{8192, 0, 2048});
    in.max_batch_tokens = 4096;
    CHECK(sim::capacity_chunks(in) == std::vector<std::int64_t>{4096, 0, 2048, 8192});
    // Llama 3.1 405B in bf16 (810 GB of weights) does not fit 8 H100s (640 GB): tp 8 needs pp 2; in fp8
    // (405 GB) tp 8 pp 1 holds it.
    const auto s = serving("llama-3.1-405b", 1, 1,
                           {{"batching", "continuous"},
                            {"input_len", 500},
                            {"output_len", 50},
                            {"requests", 100},
                            {"qps", 1.0},
                            {"max_batch", 64},
                            {"max_batch_tokens", 2048},
                            {"slo", {{"ttft_p99_s", 10.0}, {"tpot_p99_s", 1.0}}}});
    const auto r = sim::serving_capacity_search(s, 16);
    bool bf16_pp2 = false, fp8_pp1 = false;
    for (const auto& c : r.best) {
        CHECK(c.gpus() <= 16);
        CHECK(c.meets);
        if (c.weight_precision == Precision::bf16 && c.tp == 8) bf16_pp2 = c.pp == 2;
        if (c.weight_precision == Precision::fp8 && c.tp == 8) fp8_pp1 = c.pp == 1;
    }
    CHECK(bf16_pp2);
    CHECK(fp8_pp1);
}

TEST_CASE("a MoE serving iteration pays its routing passes: dispatch, gated activation, combine", "[serving][moe]") {
    // Mixtral-8x7B (h 4096, 8 experts of ffn 14336, top 2), fp8 weights, 2,048 decode tokens at tp 8.
    // The routing passes do not shrink with TP (except the activation's FFN width): their bytes per
    // layer are 2·2·T·(1 + 2)·h + 2·(2T)·(14336/8)·3 + 4·T·8 (router logits).
    const auto s = serving("mixtral-8x7b", 8, 8, {{"weight_precision", "fp8"}, {"kv_precision", "fp8"}});
    IterationBatch b;
    b.decode_seqs = 2048;
    b.decode_kv_tokens = 2048 * 16.0;   // short contexts: the KV reads stay small
    const auto c = iteration_cost(s.serving_job(), b);
    const double T = 2048, h = 4096, f_local = 14336.0 / 8;
    const double routing_bytes = 2.0 * 2.0 * T * 3.0 * h + 2.0 * (2.0 * T) * f_local * 3.0 + 4.0 * T * 8;
    CHECK(moe_permute_bytes(T, 2, h, 2.0) + mlp_activation_bytes(2.0 * T, f_local, 2.0, 2.0) + 4.0 * T * 8 ==
          Approx(routing_bytes));
    const auto& a = s.system.gpu;
    const double bw = a.hbm_GBps * 1e9 * a.efficiency.hbm_efficiency;
    // The memory-bound kernels of the 32 layers hold at least the routing passes and the 8 passes over
    // the hidden state of the norms and residuals (8·2·T·h·2 bytes); without the routing passes they
    // come to less than that.
    const double norms_bytes = 8.0 * 2.0 * T * h * 2.0;
    CHECK(c.memory_s >= 32 * (routing_bytes + norms_bytes) / bw);
    CHECK(32 * routing_bytes / bw / c.time_s > 0.05);
}

TEST_CASE("a routed expert pads its own rows: a MoE iteration has no step where the mean crosses a tile",
          "[serving][moe]") {
    // The expected row tiles of Binomial rows (normal, σ² = μ(1 − 1/E)): at a mean on a boundary half the
    // experts need the next tile; σ = 0 is the plain ceiling.
    CHECK(expected_tiles(640, 0, 128) == 5.0);
    CHECK(expected_tiles(641, 0, 128) == 6.0);
    const double sd = routed_rows_stdev(640, 8);
    CHECK(sd == Approx(std::sqrt(640 * 7.0 / 8)));
    CHECK(expected_tiles(640, sd, 128) == Approx(5.5).margin(1e-6));   // 4 whole tiles + 1 + P(X > 640)
    // Midway between boundaries the chances to need one tile more and one fewer are equal: the ceiling.
    CHECK(expected_tiles(576, sd, 128) == Approx(5.0).margin(1e-9));
    CHECK(expected_tiles(0.5, 0, 128) == 1.0);
    // Spread over many tiles, half a tile padded on average; bounded work at any size.
    CHECK(expected_tiles(1e9, 3e4, 8) == Approx(1e9 / 8 + 0.5));
    CHECK(std::isfinite(expected_tiles(1e300, 1e150, 128)));
    CHECK(expected_tiles(std::nan(""), 1, 128) == 0.0);
    CHECK(routed_rows_stdev(640, 1) == 0.0);
    // Mixtral-8x7B on one H100 at MLPerf's Server state (about 650 decodes and 1,900 prompt tokens): 24 more
    // tokens move each expert's mean rows from 638.5 to 644.5, across 5 tiles of 128. Priced at the mean,
    // the routed GEMMs jumped by a sixth of a tile per expert and the iteration by 11%; in expectation the
    // step is the few percent the work grew.
    const auto s = serving("mixtral-8x7b", 1, 1, {{"weight_precision", "fp8"}, {"kv_precision", "fp8"}});
    auto step = [&](double decodes) {
        IterationBatch b;
        b.decode_seqs = decodes;
        b.decode_kv_tokens = decodes * 544;
        b.prefill_tokens = 1908;
        b.prefill_seqs = 4.5;
        b.prefill_pairs = 1908 * 214.0;
        b.prefill_kv_tokens = 1908;
        return iteration_cost(s.serving_job(), b).time_s;
    };
    const double below = step(646), above = step(670);
    CHECK(above / below - 1 > 0.0);
    CHECK(above / below - 1 < 0.03);
}

TEST_CASE(
    "pipeline parallelism keeps pp micro-batches in flight: a step of B sequences on pp 2 costs about what "
    "B/2 cost on pp 1; one sequence does not pipeline",
    "[serving][pp]") {
    auto step = [](int pp, double seqs) {
        const auto s = serving("llama-3-8b", pp, 1, {{"batching", "continuous"}});
        Scenario x = s;
        x.parallel.pp = pp;
        x.parallel.dp = 1;
        x.gpus = pp;
        IterationBatch b;
        b.decode_seqs = seqs;
        b.decode_kv_tokens = seqs * 1024;
        return iteration_cost(x.serving_job(), b);
    };
    CHECK(pipeline_micro_batches(1, 256) == 1);
    CHECK(pipeline_micro_batches(2, 256) == 2);
    CHECK(pipeline_micro_batches(4, 3) == 3);
    CHECK(pipeline_micro_batches(4, 0.5) == 1);
    // 32 layers in two stages of 16: 256 sequences as two micro-batches of 128, each stage busy with one;
    // the step is 2 x 16 layers of 128 sequences = the 32 layers of 128 on one GPU, plus the LM head
    // and host work of the whole batch and one micro-batch's send.
    const auto pp2 = step(2, 256), pp1 = step(1, 128), pp1_all = step(1, 256);
    CHECK(pp2.time_s > pp1.time_s);
    CHECK(pp2.time_s < 1.10 * pp1.time_s);
    CHECK(pp2.time_s < pp1_all.time_s);
    // One sequence: the stages run in turn, as one GPU runs all the layers (plus the send).
    const auto one2 = step(2, 1), one1 = step(1, 1);
    CHECK(one2.time_s >= one1.time_s);
    CHECK(one2.time_s < 1.05 * one1.time_s);
}

TEST_CASE(
    "pipeline-parallel serving: pp 2 throughput per GPU within 10% of pp 1 times the stage balance on the same "
    "GPUs",
    "[serving][pp]") {
    // Llama-3-8B (32 layers: two stages of 16, balanced) in bf16 on 2 H100: one replica of pp 2 against
    // two replicas of pp 1, offline (capacity), 2,000 requests of 500 + 200 tokens.
    const Json in = {{"batching", "continuous"}, {"input_len", 500}, {"output_len", 200}, {"requests", 2000}};
    Scenario pp2 = serving("llama-3-8b", 2, 1, in);
    pp2.parallel.pp = 2;
    pp2.parallel.dp = 1;
    const Scenario pp1 = serving("llama-3-8b", 2, 1, in);
    const double t2 = sim::simulate_serving(pp2.serving_job()).output_tokens_per_s_per_gpu;
    const double t1 = sim::simulate_serving(pp1.serving_job()).output_tokens_per_s_per_gpu;
    INFO("pp 2 " << t2 << " tokens/s per GPU, pp 1 " << t1);
    CHECK(t2 > 0.90 * t1);
    CHECK(t2 < 1.10 * t1);
}

TEST_CASE("every scheduling policy has one registry row", "[serving][scheduler]") {
    for (const auto& name : scheduler_policy_names()) {
        const auto p = scheduler_policy_from_string(name);
        REQUIRE(p);
        CHECK(sim::scheduler(*p).policy == *p);
        CHECK_FALSE(sim::scheduler(*p).contract.empty());
    }
    CHECK(sim::schedulers().size() == scheduler_policy_names().size());
}

TEST_CASE("engines: each release's scheduler, budgets, caps, CUDA graphs and decode attention; stated keys kept",
          "[serving][engine]") {
    auto in = [](Json engine, Json extra = Json::object(), const std::string& model = "llama-3-8b",
                 const std::string& system = "dgx-h100") {
        Json i = {{"batching", "continuous"}, {"engine", std::move(engine)}};
        for (auto it = extra.begin(); it != extra.end(); ++it) i[it.key()] = *it;
        return parse_scenario(Json{{"model", model}, {"system", system}, {"gpus", 1}, {"inference", i}}).inference;
    };
    // TensorRT-LLM before XQA (0.7.0): decode attention one thread block per query head.
    CHECK(in({{"name", "tensorrt-llm"}, {"version", "0.6.1"}}).decode_attention == DecodeAttention::per_query_head);
    const auto trt = in({{"name", "tensorrt-llm"}, {"version", "0.13.0"}});
    CHECK(trt.decode_attention == DecodeAttention::grouped);
    CHECK(trt.scheduler == SchedulerPolicy::inflight);
    CHECK(trt.max_batch == 256);
    CHECK(trt.max_batch_tokens == 0);
    CHECK(trt.prompt_budget_tokens == 8192);
    CHECK_FALSE(trt.cuda_graphs);
    CHECK(in({{"name", "tensorrt-llm"}}).max_batch == 2048);
    // vLLM V0: prefill-first, whole prompts up to max(max_model_len, 2048), 256 sequences, CUDA graphs.
    const auto v0 = in({{"name", "vllm"}, {"version", "0.6.3"}});
    CHECK(v0.scheduler == SchedulerPolicy::prefill_first);
    CHECK(v0.max_batch_tokens == 0);
    CHECK(v0.prompt_budget_tokens == 8192);   // Llama-3-8B's context
    CHECK(v0.max_batch == 256);
    CHECK(v0.cuda_graphs);
    // ... with a context over 32K, chunked prefill of 2048 (0.6.5+), decodes first.
    const auto v0long = in({{"name", "vllm"}, {"version", "0.6.5"}}, Json::object(), "llama-3.1-8b");
    CHECK(v0long.scheduler == SchedulerPolicy::inflight);
    CHECK(v0long.max_batch_tokens == 2048);
    // vLLM V1 on an 80 GB H100: chunked 8192, 1024 sequences; on an A100 80GB from 0.9: 2048, 256.
    const auto v1 = in({{"name", "vllm"}});
    CHECK(v1.scheduler == SchedulerPolicy::inflight);
    CHECK(v1.max_batch_tokens == 8192);
    CHECK(v1.max_batch == 1024);
    const auto v1a = in({{"name", "vllm"}, {"version", "0.10.0"}}, Json::object(), "llama-3-8b", "dgx-a100-80gb");
    CHECK(v1a.max_batch_tokens == 2048);
    CHECK(v1a.max_batch == 256);
    // SGLang: prefill-first, chunked by GPU memory (8192 on an 80 GB H100, 16384 on a B200).
    const auto sg = in({{"name", "sglang"}});
    CHECK(sg.scheduler == SchedulerPolicy::prefill_first);
    CHECK(sg.max_batch_tokens == 8192);
    CHECK(in({{"name", "sglang"}}, Json::object(), "llama-3-8b", "dgx-b200").max_batch_tokens == 16384);
    // What the scenario states wins.
    const auto stated =
        in({{"name", "vllm"}},
           {{"max_batch", 64}, {"max_batch_tokens", 512}, {"cuda_graphs", false}, {"scheduler", "prefill-first"}});
    CHECK(stated.max_batch == 64);
    CHECK(stated.max_batch_tokens == 512);
    CHECK_FALSE(stated.cuda_graphs);
    CHECK(stated.scheduler == SchedulerPolicy::prefill_first);
}

TEST_CASE(
    "prefill-first (vLLM V0) stalls decodes while whole prompts run: a higher TPOT tail and a lower TTFT "
    "than in-flight batching with small chunks (Sarathi-Serve)",
    "[serving][scheduler]") {
    auto run = [](Json extra) {
        Json x = {{"qps", 8.0}, {"requests", 3000}};
        x.update(extra);
        return sim::simulate_serving(serving("llama-3-8b", 1, 1, mixed(x)).serving_job());
    };
    const auto inflight = run({{"scheduler", "inflight"}, {"max_batch_tokens", 512}});
    const auto first = run({{"scheduler", "prefill-first"}});
    CHECK(first.tpot_s.p99 > 1.2 * inflight.tpot_s.p99);
    CHECK(first.ttft_s.p50 < inflight.ttft_s.p50);
}

namespace {

// Writes `text` to a file in the temporary folder and returns its path.
std::string temp_file(const std::string& name, const std::string& text) {
    const auto path = (std::filesystem::temp_directory_path() / name).string();
    std::ofstream(path) << text;
    return path;
}

Json trace_inference(const std::string& path, Json extra = Json::object()) {
    Json in = {{"batching", "continuous"}, {"arrivals", path}, {"max_batch", 64}};
    for (auto it = extra.begin(); it != extra.end(); ++it) in[it.key()] = *it;
    return in;
}

}   // namespace

TEST_CASE("arrivals: a Poisson stream written as a trace replays to the same latencies", "[serving][trace]") {
    const auto poisson = serving("llama-3-8b", 1, 1, mixed({{"qps", 6.0}, {"requests", 800}, {"max_batch", 64}}));
    const auto reqs = sim::request_stream(poisson.inference);
    std::string csv = "arrival_s,input_tokens,output_tokens\n";
    for (const auto& r : reqs) csv += fmt::format("{:.17g},{},{}\n", r.arrival_s, r.input, r.output);
    const auto path = temp_file("llmsim_test_trace.csv", csv);
    const auto trace = serving("llama-3-8b", 1, 1, trace_inference(path));
    REQUIRE(trace.inference.arrivals);
    CHECK(trace.inference.requests == 800);
    // Its own rate: (n - 1) over the span from its first to its last arrival.
    CHECK(trace.inference.qps == Approx(799.0 / (reqs.back().arrival_s - reqs.front().arrival_s)).epsilon(1e-12));
    CHECK(trace.inference.input_dist.mean ==
          Approx(std::accumulate(reqs.begin(), reqs.end(), 0.0,
                                 [](double a, const sim::Request& r) { return a + r.input; }) /
                 800.0));
    const auto a = sim::simulate_serving(poisson.serving_job());
    const auto b = sim::simulate_serving(trace.serving_job());
    CHECK(b.ttft_s.p99 == Approx(a.ttft_s.p99).epsilon(1e-9));
    CHECK(b.tpot_s.p99 == Approx(a.tpot_s.p99).epsilon(1e-9));
    CHECK(b.e2e_latency_s.mean == Approx(a.e2e_latency_s.mean).epsilon(1e-9));
    // qps rescales the times: twice the rate, half the gaps; past its end the trace repeats.
    const auto fast =
        serving("llama-3-8b", 1, 1, trace_inference(path, {{"qps", 2 * trace.inference.qps}, {"requests", 1600}}));
    const auto f = sim::request_stream(fast.inference);
    REQUIRE(f.size() == 1600);
    CHECK(f[10].arrival_s - f[9].arrival_s == Approx(0.5 * (reqs[10].arrival_s - reqs[9].arrival_s)));
    CHECK(f[800].input == reqs[0].input);
    CHECK(f[801].arrival_s - f[800].arrival_s == Approx(f[1].arrival_s - f[0].arrival_s));
    CHECK(f[800].arrival_s > f[799].arrival_s);
    // Echoed with its path, without the keys it replaces.
    const Json echo = to_json(trace.inference);
    CHECK(echo["arrivals"] == path);
    CHECK_FALSE(echo.contains("input_len"));
    CHECK_FALSE(echo.contains("seed"));
}

TEST_CASE("arrivals: Azure's TIMESTAMP,ContextTokens,GeneratedTokens; bad traces name file, line and value",
          "[serving][trace][errors]") {
    const auto azure = temp_file("llmsim_test_azure.csv",
                                 "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                 "2023-11-16 18:15:46.6805900,374,44\n"
                                 "2023-11-16 18:15:47.1805900,396,109\n"
                                 "2023-11-16 18:15:48.9305900,879,7\n");
    const auto s = serving("llama-3-8b", 1, 1, trace_inference(azure));
    const auto r = sim::request_stream(s.inference);
    REQUIRE(r.size() == 3);
    CHECK(r[1].arrival_s - r[0].arrival_s == Approx(0.5));
    CHECK(r[2].arrival_s - r[0].arrival_s == Approx(2.25));
    CHECK(r[2].input == 879);
    CHECK(r[2].output == 7);
    // The 2024 traces' UTC offsets: the time is taken in UTC.
    const auto offsets = temp_file("llmsim_test_azure_tz.csv",
                                   "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                   "2024-05-10 00:00:00.009930+00:00,100,10\n"
                                   "2024-05-10T00:00:01.009930Z,100,10\n"
                                   "2024-05-10 02:00:02.009930+02:00,100,10\n");
    const auto tz = sim::request_stream(serving("llama-3-8b", 1, 1, trace_inference(offsets)).inference);
    REQUIRE(tz.size() == 3);
    CHECK(tz[1].arrival_s - tz[0].arrival_s == Approx(1.0));
    CHECK(tz[2].arrival_s - tz[0].arrival_s == Approx(2.0));
    auto refused = [](const std::string& name, const std::string& text, const std::string& expect, Json extra = {}) {
        const auto path = temp_file(name, text);
        try {
            (void)serving("llama-3-8b", 1, 1, trace_inference(path, extra.is_null() ? Json::object() : extra));
            FAIL("accepted " << name);
        } catch (const ConfigError& e) {
            CHECK_THAT(e.what(), Catch::Contains("/inference/arrivals") || Catch::Contains("/inference/"));
            CHECK_THAT(e.what(), Catch::Contains(expect));
        }
    };
    refused("llmsim_bad1.csv", "time,in,out\n1,2,3\n", "llmsim_bad1.csv:1");
    refused("llmsim_bad2.csv", "arrival_s,input_tokens,output_tokens\n1.0,10,5\n0.5,10,5\n", ":3: \"0.5\"");
    refused("llmsim_bad3.csv", "arrival_s,input_tokens,output_tokens\n0,10,0\n", "output tokens");
    refused("llmsim_bad4.csv", "arrival_s,input_tokens,output_tokens\n0,10,5,7\n", "three comma-separated");
    refused("llmsim_bad5.csv", "arrival_s,input_tokens,output_tokens\n0,0x10,5\n", "\"0x10\"");
    refused("llmsim_bad6.csv", "arrival_s,input_tokens,output_tokens\n", "no requests");
    refused("llmsim_bad7.csv", "arrival_s,input_tokens,output_tokens\n0,10,5\n", "/inference/input_len",
            Json{{"input_len", 100}});
    refused("llmsim_bad8.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-13-16 18:15:46,10,5\n", "a timestamp");
    // Rows all at one instant have no rate to scale: a qps is refused (it was said in the header and not run).
    refused("llmsim_bad9.csv", "arrival_s,input_tokens,output_tokens\n0,10,10\n0,10,10\n",
            "/inference/qps: 5.0: expected no qps with a trace whose rows all arrive at one instant",
            Json{{"qps", 5.0}});
    // A UTF-8 byte-order mark before the header (spreadsheets write one) is read past.
    const auto bom = temp_file("llmsim_test_bom.csv",
                               "\xEF\xBB\xBF"
                               "arrival_s,input_tokens,output_tokens\n0,10,10\n1,20,5\n");
    const auto b = sim::request_stream(serving("llama-3-8b", 1, 1, trace_inference(bom)).inference);
    REQUIRE(b.size() == 2);
    CHECK(b[1].input == 20);
    try {
        (void)serving("llama-3-8b", 1, 1, trace_inference("/nonexistent/trace.csv"));
        FAIL("accepted a missing file");
    } catch (const ConfigError& e) {
        CHECK_THAT(e.what(), Catch::Contains("cannot open"));
    }
}

TEST_CASE("every router has one registry row", "[serving][router]") {
    for (const auto& name : router_policy_names()) {
        const auto p = router_policy_from_string(name);
        REQUIRE(p);
        CHECK(to_string(*p) == name);
        CHECK(sim::router(*p).policy == *p);
        CHECK_FALSE(sim::router(*p).contract.empty());
    }
    CHECK(sim::routers().size() == router_policy_names().size());
    CHECK_FALSE(sim::router(RouterPolicy::round_robin).uses_load);
    // Least-requests takes the first replica with the fewest; power of two the fewer of its two draws.
    const std::vector<sim::ReplicaLoad> load = {{3, 900}, {1, 5000}, {1, 100}, {2, 50}};
    CHECK(sim::router(RouterPolicy::least_requests).route(load, 0, 0) == 1);
    CHECK(sim::router(RouterPolicy::least_tokens).route(load, 0, 0) == 3);
    CHECK(sim::router(RouterPolicy::round_robin).route(load, 6, 0) == 2);
    // Draw (0, 2): replicas 0 and 3 (the second index skips the first); replica 3 holds fewer.
    CHECK(sim::router(RouterPolicy::power_of_two).route(load, 0, 2) == 3);
    CHECK(sim::router(RouterPolicy::power_of_two).route(load, 0, (std::uint64_t{1} << 32U) | 0U) == 1);
}

TEST_CASE("routing: one replica or every request at once routes as round robin does", "[serving][router]") {
    for (const auto& name : router_policy_names()) {
        INFO(name);
        // One replica: nothing to choose.
        const auto rr1 = sim::simulate_serving(serving("llama-3-8b", 1, 1, mixed({{"qps", 4.0}})).serving_job());
        const auto r1 =
            sim::simulate_serving(serving("llama-3-8b", 1, 1, mixed({{"qps", 4.0}, {"router", name}})).serving_job());
        CHECK(r1.ttft_s.p99 == rr1.ttft_s.p99);
        CHECK(r1.tpot_s.mean == rr1.tpot_s.mean);
        CHECK(r1.requests_per_s == rr1.requests_per_s);
    }
    // Offline on four replicas: every request arrives at t = 0, so the least loaded is the next in turn.
    const auto rr = sim::simulate_serving(serving("llama-3-8b", 4, 1, mixed()).serving_job());
    const auto lr =
        sim::simulate_serving(serving("llama-3-8b", 4, 1, mixed({{"router", "least-requests"}})).serving_job());
    CHECK(lr.ttft_s.p99 == Approx(rr.ttft_s.p99).epsilon(1e-12));
    CHECK(lr.output_tokens_per_s == Approx(rr.output_tokens_per_s).epsilon(1e-12));
    CHECK(lr.makespan_s == Approx(rr.makespan_s).epsilon(1e-12));
}

TEST_CASE("routing by load shortens the tails of a mixed stream near capacity; power of two in between",
          "[serving][router]") {
    // Eight Llama-3-8B replicas at ~80% of their capacity, lengths spread over two decades.
    auto run = [](const char* router, std::uint64_t seed) {
        return sim::simulate_serving(
            serving("llama-3-8b", 8, 1,
                    mixed({{"qps", 120.0}, {"requests", 24000}, {"router", router}, {"seed", seed}}))
                .serving_job());
    };
    for (std::uint64_t seed : {1U, 2U}) {
        INFO("seed " << seed);
        const auto rr = run("round-robin", seed), lr = run("least-requests", seed), lt = run("least-tokens", seed),
                   p2 = run("power-of-two", seed);
        INFO("TPOT p99 rr " << rr.tpot_s.p99 << " lr " << lr.tpot_s.p99 << " lt " << lt.tpot_s.p99 << " p2 "
                            << p2.tpot_s.p99);
        INFO("TTFT p99 rr " << rr.ttft_s.p99 << " lr " << lr.ttft_s.p99 << " lt " << lt.ttft_s.p99 << " p2 "
                            << p2.ttft_s.p99);
        CHECK(rr.steadiness.keeps_up);
        CHECK(lr.tpot_s.p99 < 0.95 * rr.tpot_s.p99);
        CHECK(lt.tpot_s.p99 < 0.95 * rr.tpot_s.p99);
        CHECK(p2.tpot_s.p99 < rr.tpot_s.p99);
        CHECK(p2.tpot_s.p99 > lr.tpot_s.p99);
        CHECK(lr.e2e_latency_s.p99 < rr.e2e_latency_s.p99);
        // The same requests are served: the rate does not depend on the router below capacity.
        CHECK(lr.requests_per_s == Approx(rr.requests_per_s).epsilon(0.02));
    }
    // Power of two draws from a stream of its own: the same seed gives the same run.
    CHECK(run("power-of-two", 3).ttft_s.p99 == run("power-of-two", 3).ttft_s.p99);
}

TEST_CASE("a router reading the load simulates every replica, and its work is bounded", "[serving][router]") {
    auto s = serving("llama-3-8b", 4, 1, mixed({{"qps", 40.0}, {"router", "least-requests"}}));
    sim::ServingOptions o;
    o.sample_replica = 1;   // round robin only: ignored here
    CHECK(sim::simulate_serving(s.serving_job(), o).sampled_replica == -1);
    o.max_sequence_steps = 4.0 * 1500 - 1;   // replicas x requests past it
    try {
        (void)sim::simulate_serving(s.serving_job(), o);
        FAIL("expected the router's work limit");
    } catch (const ConfigError& e) {
        CHECK(std::string(e.what()).find("/inference/router") != std::string::npos);
    }
}

TEST_CASE("arrival_cv: Gamma gaps keep the rate and take the stated spread; 1 is the Poisson stream",
          "[serving][bursts]") {
    for (double cv : {0.0, 0.5, 1.0, 2.0, 3.0, 8.0}) {
        INFO("cv " << cv);
        auto s = serving("llama-3-8b", 1, 1, mixed({{"qps", 5.0}, {"requests", 200000}, {"arrival_cv", cv}}));
        const auto reqs = sim::request_stream(s.inference);
        double sum = 0, sq = 0;
        for (std::size_t i = 1; i < reqs.size(); ++i) {
            const double g = reqs[i].arrival_s - reqs[i - 1].arrival_s;
            sum += g;
            sq += g * g;
        }
        const double n = static_cast<double>(reqs.size() - 1), mean = sum / n;
        const double sd = std::sqrt(std::max(0.0, sq / n - mean * mean));
        CHECK(mean == Approx(0.2).epsilon(cv > 4 ? 0.08 : 0.02));
        CHECK(sd / mean == Approx(cv).margin(0.01).epsilon(cv > 4 ? 0.15 : 0.03));
    }
    // cv 1 draws the stream a Poisson stream always drew (one uniform per gap): the same arrivals.
    auto poisson = serving("llama-3-8b", 1, 1, mixed({{"qps", 5.0}}));
    auto one = serving("llama-3-8b", 1, 1, mixed({{"qps", 5.0}, {"arrival_cv", 1}}));
    CHECK(sim::request_stream(poisson.inference).back().arrival_s ==
          sim::request_stream(one.inference).back().arrival_s);
}

TEST_CASE("bursty arrivals lengthen the tails at the same mean rate and lower the capacity", "[serving][bursts]") {
    auto at = [](double cv) {
        return sim::simulate_serving(
            serving("llama-3-8b", 1, 1, mixed({{"qps", 8.0}, {"requests", 6000}, {"arrival_cv", cv}})).serving_job());
    };
    const auto even = at(0.0), poisson = at(1.0), bursty = at(4.0);
    INFO("TTFT p99 " << even.ttft_s.p99 << " " << poisson.ttft_s.p99 << " " << bursty.ttft_s.p99);
    CHECK(even.ttft_s.p99 < poisson.ttft_s.p99);
    CHECK(bursty.ttft_s.p99 > 2 * poisson.ttft_s.p99);
    CHECK(bursty.requests_per_s == Approx(poisson.requests_per_s).epsilon(0.1));
}

TEST_CASE("arrival_cv: strict reader", "[serving][bursts][errors]") {
    auto err = [](Json inference) {
        try {
            (void)serving("llama-3-8b", 1, 1, std::move(inference));
        } catch (const ConfigError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(err(mixed({{"qps", 5.0}, {"arrival_cv", -1}})).find("/inference/arrival_cv") != std::string::npos);
    CHECK(err(mixed({{"qps", 5.0}, {"arrival_cv", 11}})).find("/inference/arrival_cv") != std::string::npos);
    CHECK(err(mixed({{"arrival_cv", 2}})).find("/inference/arrival_cv") != std::string::npos);   // offline
    CHECK(err(mixed({{"qps", "max"}, {"arrival_cv", 2}, {"slo", {{"ttft_p99_s", 1}}}})).empty());
}

TEST_CASE("an SLO judges the percentile it names: p90 targets between the measured p90 and p99", "[serving][slo]") {
    Json in = mixed({{"qps", 4.0}});
    const auto base = sim::simulate_serving(serving("llama-3-8b", 1, 1, in).serving_job());
    REQUIRE(base.ttft_s.p99 > base.ttft_s.p90 * 1.01);
    REQUIRE(base.tpot_s.p99 > base.tpot_s.p90 * 1.01);
    const double ttft = 0.5 * (base.ttft_s.p90 + base.ttft_s.p99), tpot = 0.5 * (base.tpot_s.p90 + base.tpot_s.p99);
    auto with = [&](Json slo) {
        Json j = in;
        j["slo"] = std::move(slo);
        return sim::simulate_serving(serving("llama-3-8b", 1, 1, j).serving_job());
    };
    CHECK(with({{"ttft_p90_s", ttft}, {"tpot_p90_s", tpot}}).slo_met);
    CHECK_FALSE(with({{"ttft_p99_s", ttft}}).slo_met);
    CHECK_FALSE(with({{"tpot_p99_s", tpot}}).slo_met);
    // Every stated target in order (TTFT p90, TTFT p99, TPOT p90, TPOT p99), each miss with its measure.
    ServingSlo slo;
    slo.ttft_p99_s = ttft;
    slo.tpot_p90_s = tpot;
    slo.ttft_p90_s = 10.0;
    REQUIRE(slo.targets().size() == 3);
    CHECK(slo.targets()[0].name() == "TTFT p90");
    CHECK(slo.targets()[2].name() == "TPOT p90");
    const auto misses = sim::slo_misses(slo, base.ttft_s, base.tpot_s);
    REQUIRE(misses.size() == 1);
    CHECK(misses[0].target.name() == "TTFT p99");
    CHECK(misses[0].measured_s == base.ttft_s.p99);
    CHECK(sim::slo_ratio(slo, true, base.ttft_s, base.tpot_s) == Approx(base.ttft_s.p99 / ttft));
    CHECK(sim::slo_ratio(slo, false, base.ttft_s, base.tpot_s) == Approx(base.tpot_s.p90 / tpot));
}

TEST_CASE("fast decode steps: the same stream, bit for bit, as the per-sequence loop", "[serving][sim]") {
    // Reservation and on-demand admission (KV blocks taken as contexts cross them, preemptions under
    // pressure), chunked prefill, shared prefixes, a router over replicas and an autoscaled fleet.
    auto same = [](const Scenario& s) {
        sim::ServingOptions slow;
        slow.fast_decode_steps = false;
        const auto a = sim::simulate_serving(s.serving_job());
        const auto b = sim::simulate_serving(s.serving_job(), slow);
        for (const auto& [x, y] : {std::pair{a.ttft_s, b.ttft_s},
                                   {a.tpot_s, b.tpot_s},
                                   {a.e2e_latency_s, b.e2e_latency_s},
                                   {a.queue_s, b.queue_s}}) {
            CHECK(x.mean == y.mean);
            CHECK(x.p50 == y.p50);
            CHECK(x.p99 == y.p99);
            CHECK(x.max == y.max);
        }
        CHECK(a.makespan_s == b.makespan_s);
        CHECK(a.mean_batch == b.mean_batch);
        CHECK(a.mean_in_system == b.mean_in_system);
        CHECK(a.kv_occupancy_mean == b.kv_occupancy_mean);
        CHECK(a.kv_occupancy_max == b.kv_occupancy_max);
        CHECK(a.iterations == b.iterations);
        CHECK(a.preemptions == b.preemptions);
        CHECK(a.peak_batch == b.peak_batch);
        CHECK(a.prefix_hit_fraction == b.prefix_hit_fraction);
        CHECK(a.decode_iteration_s == b.decode_iteration_s);
        CHECK(a.autoscale.has_value() == b.autoscale.has_value());
        if (a.autoscale && b.autoscale) CHECK(a.autoscale->gpu_hours == b.autoscale->gpu_hours);
        return a;
    };
    const auto reserve = same(serving("llama-3-8b", 2, 1, mixed({{"qps", 4}, {"router", "least-requests"}})));
    CHECK(reserve.preemptions == 0);
    // On demand on a small cache: blocks taken step by step, sequences preempted and recomputed.
    Json tight = mixed({{"qps", 12}, {"kv_admission", "on_demand"}, {"max_batch_tokens", 2048}});
    Json j = {{"model", "llama-3-8b"},
              {"system", "dgx-a100-40gb"},
              {"gpus", 1},
              {"parallel", {{"tp", 1}, {"pp", 1}}},
              {"inference", tight}};
    const auto pressed = same(parse_scenario(j));
    CHECK(pressed.preemptions > 0);
    same(serving(
        "llama-3-8b", 1, 1,
        mixed({{"qps", 3}, {"kv_admission", "on_demand"}, {"shared_prefix", {{"groups", 4}, {"tokens", 512}}}})));
    // A disaggregated deployment: the decode pool admits requests with their KV cache, stepping them at once.
    same(serving("llama-3-8b", 3, 1, mixed({{"qps", 6}, {"disaggregation", {{"prefill_gpus", 1}}}})));
    same(serving("llama-3-8b", 4, 1,
                 mixed({{"qps", 2},
                        {"router", "least-requests"},
                        {"autoscale", {{"target_outstanding", 8}, {"storage_GBps", 2}, {"engine_start_s", 30}}}})));
}
