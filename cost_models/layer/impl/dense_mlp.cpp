// The dense MLP: fc1 (gate and up for a gated MLP), the activation, fc2, column- then row-parallel.
#include "cost_models/layer/impl/impl.hpp"

namespace llmsim::layer_impl {

void add_mlp(const ModelSpec& m, const LayerShape& s, Layer& l, const MlpGemms& names, double f, const MlpCopies& c) {
    const double h = static_cast<double>(m.hidden), tp = s.tp;
    const bool gated = m.mlp == MlpKind::swiglu;
    const double width = f * c.side_by_side / tp;   // fc1's output (each of gate and up), fc2's input
    LayerOp g;
    g.block = LayerBlock::mlp;
    g.part = names.part1;
    g.n = width;
    g.k = h;
    g.rows = c.rows;
    g.experts = c.experts;
    g.fused = names.fc1;
    const double fc1_params = h * f + (m.bias ? f : 0.0);
    g.params = c.copies * fc1_params;
    g.active_params = c.active * fc1_params;
    g.name = gated ? names.gate : names.fc1;
    l.add(g);
    if (gated) {
        g.name = names.up;
        l.add(g);
    }
    LayerOp act;
    act.kind = LayerOpKind::pass;
    act.name = names.act;
    act.block = LayerBlock::mlp;
    act.pass = ElementwiseKind::mlp_activation;
    act.n = width;
    act.k = gated ? 2.0 : 1.0;
    act.rows = c.rows;
    act.batch = c.side_by_side;
    act.experts = c.experts;
    l.add(act);
    LayerOp d;
    d.name = names.fc2;
    d.block = LayerBlock::mlp;
    d.part = names.part2;
    d.n = h;
    d.k = width;
    d.rows = c.rows;
    d.experts = c.experts;
    d.row_parallel = true;
    const double fc2_params = f * h + (m.bias ? h : 0.0);
    d.params = c.copies * fc2_params;
    d.active_params = c.active * fc2_params;
    l.add(d);
}

namespace dense_mlp {

bool applies(const ModelSpec&, bool) noexcept { return true; }

void describe(const ModelSpec& m, const LayerShape& s, Layer& l) {
    add_mlp(m, s, l, {"mlp_gate", "mlp_up", "mlp_fc1", "mlp_act", "mlp_fc2", LayerPart::fc1, LayerPart::fc2},
            static_cast<double>(m.ffn_hidden), MlpCopies{});
}

}   // namespace dense_mlp
}   // namespace llmsim::layer_impl
