// Mixture of experts (Switch, GShard, Mixtral, DeepSeekMoE): a router, the dispatch of every token to
// its top_k routed experts and the weighted combine of their outputs, the routed experts as grouped
// GEMMs (sharded over ep), and the shared experts every token runs, as one MLP of their summed width.
#include <fmt/format.h>

#include "cost_models/layer/impl/impl.hpp"

namespace llmsim::layer_impl::moe {

bool applies(const ModelSpec& m, bool moe_layer) noexcept { return moe_layer && m.moe.enabled(); }

void describe(const ModelSpec& m, const LayerShape& s, Layer& l) {
    const double h = static_cast<double>(m.hidden), experts = m.moe.experts, top_k = m.moe.top_k;
    LayerOp router;
    router.name = "router";
    router.block = LayerBlock::mlp;
    router.part = LayerPart::router;
    router.n = experts;
    router.k = h;
    router.params = router.active_params = h * experts;
    l.add(router);
    LayerOp permute;
    permute.kind = LayerOpKind::pass;
    permute.name = "permute";   // dispatch and combine
    permute.block = LayerBlock::mlp;
    permute.pass = ElementwiseKind::moe_routing;
    permute.n = h;
    permute.rows = top_k;
    l.add(permute);
    MlpCopies routed;
    routed.copies = experts;
    routed.active = top_k;
    routed.rows = top_k;
    routed.experts = experts;
    add_mlp(m, s, l,
            {"expert_gate", "expert_up", "expert_fc1", "expert_act", "expert_fc2", LayerPart::fc1, LayerPart::fc2},
            static_cast<double>(m.moe.expert_ffn_hidden), routed);
    if (m.moe.shared_experts > 0) {
        MlpCopies shared;
        shared.copies = shared.active = shared.side_by_side = m.moe.shared_experts;
        add_mlp(m, s, l,
                {"shared_expert_gate", "shared_expert_up", "shared_expert_fc1", "shared_expert_act",
                 "shared_expert_fc2", LayerPart::shared_fc1, LayerPart::shared_fc2},
                static_cast<double>(m.moe.shared_expert_ffn_hidden), shared);
    }
}

std::string summary(const ModelSpec& m) {
    return fmt::format("{} experts, top-{}, expert ffn {}, {} shared, {} dense layers", m.moe.experts, m.moe.top_k,
                       m.moe.expert_ffn_hidden, m.moe.shared_experts, m.moe.dense_layers);
}

}   // namespace llmsim::layer_impl::moe
