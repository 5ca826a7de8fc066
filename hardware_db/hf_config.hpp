// Reading a Hugging Face `config.json` into a ModelSpec.
//
// Hugging Face configs carry many keys llmsim does not model (token ids, rope scaling, dtype,
// initializer ranges, ...), so unknown keys are NOT reported here: only the shape keys are read,
// type-checked and range-checked. A missing required shape key (layers, hidden size, heads,
// vocabulary) is a problem naming its JSON pointer and the key names that were accepted.
//
// Keys read (first present, non-null one wins):
//   layers      num_hidden_layers | n_layer | num_layers | n_layers
//   hidden      hidden_size | n_embd | d_model | n_embed
//   heads       num_attention_heads | n_head | n_heads
//   kv_heads    num_key_value_heads | num_kv_heads (Falcon new_decoder_architecture) |
//               multi_query -> 1 | default heads
//   head_dim    head_dim | default hidden / heads
//   ffn_hidden  intermediate_size | ffn_dim | n_inner | ffn_hidden_size | expansion_ratio * hidden | 4 hidden
//   vocab       vocab_size
//   mlp         gated model types (llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, gemma, ...) -> swiglu;
//               non-gated types (gpt2, gptj, opt, bloom, falcon, mpt, gpt_neox, nemotron, ...) -> gelu;
//               otherwise hidden_act / activation_function: silu, swish, swiglu -> swiglu, else gelu
//   norm        rms_norm_eps present, or an RMSNorm model type -> rmsnorm; else layernorm
//   position    gpt2, opt, gpt_neo, gpt_bigcode -> learned; bloom -> alibi; mpt -> alibi (unless
//               attn_config.alibi is false); falcon -> alibi if "alibi" is true; else rope
//   max_seq_len max_position_embeddings | n_positions | max_seq_len | seq_length | default 2048
//   tied        tie_word_embeddings | the transformers default of the model type
//   bias        gpt2, opt, bloom, gpt_neox, gpt_bigcode, phi -> true; falcon "bias"; mpt !no_bias;
//               attention_bias / mlp_bias when present (attention only -> qkv_bias); qwen2 -> qkv_bias
//   parallel    gptj, phi -> true; falcon parallel_attn; gpt_neox use_parallel_residual
//   dropout     any of attention_dropout, hidden_dropout, resid_pdrop, attn_pdrop, embd_pdrop, dropout > 0
//   moe         experts: num_local_experts | num_experts | n_routed_experts | moe_num_experts (> 1);
//               top_k: num_experts_per_tok | moe_top_k; expert width: moe_intermediate_size | intermediate_size;
//               shared: n_shared_experts (width moe_intermediate_size) or shared_expert_intermediate_size
//               (one shared expert); leading dense layers: first_k_dense_replace.
//               Qwen's decoder_sparse_step > 1 and mlp_only_layers are represented by the same NUMBER of
//               dense layers, placed first (ModelSpec only has leading dense layers): totals and FLOPs are
//               exact, the per-stage placement is approximate.
//   name        _name_or_path | model_type
// A multimodal config whose language model sits under "text_config" is read from there.
// Not modelled: multi-head latent attention (DeepSeek kv_lora_rank; read as plain attention with
// num_key_value_heads), OPT-350m's word_embed_proj_dim projections, partial rotary dimensions.
#pragma once

#include <string>

#include "hardware_db/json_reader.hpp"
#include "hardware_db/specs.hpp"

namespace llmsim {

// Reads the Hugging Face config `cfg` (whose JSON pointer is `pointer`) into a ModelSpec; problems
// (missing or mistyped shape keys, inconsistent shapes) are appended to `problems`.
ModelSpec model_from_hf_config(const Json& cfg, const std::string& pointer, Problems& problems);

// True when `j` is an object that looks like a Hugging Face config.json rather than an llmsim model
// description: it has none of llmsim's own keys ("layers", "preset") and has a Hugging Face marker
// ("model_type", "architectures", a layer-count key or "text_config").
bool looks_like_hf_config(const Json& j);

}   // namespace llmsim
