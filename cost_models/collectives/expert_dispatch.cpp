// Expert-parallel dispatch and combine as DeepEP runs them (DeepSeek-AI, github.com/deepseek-ai/DeepEP,
// 2025; the kernels SGLang's and vLLM's wide expert parallelism use): docs/serving.md "Expert parallelism".
#include <algorithm>
#include <cmath>

#include "cost_models/collectives.hpp"
#include "cost_models/collectives/impl/impl.hpp"

namespace llmsim {

double expert_all_to_all_time(const SystemSpec& s, const GroupPlacement& g, double tokens, double top_k,
                              double token_bytes, ExpertAllToAll mode) noexcept {
    const int n = g.n;
    if (n <= 1 || !(tokens > 0) || !(top_k > 0) || !(token_bytes > 0)) return 0.0;
    const double r = std::min(g.per_domain, n);   // ranks of the group on one scale-up domain
    const collective_impl::Links l = collective_impl::links(s, static_cast<int>(r) - 1);
    const double D = g.domains();
    const double copies = tokens * top_k * token_bytes;   // every chosen expert gets the token once
    if (D <= 1) return l.base + l.a_in + copies * (n - 1.0) / n / l.b_in;
    double out = 0, in = 0;
    if (mode == ExpertAllToAll::per_domain) {
        // Normal kernels: a token crosses the network once per remote domain holding one of its experts (each
        // domain holds 1/D of them: (D − 1)(1 − (1 − 1/D)^k) such domains), then the receiving GPU forwards it
        // over the fabric to each expert's GPU there; the two legs are pipelined.
        out = tokens * token_bytes * (D - 1.0) * (1.0 - std::pow(1.0 - 1.0 / D, top_k));
        in = copies * (r - 1.0) / r;
    } else {
        // Low-latency kernels: one copy per chosen expert straight to its GPU, over the network to the other
        // domains and over the fabric within its own, at once.
        out = copies * (n - r) / n;
        in = copies * (r - 1.0) / n;
    }
    return l.base + l.a_out + std::max(out / l.b_out, in / l.b_in);
}

}   // namespace llmsim
