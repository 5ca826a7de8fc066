// Plain, validated structs that every model in llmsim reads. Parsed once from JSON at the edge
// (hardware_db/database.cpp, hardware_db/scenario.cpp); no model ever sees JSON.
// Units are in the names: _bytes, _s, _us, _flops, _GBps (1e9 bytes/s), _GiB (2^30 bytes).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hardware_db/units.hpp"
#include "schedules/schedule.hpp"

namespace llmsim {

// ---------------------------------------------------------------------------------------------
// Numeric formats
// ---------------------------------------------------------------------------------------------
enum class Precision { fp32, tf32, bf16, fp16, fp8, int8, int4, fp4, nf4 };
inline constexpr int kPrecisionCount = 9;

const char* to_string(Precision p);
std::optional<Precision> precision_from_string(const std::string& s);
// Storage bytes of one element (nf4/int4/fp4: 0.5; scales are accounted separately).
double precision_bytes(Precision p);
// Bytes of a weight or activation element in training at this precision: 4 for fp32, else 2 (FP8
// training keeps 16-bit weights and activations; its FP8 GEMM inputs are cast copies, counted apart).
double training_element_bytes(Precision training_precision);

// ---------------------------------------------------------------------------------------------
// Hardware
// ---------------------------------------------------------------------------------------------

// Where a number came from: a datasheet, a paper, a calibration run or a user override.
struct Provenance {
    std::string source;   // e.g. "NVIDIA H100 datasheet (2023), dense BF16"
    std::string kind;     // "datasheet" | "paper" | "measurement" | "calibration" | "override" | "derived"
};

// Achievable-throughput model of one accelerator (see docs/step-time-model.md). Data, not code:
// defaults live in the accelerator JSON with sources; `llmsim calibrate fit` replaces them.
struct EfficiencyModel {
    // Fraction of dense peak a large, well-shaped GEMM reaches, per precision (0 = not set).
    std::array<double, kPrecisionCount> gemm_max{};
    // Output tile the GEMM library uses on this chip (wave/tile quantization).
    int gemm_tile_m = 128;
    int gemm_tile_n = 128;
    // Work per SM per wave below which a GEMM cannot hide its prologue/epilogue: efficiency
    // falls as k / (k + k½) with the reduction depth k (elements); k½ is this depth at the dense
    // 16-bit peak, scaled up for faster precisions (gemm_k_half in cost_models/roofline).
    double gemm_k_half = 64;
    // A precision's own measured depth (`llmsim calibrate fit` of its GEMMs), which replaces the scaled
    // 16-bit one for that precision; 0 = not measured.
    std::array<double, kPrecisionCount> gemm_k_half_by{};
    // Fraction of HBM bandwidth that streaming (elementwise, norm) kernels reach.
    double hbm_efficiency = 0.85;
    // FlashAttention kernels: fraction of dense peak reached, forward and backward.
    double attention_fwd = 0.6;
    double attention_bwd = 0.5;
    // The FlashAttention-2 kernels that PyTorch-native frameworks run (SDPA's flash backend,
    // flash-attn 2) where they differ from the best fused kernel above (Hopper: FlashAttention-3 and
    // cuDNN reach 0.55-0.62 of the peak, FlashAttention-2 0.31-0.35). 0: the same as attention_fwd/bwd.
    double fa2_attention_fwd = 0;
    double fa2_attention_bwd = 0;
    // Per-kernel launch and scheduling overhead (us).
    double kernel_launch_us = 4.0;
    // Fraction of isolated-kernel throughput that kernels sustain inside an end-to-end multi-GPU
    // training step (clocks under sustained all-GPU load, SMs and HBM shared with communication
    // kernels, framework gaps between kernels). Calibrated on published runs
    // (`llmsim validate --fit-sustained`), see docs/accuracy.md.
    double sustained_fraction = 1.0;
};

struct AcceleratorSpec {
    std::string name;                                   // database key, e.g. "h100-sxm"
    std::string display_name;                           // "NVIDIA H100 SXM5 80GB"
    std::string vendor;                                 // "nvidia" | "google"
    std::array<double, kPrecisionCount> peak_flops{};   // dense, per second; 0 = unsupported
    double hbm_capacity_bytes = 0;
    double hbm_GBps = 0;
    int sm_count = 0;            // SMs (NVIDIA) or TensorCores (TPU)
    double l2_cache_bytes = 0;   // L2 (NVIDIA) or CMEM/VMEM (TPU)
    double tdp_W = 0;
    EfficiencyModel efficiency;
    std::map<std::string, Provenance> provenance;   // key: field path ("peak_tflops.bf16")

    double peak(Precision p) const { return peak_flops[static_cast<int>(p)]; }
    // The 16-bit tensor precision a kernel falls back to (fp8 and fp32 attention, a GEMM at a precision
    // the chip lacks): bf16 where the chip has it, else fp16 (V100, T4-class parts).
    Precision half_precision() const { return peak(Precision::bf16) > 0 ? Precision::bf16 : Precision::fp16; }
    double gemm_max(Precision p) const { return efficiency.gemm_max[static_cast<int>(p)]; }
};

// A cluster of accelerators and its network. Bandwidths are per device and per direction.
struct SystemSpec {
    std::string name;
    std::string display_name;
    AcceleratorSpec gpu;
    int gpus_per_node = 8;    // devices sharing a host (and its NICs)
    int scaleup_domain = 8;   // devices on one NVLink/NVSwitch (or ICI) fabric
    // Scale-up fabric (NVLink via NVSwitch, or ICI): per device, per direction.
    double intra_node_GBps = 0;
    double intra_node_latency_us = 0;     // per hop
    double intra_node_efficiency = 0.8;   // achievable busbw / link bandwidth
    // A point-to-point scale-up mesh without a switch (AMD's xGMI): intra_node_GBps is this many links, one per
    // peer, so a collective among k of the domain's devices drives min(k - 1, links) of them (a pair: one).
    // 0: switched (NVSwitch), where every device reaches any group at its whole bandwidth.
    int scaleup_mesh_links = 0;
    bool nvls = false;      // NVLink SHARP (in-switch reduction)
    double nvls_GBps = 0;   // achievable all-reduce busbw with NVLS
    // Scale-out network: per device share of the node's NICs, per direction.
    double inter_node_GBps = 0;
    double inter_node_latency_us = 0;
    double inter_node_efficiency = 0.9;
    int nics_per_node = 0;
    double nic_Gbps = 0;
    // TPU torus (empty for switched systems).
    std::vector<int> torus_dims;   // e.g. {16,16,16} for a 4096-chip v4 slice
    double ici_link_GBps = 0;      // one link, one direction
    int ici_links_per_chip = 0;
    bool torus_wraparound = true;
    double dcn_GBps = 0;                       // per chip, between slices/pods
    double collective_base_latency_us = 8.4;   // fixed cost of launching one collective
    // Share of the compute throughput a collective takes while it overlaps compute (its kernels
    // occupy SMs and HBM bandwidth): on the scale-up fabric and on the network.
    double intra_node_comm_sm_fraction = 0.15;
    double inter_node_comm_sm_fraction = 0.02;
    // Host side (offload).
    double host_memory_bytes = 0;   // per node
    double host_memory_GBps = 0;    // per node, theoretical DRAM bandwidth (CPU optimizer)
    double pcie_GBps = 0;           // per device, per direction
    std::map<std::string, Provenance> provenance;
    std::string profile;   // calibration profile applied ("" if none)

    bool is_torus() const { return !torus_dims.empty(); }
    // TPU systems train under XLA's SPMD partitioner, which keeps the activations sharded over the model
    // axis between the tensor-parallel regions too (GSPMD's "2D finalized" layout, Xu et al. 2021,
    // arXiv 2105.04663, Sec. 3.3; PaLM trained with it, Chowdhery et al. 2022, Sec. 4): Megatron's
    // sequence parallelism in memory and communication, whatever parallel.sequence_parallel says
    // (docs/memory-model.md).
    bool shards_activations_over_tp() const { return is_torus(); }
};

// ---------------------------------------------------------------------------------------------
// Model
// ---------------------------------------------------------------------------------------------
enum class MlpKind { gelu, swiglu };
enum class NormKind { layernorm, rmsnorm };
enum class PositionKind { learned, rope, alibi, relative, none };

struct MoeSpec {
    int experts = 0;   // routed experts (0 = dense model)
    int top_k = 0;
    std::int64_t expert_ffn_hidden = 0;
    int shared_experts = 0;
    std::int64_t shared_expert_ffn_hidden = 0;   // per shared expert (default expert_ffn_hidden)
    int dense_layers = 0;                        // leading layers with a dense MLP (ffn_hidden)
    bool enabled() const { return experts > 0; }
};

// Multi-head latent attention (DeepSeek-V2/V3, Kimi K2): each token stores one latent of kv_lora_rank
// plus a decoupled RoPE key of qk_rope_head_dim shared by all heads; K and V of every head are
// up-projected from the latent, Q from a latent of q_lora_rank (0: projected from the hidden state
// directly). With MLA, head_dim is the query/key head dimension (nope + rope), v_head_dim the value
// head dimension, and kv_heads = heads.
struct MlaSpec {
    std::int64_t q_lora_rank = 0;
    std::int64_t kv_lora_rank = 0;   // 0: not MLA
    std::int64_t qk_rope_head_dim = 0;
    std::int64_t v_head_dim = 0;
    bool enabled() const { return kv_lora_rank > 0; }
};

struct ModelSpec {
    std::string name;
    int layers = 0;
    std::int64_t hidden = 0;
    int heads = 0;
    int kv_heads = 0;
    std::int64_t head_dim = 0;
    std::int64_t ffn_hidden = 0;
    std::int64_t vocab = 0;
    MlpKind mlp = MlpKind::gelu;
    NormKind norm = NormKind::layernorm;
    PositionKind position = PositionKind::learned;
    std::int64_t max_seq_len = 2048;   // learned position table size / context length
    // max_seq_len is the source's (the zoo file or the config.json states it; a model object that does not
    // leaves the 2048 default unstated): only a stated context bounds a scenario's sequences.
    bool max_seq_len_stated = false;
    bool tied_embeddings = false;
    bool bias = true;              // biases in linear layers (GPT-2/3 style)
    bool qkv_bias = false;         // bias on QKV only (Qwen2 style); implied by bias
    bool parallel_block = false;   // attention and MLP share one norm (GPT-J, PaLM, Falcon)
    bool dropout = true;           // dropout masks are stored as activations
    MoeSpec moe;
    MlaSpec mla;
    std::string display_name;
    std::string source;                       // where the shape comes from
    std::optional<double> published_params;   // as the authors state it (zoo entries)
    std::optional<double> published_active_params;

    std::int64_t q_dim() const { return static_cast<std::int64_t>(heads) * head_dim; }
    std::int64_t kv_dim() const { return static_cast<std::int64_t>(kv_heads) * head_dim; }
    // Value head dimension (MLA: v_head_dim; else head_dim) and the attention output width heads·d_v,
    // the input of the output projection.
    std::int64_t v_head() const { return mla.enabled() ? mla.v_head_dim : head_dim; }
    std::int64_t v_dim() const { return static_cast<std::int64_t>(heads) * v_head(); }
    // MLA: the query/key width without the shared RoPE part (head_dim − qk_rope_head_dim).
    std::int64_t qk_nope_head_dim() const { return head_dim - mla.qk_rope_head_dim; }
    bool is_moe_layer(int layer) const { return moe.enabled() && layer >= moe.dense_layers; }
    int moe_layers() const { return moe.enabled() ? layers - moe.dense_layers : 0; }
    int dense_mlp_layers() const { return layers - moe_layers(); }
};

// ---------------------------------------------------------------------------------------------
// Parallel layout and training settings
// ---------------------------------------------------------------------------------------------
enum class Recompute { none, selective, full };
enum class Offload { none, optimizer, optimizer_params };
// The training framework a scenario names (parallel.framework), for the layouts only some allow and the
// kernels each runs. llm-foundry: MosaicML's Composer trainer with PyTorch FSDP (no pipeline stages).
enum class Framework { unspecified, megatron, deepspeed, torchtitan, llm_foundry };
enum class Optimizer { adam, sgd, adafactor };
// The optimizer's copy of the weights in 16-bit or FP8 training: fp32 (Megatron's distributed optimizer,
// DeepSpeed), the 16-bit remainders that complete the bf16 weights to fp32 (Apex DistributedFusedAdam
// store_param_remainders, NeMo 1.x's default; Transformer Engine FusedAdam), or none (the optimizer
// updates the 16-bit weights themselves).
enum class MasterWeights { fp32, remainder, none };

const char* to_string(Recompute r);
const char* to_string(Offload o);
const char* to_string(Framework f);
// The names a scenario may give (every framework but `unspecified`, in the enum's order): one list for the
// reader, the key table and the command-line help.
const std::vector<std::string>& framework_names();
std::optional<Framework> framework_from_string(std::string_view name);
// The frameworks that train PyTorch modules as written (torchtitan, DeepSpeed with Hugging Face models,
// llm-foundry): their attention is uses_fa2_attention's, and without torch.compile their norms, RoPE and
// activations run as eager PyTorch ops (eager_elementwise). Megatron-LM/NeMo (and an unnamed framework)
// run Transformer Engine's and Apex's fused kernels.
bool pytorch_module_framework(Framework f);
const char* to_string(Optimizer o);
const char* to_string(MasterWeights w);
const char* to_string(MlpKind m);

struct ParallelConfig {
    int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, vp = 1;
    bool sequence_parallel = false;
    int zero = 0;
    const ScheduleDef* schedule = &default_schedule();   // a pointer into the registry (schedules/)
    // Overlap policies (Megatron-LM flags of the same names).
    bool overlap_grad_reduce = true;
    bool overlap_param_gather = true;
    bool tp_comm_overlap = false;
    Framework framework = Framework::unspecified;
    // torch.compile (torchtitan --training.compile, Composer's compile_config, the HF Trainer's
    // torch_compile): read only under a pytorch_module_framework; false is those frameworks' default.
    bool torch_compile = false;
    // The attention kernel PyTorch's scaled_dot_product_attention runs under a pytorch_module_framework:
    // FlashAttention-2 (true: what SDPA ran for the frameworks' published runs), or the chip's best fused
    // kernel (false: cuDNN's on Hopper, which PyTorch 2.11's SDPA takes; calibrate/probe/layer_truth.py's
    // layers, docs/calibration.md). Not a scenario key: `calibrate check` prices its truth files with it.
    bool sdpa_fa2 = true;

    int model_parallel() const { return tp * pp * cp; }
    int world() const { return tp * pp * cp * dp; }
};

// Whether the layer's norms, RoPE and MLP activation run as eager PyTorch ops, one kernel per op with
// fp32 intermediates (a pytorch_module_framework without torch.compile), rather than fused kernels.
bool eager_elementwise(const ParallelConfig& p);
// Whether a layout's attention runs the FlashAttention-2 class of kernels (PyTorch SDPA / flash-attn 2:
// torchtitan, DeepSpeed with Hugging Face models or Megatron-DeepSpeed; llm-foundry's MPT attends with
// flash-attn 2 or its Triton FlashAttention kernel, neither written for Hopper) rather than Transformer
// Engine's fused attention (cuDNN / FlashAttention-3 on Hopper; Megatron-LM, NeMo, and an unnamed
// framework). ParallelConfig::sdpa_fa2 false gives PyTorch's SDPA the chip's best kernel too.
bool uses_fa2_attention(const ParallelConfig& p);
// The framework as reports name it: "" when unspecified, else its name, with " (eager)" or
// " + torch.compile" for a pytorch_module_framework.
std::string framework_label(const ParallelConfig& p);

// Parameter-efficient fine-tuning.
struct FinetuneConfig {
    enum class Method { none, lora, qlora } method = Method::none;
    int rank = 16;
    // Target matrices: q, k, v, o, gate, up, down (Hugging Face PEFT names without _proj).
    std::vector<std::string> targets{"q", "k", "v", "o"};
};

// RLHF (PPO): models resident on the same GPUs besides the trained actor.
struct RlhfConfig {
    bool enabled = false;
    std::optional<ModelSpec> critic;      // trained (weights, grads, optimizer); default = actor
    std::optional<ModelSpec> reference;   // frozen; default = actor
    std::optional<ModelSpec> reward;      // frozen; default = critic
    // Each PPO sequence is prompt_len prompt tokens plus seq_len − prompt_len generated ones.
    std::int64_t prompt_len = 0;   // 0: seq_len / 2 (DeepSpeed-Chat's 256 + 256 default)
    int ppo_epochs = 1;            // passes of actor and critic training over each rollout batch
    std::int64_t prompt_tokens(std::int64_t seq_len) const { return prompt_len > 0 ? prompt_len : seq_len / 2; }
};

struct TrainingConfig {
    std::int64_t seq_len = 2048;
    std::int64_t micro_batch = 1;
    std::int64_t global_batch = 1;
    Precision precision = Precision::bf16;
    Precision grad_precision = Precision::fp32;   // Megatron keeps fp32 main grads
    Recompute recompute = Recompute::none;
    // Megatron's --recompute-method block --recompute-num-layers N: with `recompute: full`, only the first
    // N transformer layers of every model chunk are recomputed, the others keep all their activations
    // (0: every layer, Megatron's uniform method with one layer per checkpoint).
    int recompute_num_layers = 0;
    // Megatron-Core's cpu_offloading_num_layers: the activations of the first N transformer layers go to
    // host memory during forward and come back for backward (pp 1 and no recompute, as Megatron-Core
    // requires; 0: none).
    int activation_offload_layers = 0;
    // FP8 training keeps the transformer layers' Linear weights in FP8 as the model parameters (Megatron's
    // --fp8-param-gather, Transformer Engine's fp8_model_init): 1 byte per weight instead of a 16-bit weight
    // beside its FP8 copy, and the parameter all-gathers move FP8.
    bool fp8_params = false;
    bool flash_attention = true;
    Optimizer optimizer = Optimizer::adam;
    // Adam's m and v (SGD's momentum) precision: Megatron-Core's precision-aware optimizer
    // (--exp-avg-dtype, --exp-avg-sq-dtype), DeepSeek-V3's BF16 moments; fp32 by default.
    Precision optimizer_state_precision = Precision::fp32;
    MasterWeights master_weights = MasterWeights::fp32;
    // Which of grad_precision and master_weights the scenario left unstated (set by the scenario reader;
    // false for configurations built in code): resolve_memory_levers (cost_models/memory) may then turn on
    // the memory levers the frameworks' recipes use when the layout does not fit with the defaults, and
    // records here the ones it turned on, which every report names as assumed (docs/memory-model.md).
    bool grad_precision_unstated = false;
    bool master_weights_unstated = false;
    bool assumed_master_remainders = false;
    bool assumed_bf16_grads = false;
    Offload offload = Offload::none;
    double runtime_reserve_bytes = 1.0 * kGiB;   // CUDA context, cuBLAS/NCCL workspaces
    double fragmentation_fraction = 0.05;        // allocator slack on dynamic memory
    FinetuneConfig finetune;
    RlhfConfig rlhf;
    std::optional<double> token_budget;   // tokens to train on (days, GPU-hours)
};

// A request length: fixed (every request `mean` tokens) or drawn from a distribution restricted to
// [min, max] whose lengths have the stated mean and stdev (sim/length_dist.hpp), rounded to a whole
// token (at least 1).
struct LengthDist {
    enum class Kind { fixed, normal, uniform, exponential, lognormal };
    Kind kind = Kind::fixed;
    double mean = 128, stdev = 0, min = 1, max = 1e9;
    bool is_fixed() const { return kind == Kind::fixed || (stdev <= 0 && kind != Kind::exponential); }
};

// Speculative decoding: a draft model proposing `tokens` tokens per target step, each accepted with
// probability `acceptance`; or a method (mtp, eagle, ngram) with the mean accepted length given.
struct SpeculativeConfig {
    bool enabled = false;
    std::string method = "draft";   // "draft" | "mtp" | "eagle" | "ngram"
    std::optional<ModelSpec> draft_model;
    int tokens = 4;                            // proposed per target step
    double acceptance = 0.7;                   // per-token acceptance (draft)
    std::optional<double> acceptance_length;   // mean tokens per target step (methods)
};

// Latency targets of a serving scenario (inference.slo): 99th percentiles (MLPerf's), 90th (DistServe's,
// Splitwise's), either or both, for TTFT and TPOT.
struct ServingSlo {
    std::optional<double> ttft_p99_s, tpot_p99_s, ttft_p90_s, tpot_p90_s;
    bool any() const { return ttft_p99_s || tpot_p99_s || ttft_p90_s || tpot_p90_s; }
    // One stated target: TTFT or TPOT, its percentile (90 or 99), seconds; "TTFT p99" as `name`.
    struct Target {
        bool ttft = true;
        int percentile = 99;
        double seconds = 0;
        std::string name() const;
    };
    std::vector<Target> targets() const;   // the stated ones: TTFT p90, TTFT p99, TPOT p90, TPOT p99
    bool has_ttft() const { return ttft_p99_s || ttft_p90_s; }
};

// The serving engine a deployment runs (inference.engine): its name and release, and the behaviours of
// that release which move the answer, resolved once by the engine registry (hardware_db/engines.hpp,
// docs/serving.md "Engines"); the cost models and the simulator read only the resolved fields.
enum class EngineKind { tensorrt_llm, vllm, sglang };
struct EngineVersion {
    int major = 0, minor = 0, patch = 0;
    friend auto operator<=>(const EngineVersion&, const EngineVersion&) = default;
};
struct EngineSpec {
    EngineKind kind = EngineKind::tensorrt_llm;
    std::optional<EngineVersion> version;   // absent: a current release
    bool stated = false;                    // the scenario named the engine (else the default, echoed as such)
};
const char* to_string(EngineKind e);

// `batching`: static (one batch of `batch` sequences, or a stream admitted batch by batch) or
// continuous (iteration-level scheduling of a request stream).
enum class Batching { static_batches, continuous };
const char* to_string(Batching b);
// How a replica composes an iteration from its running and waiting requests (sim/scheduler registry,
// docs/serving.md "Engines"): in-flight batching (decodes first, then prompt chunks or whole prompts
// within one token budget: TensorRT-LLM, vLLM V1, Sarathi-Serve) or prefill-first (an iteration of
// prompts whenever one can be admitted, decodes only otherwise: vLLM V0, SGLang).
enum class SchedulerPolicy { inflight, prefill_first };
const char* to_string(SchedulerPolicy p);
const std::vector<std::string>& scheduler_policy_names();
std::optional<SchedulerPolicy> scheduler_policy_from_string(std::string_view name);
// How the requests of a stream are spread over a deployment's replicas (sim/router registry,
// docs/serving.md "Routing"): in turn (round robin), to the replica with the fewest unfinished requests
// or tokens, or to the less loaded of two drawn at random (power of two choices).
enum class RouterPolicy { round_robin, least_requests, least_tokens, power_of_two, cache_aware };
const char* to_string(RouterPolicy p);
const std::vector<std::string>& router_policy_names();
std::optional<RouterPolicy> router_policy_from_string(std::string_view name);
// How decode attention reads a grouped-query model's KV cache: once per KV head for its group of query
// heads (TensorRT-LLM's XQA, FlashInfer, FlashAttention decode), or once per query head (TensorRT-LLM's
// masked multi-head attention before XQA: one thread block per query head).
enum class DecodeAttention { grouped, per_query_head };

// TensorRT-LLM's max_num_tokens default (BuildConfig, 0.11+; release notes 0.11.0): the token budget of
// the default engine's iterations, which a whole prompt must fit without chunked context.
inline constexpr double kTensorRtLlmMaxNumTokens = 8192;

// A request of an arrival trace (inference.arrivals, hardware_db/arrivals.hpp): when it arrived
// (seconds from the trace's first request) and its prompt and output lengths.
struct TraceRequest {
    double arrival_s = 0;
    std::int32_t input = 0, output = 0;
};
struct ArrivalTrace {
    std::string path;                 // as the scenario names it
    std::vector<TraceRequest> rows;   // in arrival order, the first at 0
    // Requests per second of its first n rows ((n − 1) / their span; 0 when they arrive at once).
    [[nodiscard]] double rate_qps(std::size_t n) const {
        n = std::min(n, rows.size());
        return n > 1 && rows[n - 1].arrival_s > 0 ? static_cast<double>(n - 1) / rows[n - 1].arrival_s : 0.0;
    }
};

// A disaggregated deployment (docs/serving.md "Disaggregated prefill and decode"): prompts run on a prefill
// pool of their own GPUs, their KV cache moves over a link to a decode pool, which generates the rest. The
// scenario's `parallel` lays out the decode pool over the GPUs the prefill pool leaves.
struct Disaggregation {
    int prefill_gpus = 0;   // 0: colocated (prefill and decode on the same replicas)
    int prefill_tp = 1;     // tensor parallelism of a prefill replica (pp 1)
    int prefill_ep = 1;     // expert parallelism over the prefill replicas (groups of prefill_ep share experts)
    // Per GPU, one direction, achievable: the KV of a request leaves each prefill GPU and reaches each
    // decode GPU at this rate. Resolved at parse time: stated, else the system's scale-up fabric when the
    // whole deployment is one scale-up domain, else its scale-out network.
    double link_GBps = 0;
    double link_latency_s = 0;   // one transfer's fixed latency (the fabric's per-hop latency)
    bool link_stated = false;
    bool enabled() const { return prefill_gpus > 0; }
};

// Expert parallelism in serving (parallel.ep > 1: each group of ep replicas shares the routed experts, every
// GPU of the group holding experts/ep of them; docs/serving.md "Expert parallelism"). The replicas of a group
// run attention on their own requests (DP attention) and meet at every MoE layer: dispatch and combine
// all-to-alls, and the busiest rank's expert GEMMs set the pace.
struct ServingExpertParallel {
    // The busiest rank's routed tokens over the mean (1: perfectly balanced, as EPLB aims); 0: not stated, the
    // spread of uniform routing at the iteration's tokens.
    double load_imbalance = 0;
    // Two micro-batches whose dispatch and combine hide under each other's computation (DeepSeek's, SGLang's
    // two-batch overlap).
    bool two_batch_overlap = false;
    // Extra copies of the busiest experts (EPLB's redundant experts): experts + redundant_experts slots spread
    // over the ep GPUs, each GPU holding slots / ep of them, the routed load spread over the slots.
    int redundant_experts = 0;
    // Places the routed experts take over an expert-parallel group of `ep` GPUs (the experts alone without
    // expert parallelism: a disaggregated deployment may spread them in one pool only).
    [[nodiscard]] double expert_slots(double experts, int ep) const {
        return ep > 1 ? experts + redundant_experts : experts;
    }
};

// Requests whose prompts begin with one of `groups` shared prefixes of `tokens` tokens (system prompts,
// few-shot templates, a conversation's earlier turns), the group of each drawn uniformly or, with zipf > 0,
// with probability proportional to 1 / rank^zipf. Each replica's engine keeps computed prefixes in its KV
// cache and reuses them (vLLM's automatic prefix caching, SGLang's radix cache); docs/serving.md "Shared
// prefixes".
struct SharedPrefix {
    std::int64_t groups = 0;   // 0: no shared prefixes
    std::int64_t tokens = 0;
    double zipf = 0;
    [[nodiscard]] bool enabled() const { return groups > 0; }
    // Of a prompt of `input` tokens, the tokens its shared prefix covers (a shorter prompt is all prefix).
    [[nodiscard]] double tokens_of(double input) const { return std::min(static_cast<double>(tokens), input); }
};

// inference.rate_profile: the arrival rate over a repeating period, piecewise constant over equal slices
// of it (an hour of a day, a minute of an hour). `levels` are relative (normalised to mean 1 when read),
// so `qps` stays the mean rate over the period (docs/serving.md "A rate that varies").
struct RateProfile {
    // At most one slice per minute of a week; also the bound on a stream's report windows (window_s).
    static constexpr std::size_t kMaxSlices = 10080;
    double period_s = 0;          // 0: the rate is constant
    std::vector<double> levels;   // per slice, mean 1
    [[nodiscard]] bool enabled() const { return period_s > 0 && !levels.empty(); }
    [[nodiscard]] double slice_s() const { return period_s / static_cast<double>(levels.size()); }
};

// inference.autoscale: replicas added and removed with the load (docs/serving.md "Autoscaling"). Every
// interval_s the policy averages the requests in the system (queued and running, all replicas) over the
// last window_s and asks for ceil(that / target_outstanding) replicas within [min, max] (Knative's
// concurrency autoscaler: its stable window and 2 s tick; fewer only as HPA's scale-down stabilization
// allows); a new replica serves after its cold start
// (its weights read at storage_GBps, then engine_start_s); a removed one takes no more requests and is
// released when its last one finishes.
struct Autoscale {
    int min_replicas = 1;
    int max_replicas = 0;            // 0: unset (the deployment's replicas, parallel.dp)
    double target_outstanding = 0;   // requests in the system per replica aimed at; 0: no autoscaling
    double interval_s = 2.0;
    double window_s = 60.0;
    // Fewer replicas only when every decision of the past scale_down_delay_s asked for no more (Kubernetes
    // HPA's scale-down stabilization window, 300 s by default): a load at a boundary does not flap.
    double scale_down_delay_s = 300.0;
    double storage_GBps = 0;   // read bandwidth of a replica's weights at a cold start
    double engine_start_s = 0;
    [[nodiscard]] bool enabled() const { return target_outstanding > 0; }
};

// inference.classes: one kind of request of a mixed stream (chat turns beside long summaries, say), with its
// share of the arrivals, its own lengths and its own latency targets (docs/serving.md "Request classes").
// Each request of the stream is of one class, drawn by share; every class is judged on its own SLO.
struct RequestClass {
    static constexpr std::size_t kMaxClasses = 64;
    std::string name;
    double share = 1;   // of the arrivals, the shares normalised to sum 1 when read
    LengthDist input_dist, output_dist;
    bool input_stated = false;   // input_len stated by the class (else the scenario's)
    ServingSlo slo;              // stated, else the scenario's
};

struct InferenceConfig {
    std::int64_t batch = 1;
    std::int64_t input_len = 128;    // mean (rounded) of input_dist
    std::int64_t output_len = 128;   // mean (rounded) of output_dist
    // With request classes: the mixture's mean, spread and bounds (what the closed form and the bounds read);
    // each request's lengths are drawn from its class's.
    LengthDist input_dist, output_dist;
    std::vector<RequestClass> classes;   // empty: one kind of request (input_dist, output_dist, slo)
    std::int64_t requests = 1000;
    double qps = 0;                      // 0: offline (every request at t = 0)
    bool qps_max = false;                // qps "max": the question is the largest rate meeting `slo`
    std::int64_t max_batch = 0;          // 0: as many as the KV cache holds
    std::int64_t max_batch_tokens = 0;   // 0: no chunked prefill (whole prompts)
    double prefix_cache_hit = 0;
    SpeculativeConfig speculative;
    ServingSlo slo;
    std::uint64_t seed = 1;
    Precision weight_precision = Precision::bf16;
    Precision kv_precision = Precision::bf16;
    Precision compute_precision = Precision::bf16;
    int quant_group_size = 128;   // int4/int8 weight group (one fp16 scale per group)
    Batching batching = Batching::static_batches;
    bool continuous() const { return batching == Batching::continuous; }
    SchedulerPolicy scheduler = SchedulerPolicy::inflight;   // the engine's, unless stated
    RouterPolicy router = RouterPolicy::round_robin;
    double price_per_gpu_hour = 0;   // dollars per GPU-hour for the cost of serving (0: not stated)
    // Coefficient of variation of the gaps between arrivals at `qps`: 1 a Poisson stream, above 1 bursty
    // (Gamma-distributed gaps of shape 1/cv^2), below 1 more regular (docs/serving.md "Bursts").
    double arrival_cv = 1.0;
    // Whole prompts (no chunked prefill): the most prompt tokens one iteration takes (a longer prompt
    // runs alone); the engine's default token budget.
    double prompt_budget_tokens = kTensorRtLlmMaxNumTokens;
    DecodeAttention decode_attention = DecodeAttention::grouped;
    bool cuda_graphs = false;   // kernels replayed from CUDA graphs (else launched one by one)
    bool kv_reserve = false;    // kv_admission "reserve": blocks for prompt + output at admission
    // Host work per running sequence per iteration (scheduling, sampling set-up, the response): fitted
    // on validation/serving.json, 5 us, leave-one-out 8.7% (docs/serving.md "Host time per sequence").
    double host_per_sequence_us = 5.0;
    EngineSpec engine;
    // inference.arrivals: the trace the request stream replays (its times scaled to `qps`, repeated past
    // its end); null: a Poisson stream at `qps`, or offline.
    std::shared_ptr<const ArrivalTrace> arrivals;
    Disaggregation disaggregation;
    ServingExpertParallel expert_parallel;
    SharedPrefix shared_prefix;
    RateProfile rate_profile;
    Autoscale autoscale;
    // inference.window_s: the stream reported in windows of this length from t = 0 (hourly SLO attainment of a
    // trace or a long stream); 0: the rate profile's slices, or no windows.
    double window_s = 0;
};

// What training cost functions read: the model, the system, the layout and the training settings, by
// reference (building one copies nothing; the search builds them from its own layout and settings).
struct TrainingJob {
    const ModelSpec& model;
    const SystemSpec& system;
    const ParallelConfig& parallel;
    const TrainingConfig& training;
    int gpus() const { return parallel.world(); }
};

// What serving cost functions read.
struct ServingJob {
    const ModelSpec& model;
    const SystemSpec& system;
    const ParallelConfig& parallel;
    const InferenceConfig& inference;
    int gpus() const { return parallel.world(); }
    int replicas() const { return parallel.dp * parallel.cp; }
};

struct Scenario {
    std::string name;
    ModelSpec model;
    SystemSpec system;
    int gpus = 1;
    ParallelConfig parallel;
    bool is_inference = false;
    TrainingConfig training;
    InferenceConfig inference;

    TrainingJob training_job() const { return {model, system, parallel, training}; }
    ServingJob serving_job() const { return {model, system, parallel, inference}; }
};

// A disaggregated deployment's KV link (inference.disaggregation), unless stated: the system's scale-up fabric
// (intra_node_GBps x efficiency) when all of s.gpus share one scale-up domain, else its network
// (inter_node_GBps x efficiency); the latency the fabric's either way. Returns whether it is one domain. The
// reader calls it, and so does anything that changes s.gpus (sim::pool_scenario).
bool resolve_disaggregation_link(Scenario& s);

}   // namespace llmsim
