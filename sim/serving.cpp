#include "sim/serving.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <numbers>
#include <optional>
#include <queue>
#include <utility>

#include <fmt/format.h>

#include "cost_models/memory.hpp"
#include "hardware_db/errors.hpp"
#include "hardware_db/layout_rules.hpp"
#include "sim/interrupt.hpp"
#include "sim/length_dist.hpp"
#include "sim/parallel.hpp"
#include "sim/router.hpp"

namespace llmsim::sim {

namespace {

// splitmix64's output function (Steele, Lea and Flood 2014): a bijective 64-bit mix.
constexpr std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// splitmix64: a 64-bit Weyl sequence through mix64, the same on every platform (std:: distributions
// are implementation-defined). The state starts at the *mixed* seed, so seeds k and k + 1 start at
// unrelated points of the Weyl sequence and give independent replications (a state of seed·γ would
// make seed k + 1 replay seed k's stream shifted by one draw).
class Rng {
public:
    explicit Rng(std::uint64_t seed) : s_(mix64(seed ^ 0x632BE59BD9B4E019ULL)) {}
    std::uint64_t next() { return mix64(s_ += 0x9E3779B97F4A7C15ULL); }
    // Uniform in (0, 1).
    double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }

private:
    std::uint64_t s_;
};

// A gap between arrivals in units of the mean gap, with coefficient of variation `cv`: Gamma of shape
// k = 1/cv^2 and mean 1 (Marsaglia and Tsang 2000, "A simple method for generating gamma variables";
// shape below 1 through Gamma(k + 1)·U^(1/k)); cv 1 is the exponential -ln U, one uniform per gap as a
// Poisson stream always drew; cv 0 evenly spaced, no draw. The uniforms a gap takes do not depend on the
// rate, so streams at every rate share their draws (the capacity search's common random numbers).
double unit_gap(Rng& rng, double cv) {
    if (cv == 1.0) return -std::log(rng.uniform());
    if (cv <= 0) return 1.0;
    const double k = 1.0 / (cv * cv);
    const double a = k < 1 ? k + 1 : k;
    const double d = a - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    double g = 0;
    for (;;) {
        // A standard normal by Box-Muller (its first value; the pair's second is not kept).
        const double x = std::sqrt(-2.0 * std::log(rng.uniform())) * std::cos(2.0 * std::numbers::pi * rng.uniform());
        const double v1 = 1.0 + c * x;
        if (v1 <= 0) continue;
        const double v = v1 * v1 * v1, u = rng.uniform();
        if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) {
            g = d * v;
            break;
        }
    }
    if (k < 1) g *= std::pow(rng.uniform(), 1.0 / k);
    return g / k;
}

Distribution distribution(std::vector<double>& v) {
    Distribution d;
    if (v.empty()) return d;
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    d.mean = sum / static_cast<double>(v.size());
    // Nearest-rank percentiles.
    auto pct = [&](double p) {
        const auto n = static_cast<double>(v.size());
        const auto i = static_cast<std::size_t>(std::max(0.0, std::ceil(p * n) - 1.0));
        return v[std::min(i, v.size() - 1)];
    };
    d.p50 = pct(0.50);
    d.p90 = pct(0.90);
    d.p99 = pct(0.99);
    d.max = v.back();
    return d;
}

// The steady window of a Poisson stream (Steadiness): requests i = first, first + stride, ...; `scale`
// turns their rates into the deployment's.
Steadiness steadiness(const std::vector<Request>& reqs, const std::vector<RequestState>& st, std::size_t first,
                      std::size_t stride, double scale, bool poisson, const RateProfile& profile) {
    Steadiness d;
    d.applies = poisson;
    if (!poisson || first >= reqs.size()) return d;
    double t0 = reqs[first].arrival_s, t1 = t0, e2e = 0, n = 0;
    for (std::size_t i = first; i < reqs.size(); i += stride) {
        t1 = reqs[i].arrival_s;
        e2e += st[i].finish - reqs[i].arrival_s;
        n += 1;
    }
    d.arrival_span_s = t1 - t0;
    d.last_arrival_s = t1;
    d.warmup_s = e2e / n;
    if (profile.enabled()) d.covers_period = t1 >= profile.period_s - profile.slice_s();
    d.long_enough = d.arrival_span_s >= kSteadySpans * d.warmup_s && d.covers_period;
    // The window: the later half of the arrivals (while the system fills, fewer requests finish than
    // arrive, past capacity or not; a steady stream has filled by then, as it spans many warm-ups).
    const double a = t0 + 0.5 * d.arrival_span_s;
    const double window = t1 - a;
    if (!(window > 0)) return d;
    double arrived = 0, finished = 0;
    for (std::size_t i = first; i < reqs.size(); i += stride) {
        if (reqs[i].arrival_s >= a && reqs[i].arrival_s <= t1) arrived += 1;
        if (st[i].finish >= a && st[i].finish <= t1) finished += 1;
    }
    d.offered_qps = scale * arrived / window;
    d.served_qps = scale * finished / window;
    // Past capacity the queue grows: a request waits about f·(its arrival time − when the queue began)
    // for admission, f the share of arrivals not served. The mean wait of the window's last quarter of
    // arrivals against its first quarter's, a half window apart, grows by f·window/2; in steady state it
    // does not grow (its fluctuations are not a trend over the stream). Falling short means both: that
    // growth for f > kKeepUpShortfall, and fewer completions than arrivals by that share.
    double early = 0, late = 0, n_early = 0, n_late = 0;
    for (std::size_t i = first; i < reqs.size(); i += stride) {
        const double at = reqs[i].arrival_s;
        if (at < a || at > t1) continue;
        const double wait = st[i].admitted - at;
        if (at < a + 0.25 * window) {
            early += wait;
            n_early += 1;
        } else if (at > t1 - 0.25 * window) {
            late += wait;
            n_late += 1;
        }
    }
    const double growth = n_early > 0 && n_late > 0 ? late / n_late - early / n_early : 0.0;
    d.keeps_up = !(growth > kKeepUpShortfall * 0.75 * window && finished < (1.0 - kKeepUpShortfall) * arrived);
    return d;
}

// One iteration's progress on a replica, ending at time t: the output tokens emitted and the requests
// finished.
struct Progress {
    double t = 0, output_tokens = 0, requests = 0;
    double finished_tokens = 0;   // prompt + output tokens of the requests finished (a router's load)
    double finished_output = 0;   // of them, output tokens
};

// A replica's completions cumulated at every iteration's end (requests finished and their prompt and output
// tokens), thinned to every other point when it grows past kMaxPoints (a command's memory stays bounded; the
// rates read from it over a window of many iterations move by less than one iteration's progress).
class CompletionSeries {
public:
    struct Point {
        double t = 0, requests = 0, input_tokens = 0, output_tokens = 0;
    };
    void add(const Progress& step) {
        sum_.t = step.t;
        sum_.requests += step.requests;
        sum_.input_tokens += step.finished_tokens - step.finished_output;
        sum_.output_tokens += step.finished_output;
        if (++since_ < stride_) return;
        since_ = 0;
        points_.push_back(sum_);
        if (points_.size() < kMaxPoints) return;
        std::size_t w = 0;
        for (std::size_t i = 1; i < points_.size(); i += 2) points_[w++] = points_[i];
        points_.resize(w);
        stride_ *= 2;
    }
    // The first kept time by which `requests` had finished (infinity if never).
    [[nodiscard]] double time_of_requests(double requests) const {
        for (const auto& p : points_)
            if (p.requests >= requests) return p.t;
        return std::numeric_limits<double>::infinity();
    }
    // The completions cumulated by time t (linear between the kept points; zero at t = 0).
    [[nodiscard]] Point at(double t) const {
        Point lo{};
        for (const auto& p : points_) {
            if (p.t >= t) {
                const double f = p.t > lo.t ? (t - lo.t) / (p.t - lo.t) : 1.0;
                auto mix = [f](double a, double b) { return a + f * (b - a); };
                return {t, mix(lo.requests, p.requests), mix(lo.input_tokens, p.input_tokens),
                        mix(lo.output_tokens, p.output_tokens)};
            }
            lo = p;
        }
        return lo;
    }

private:
    static constexpr std::size_t kMaxPoints = std::size_t{1} << 15;
    std::vector<Point> points_;
    Point sum_{};
    std::int64_t stride_ = 1, since_ = 0;
};

// The offline rates of the replicas simulated: each replica's completions per second over its saturated
// span, from the moment its first batch has turned over (as many requests finished as its largest batch
// held: the fill is over) to its last completion before the queue ran dry. Requests and their tokens are
// counted as they finish, so the window's requests and tokens are the same requests (equal lengths finish
// in waves: tokens counted as generated would add the part of a wave still in flight at the window's end
// and none of its requests). The window holds a whole number of batches: requests of equal lengths finish
// in bursts of a batch, and a window from the end of one burst to the middle of another counted part of a
// burst over a whole period (a 343-sequence batch of 4,096-token outputs read 1.87 requests/s for 2.07,
// its wave's 343 per 166 s). A replica whose window then holds fewer than kSaturatedBatches batches
// measures nothing: every rate stays the batch's own (its requests over the makespan) and the stream is
// said to be too short.
struct SaturatedRates {
    CompletionSeries::Point rates{};   // per second, summed over the replicas (t unused)
    double span_s = 0;                 // the shortest replica's saturated span
    bool measured = true;
    int replicas = 0;

    void add(const CompletionSeries& s, double t_saturated, double peak_batch) {
        span_s = replicas++ == 0 ? t_saturated : std::min(span_s, t_saturated);
        const double batch = std::max(1.0, peak_batch);
        const double a = s.time_of_requests(batch);
        const auto pa = s.at(a);
        const double batches = std::floor((s.at(t_saturated).requests - pa.requests) / batch);
        const double b = s.time_of_requests(pa.requests + batches * batch);
        const auto pb = s.at(b);
        const double finished = pb.requests - pa.requests;
        if (!(batches >= kSaturatedBatches) || !(b > a)) {
            measured = false;
            return;
        }
        rates.output_tokens += (pb.output_tokens - pa.output_tokens) / (b - a);
        rates.input_tokens += (pb.input_tokens - pa.input_tokens) / (b - a);
        rates.requests += finished / (b - a);
    }
};

}   // namespace

namespace {
// Each request's shared prefix (InferenceConfig::shared_prefix): group r of G with probability
// proportional to 1/r^zipf (uniform at 0), drawn from a stream of its own so that the arrivals and lengths
// are the same with and without shared prefixes.
void assign_prefix_groups(const InferenceConfig& in, std::vector<Request>& out) {
    const auto& p = in.shared_prefix;
    if (!p.enabled()) return;
    std::vector<double> cumulative(static_cast<std::size_t>(p.groups));
    double total = 0;
    for (std::size_t g = 0; g < cumulative.size(); ++g)
        cumulative[g] = total += std::pow(static_cast<double>(g + 1), -p.zipf);
    Rng rng(in.seed ^ 0x9E1F1C5A7B3D2E01ULL);
    for (auto& r : out) {
        const double u = rng.uniform() * total;
        const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
        r.group = static_cast<std::int32_t>(std::min<std::ptrdiff_t>(it - cumulative.begin(), p.groups - 1));
    }
}
}   // namespace

ProfileClock::ProfileClock(const RateProfile& p) : p_(p) {
    if (!p.enabled()) return;
    cumulative_.assign(p.levels.size() + 1, 0.0);
    for (std::size_t j = 0; j < p.levels.size(); ++j) cumulative_[j + 1] = cumulative_[j] + p.levels[j] * p.slice_s();
}

double ProfileClock::operator()(double u) const {
    if (cumulative_.empty() || !(u > 0)) return u;
    const double period = p_.period_s, w = p_.slice_s();
    const double k = std::floor(u / cumulative_.back());   // whole periods (their mean-rate seconds: period_s)
    const double r = u - k * cumulative_.back();
    // The slice whose mean-rate seconds hold r (a slice at level 0 holds none: it is skipped).
    const auto j =
        static_cast<std::size_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(), r) - cumulative_.begin()) - 1;
    if (j >= p_.levels.size()) return (k + 1.0) * period;   // rounding at the period's end
    return k * period + static_cast<double>(j) * w + std::min(w, (r - cumulative_[j]) / p_.levels[j]);
}

std::vector<Request> request_stream(const InferenceConfig& in) {
    std::vector<Request> out(static_cast<std::size_t>(in.requests));
    if (in.arrivals && !in.arrivals->rows.empty()) {
        // A trace: its requests in order, their times scaled so that the rows used arrive at `qps` (their own
        // rate unless rescaled; offline, all at once); past its end it repeats, each repetition one mean gap
        // after the last.
        const auto& rows = in.arrivals->rows;
        const std::size_t n = rows.size();
        const double own = in.arrivals->rate_qps(out.size());
        const double scale = in.qps > 0 && own > 0 ? own / in.qps : (in.qps > 0 ? 1.0 : 0.0);
        const double period = rows.back().arrival_s + (own > 0 ? 1.0 / own : 0.0);
        for (std::size_t i = 0; i < out.size(); ++i) {
            const auto& q = rows[i % n];
            const std::size_t repetition = i / n;   // whole repetitions of the trace before this request
            out[i].arrival_s = scale * (static_cast<double>(repetition) * period + q.arrival_s);
            out[i].input = q.input;
            out[i].output = q.output;
        }
        assign_prefix_groups(in, out);
        return out;
    }
    Rng rng(in.seed);
    // One pair of samplings per class (the stream's own without classes), and the classes' cumulative shares.
    std::vector<std::pair<LengthSampling, LengthSampling>> lengths;
    std::vector<double> cumulative;
    if (in.classes.empty()) lengths.emplace_back(length_sampling(in.input_dist), length_sampling(in.output_dist));
    for (const auto& c : in.classes) {
        lengths.emplace_back(length_sampling(c.input_dist), length_sampling(c.output_dist));
        cumulative.push_back((cumulative.empty() ? 0.0 : cumulative.back()) + c.share);
    }
    const ProfileClock clock(in.rate_profile);
    double t = 0;
    for (auto& r : out) {
        if (in.qps > 0) t += unit_gap(rng, in.arrival_cv) / in.qps;
        r.arrival_s = clock(t);
        std::size_t k = 0;
        if (!cumulative.empty()) {   // a class by share (the last when rounding leaves the draw past the sum)
            const double u = rng.uniform() * cumulative.back();
            k = std::min(cumulative.size() - 1,
                         static_cast<std::size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) -
                                                  cumulative.begin()));
            r.cls = static_cast<std::int32_t>(k);
        }
        const auto& [input, output] = lengths[k];
        // A fixed length draws nothing, so the arrivals of a stream do not depend on it.
        r.input = input.length(input.kind == LengthDist::Kind::fixed ? 0.5 : rng.uniform());
        r.output = output.length(output.kind == LengthDist::Kind::fixed ? 0.5 : rng.uniform());
    }
    assign_prefix_groups(in, out);
    return out;
}

namespace {
std::int32_t longest_of(const std::vector<Request>& reqs) {
    std::int32_t longest = 0;
    for (const auto& r : reqs) longest = std::max(longest, r.input + r.output);
    return longest;
}
}   // namespace

std::int32_t longest_request(const InferenceConfig& in) { return longest_of(request_stream(in)); }

namespace {

// Refuses, before anything runs, a stream the simulator cannot serve: a token budget below one decode
// step, a request that cannot fit the KV cache alone (it could never finish), or work past the limits.
void check_stream(const InferenceConfig& in, const std::vector<Request>& reqs, const KvPool& pool, double step_tokens,
                  double emitted, const ServingOptions& opt) {
    if (in.max_batch_tokens > 0 && in.max_batch_tokens < step_tokens)
        throw ConfigError(
            fmt::format("/inference/max_batch_tokens: {}: expected at least the {} tokens one decode "
                        "step feeds",
                        in.max_batch_tokens, step_tokens));
    // Every request must fit the KV cache alone, or it could never finish.
    const std::int32_t longest = longest_of(reqs);
    const std::int64_t alone = admission_blocks(in, longest);
    if (pool.blocks <= 0 || alone > pool.blocks)
        throw ConfigError(fmt::format(
            "/inference/input_len: a request of {} tokens (input + output) needs {} KV blocks of {} tokens; the "
            "KV cache of one replica holds {} ({:.2f} GiB free per GPU): expected shorter requests, more tp/pp, or "
            "a smaller weight/KV precision",
            longest, alone, kKvBlockTokens, pool.blocks, pool.pool_bytes / kGiB));

    // The work, bounded from below before anything runs: every decode step of a request is a
    // sequence-step, and a request holds its whole context in its replica's KV cache (a cached prefix
    // too) for each of its decode steps, so the iterations, summed over replicas as the limit counts
    // them, are at least the KV token-steps of all requests over one replica's cache tokens.
    {
        double steps = 0, kv_token_steps = 0;
        for (const auto& r : reqs) {
            const double o = std::ceil(r.output / emitted);
            steps += o;
            kv_token_steps += o * (r.input + 0.5 * r.output);
        }
        const double min_iterations = kv_token_steps / (static_cast<double>(pool.blocks) * kKvBlockTokens);
        if (steps > opt.max_sequence_steps || min_iterations > static_cast<double>(opt.max_iterations))
            throw ConfigError(fmt::format(
                "/inference/requests: {}: {:.3g} decode steps in at least {:.3g} iterations are past the serving "
                "simulator's work limit ({:.3g} steps, {:.3g} iterations): expected fewer requests or shorter "
                "outputs",
                in.requests, steps, min_iterations, opt.max_sequence_steps, static_cast<double>(opt.max_iterations)));
    }
}

// Applies an iteration that ended at t to its replica's running sequences: a prompt's last chunk emits
// its first token, a decode `emitted` tokens; a finished request leaves and frees its KV blocks. Returns
// what the iteration produced (Progress) and counts the finished in `done` and their time in system.
Progress apply_iteration(ReplicaScheduler& rs, std::vector<RequestState>& st, const std::vector<Request>& reqs,
                         double t, double emitted, std::size_t& done, double& in_system_area) {
    auto& running = rs.running;
    Progress step{t, 0, 0, 0, 0};
    std::size_t w = 0;
    for (std::size_t i = 0; i < running.size(); ++i) {
        auto& q = running[i];
        auto& rq = st[static_cast<std::size_t>(q.req)];
        const auto& r = reqs[static_cast<std::size_t>(q.req)];
        if (q.role == 2) {
            q.computed += q.chunk;
            if (q.computed >= q.prompt) {
                q.decoding = true;
                rs.prefilled(q);
                if (rq.first_token < 0) {
                    rq.first_token = t;
                    rq.generated = 1;
                    step.output_tokens += 1;
                }
            }
        } else if (q.role == 1) {
            step.output_tokens += std::max(0.0, std::min<double>(emitted, r.output - rq.generated));
            rq.generated += emitted;
        }
        if (q.decoding && rq.generated >= r.output) {
            rq.finish = t;
            rs.finish(q);
            ++done;
            step.requests += 1;
            step.finished_tokens += r.input + r.output;
            step.finished_output += r.output;
            in_system_area += t - r.arrival_s;
            continue;
        }
        running[w++] = q;
    }
    running.resize(w);
    return step;
}

// The latency distributions of requests first, first + stride, ... (into `res`) and their tokens.
struct RequestMeasures {
    double output_tokens = 0, input_tokens = 0;
};
// A served request's time to first token, and its time per output token after the first (a request of
// one output token has none): one definition for the stream's, its windows' and its classes' measures.
double ttft_of(const Request& r, const RequestState& s) { return s.first_token - r.arrival_s; }
bool has_tpot(const Request& r) { return r.output > 1; }
double tpot_of(const Request& r, const RequestState& s) { return (s.finish - s.first_token) / (r.output - 1); }

// Whether a request met every stated target's time (its own TTFT, and TPOT over more than one token).
bool within_slo(const ServingSlo& slo, const Request& r, const RequestState& s) {
    for (const auto& t : slo.targets()) {
        if (t.ttft && ttft_of(r, s) > t.seconds) return false;
        if (!t.ttft && has_tpot(r) && tpot_of(r, s) > t.seconds) return false;
    }
    return true;
}

// The windows a result reports (ServingResult::windows): window_s's from t = 0 over the whole stream, else the
// rate profile's slices folded over its periods; none without either.
struct WindowPlan {
    double width_s = 0;
    double period_s = 0;   // > 0: folded over this period (a profile's slices)
    std::size_t count = 0;
};
constexpr std::size_t kMaxWindows = RateProfile::kMaxSlices;

WindowPlan window_plan(const InferenceConfig& in, const std::vector<Request>& reqs) {
    WindowPlan w;
    if (in.window_s > 0) {
        const double last = reqs.empty() ? 0.0 : reqs.back().arrival_s;
        const double n = std::max(1.0, std::ceil(last / in.window_s));
        if (n > static_cast<double>(kMaxWindows))
            throw ConfigError(
                fmt::format("/inference/window_s: {:g}: the stream's arrivals span {:.4g} s, {:.4g} "
                            "windows: expected at most {} (a longer window)",
                            in.window_s, last, n, kMaxWindows));
        w.width_s = in.window_s;
        w.count = static_cast<std::size_t>(n);
    } else if (in.rate_profile.enabled()) {
        w.width_s = in.rate_profile.slice_s();
        w.period_s = in.rate_profile.period_s;
        w.count = in.rate_profile.levels.size();
    }
    return w;
}

// The windows of `plan` over requests first, first + stride, ...; `scale` turns their counts into the
// deployment's.
std::vector<ServingWindow> stream_windows(const InferenceConfig& in, const WindowPlan& plan,
                                          const std::vector<Request>& reqs, const std::vector<RequestState>& st,
                                          std::size_t first, std::size_t stride, double scale) {
    std::vector<ServingWindow> out;
    if (plan.count == 0 || first >= reqs.size()) return out;
    const std::size_t n = plan.count;
    const double w = plan.width_s;
    std::vector<std::vector<double>> ttft(n), tpot(n);
    std::vector<double> within(n, 0.0);
    double last = 0;
    for (std::size_t i = first; i < reqs.size(); i += stride) {
        const auto& r = reqs[i];
        last = std::max(last, r.arrival_s);
        const double at = plan.period_s > 0 ? std::fmod(r.arrival_s, plan.period_s) : r.arrival_s;
        const std::size_t j = std::min(n - 1, static_cast<std::size_t>(at / w));
        ttft[j].push_back(ttft_of(r, st[i]));
        if (has_tpot(r)) tpot[j].push_back(tpot_of(r, st[i]));
        if (within_slo(slo_of(in, r), r, st[i])) within[j] += 1;
    }
    // The time of window j the stream spans: folded, whole periods then the part of the last one up to
    // `last`; else the part of the window before `last` (the last window is partly spanned).
    const double periods = plan.period_s > 0 ? std::floor(last / plan.period_s) : 0.0;
    const double rest = last - periods * plan.period_s;
    for (std::size_t j = 0; j < n; ++j) {
        ServingWindow x;
        x.start_s = static_cast<double>(j) * w;
        x.end_s = x.start_s + w;
        if (plan.period_s > 0) x.level = in.rate_profile.levels[j];
        x.requests = static_cast<std::int64_t>(ttft[j].size());
        const double spanned = periods * w + std::clamp(rest - x.start_s, 0.0, w);
        if (spanned > 0) x.offered_qps = scale * static_cast<double>(x.requests) / spanned;
        if (in.slo.any() && x.requests > 0) x.slo_attainment = within[j] / static_cast<double>(x.requests);
        x.ttft_s = distribution(ttft[j]);
        x.tpot_s = distribution(tpot[j]);
        out.push_back(x);
    }
    return out;
}

RequestMeasures request_measures(const std::vector<Request>& reqs, const std::vector<RequestState>& st,
                                 std::size_t first, std::size_t stride, ServingResult& res) {
    std::vector<double> ttft, tpot, e2e, queue;
    ttft.reserve(reqs.size());
    e2e.reserve(reqs.size());
    queue.reserve(reqs.size());
    RequestMeasures m;
    for (std::size_t i = first; i < reqs.size(); i += stride) {
        const auto& r = reqs[i];
        const auto& s = st[i];
        ttft.push_back(ttft_of(r, s));
        e2e.push_back(s.finish - r.arrival_s);
        queue.push_back(s.admitted - r.arrival_s);
        if (has_tpot(r)) tpot.push_back(tpot_of(r, s));
        m.output_tokens += r.output;
        m.input_tokens += r.input;
    }
    res.requests = static_cast<std::int64_t>(e2e.size());
    res.ttft_s = distribution(ttft);
    res.tpot_s = distribution(tpot);
    res.e2e_latency_s = distribution(e2e);
    res.queue_s = distribution(queue);
    return m;
}

// Each request class's latencies over the requests first, first + stride, ... (ServingResult::classes).
std::vector<ClassResult> class_results(const InferenceConfig& in, const std::vector<Request>& reqs,
                                       const std::vector<RequestState>& st, std::size_t first, std::size_t stride) {
    const std::size_t n = in.classes.size();
    std::vector<ClassResult> out(n);
    if (n == 0) return out;
    std::vector<std::vector<double>> ttft(n), tpot(n), e2e(n);
    std::vector<double> within(n, 0.0), input(n, 0.0), output(n, 0.0);
    for (std::size_t i = first; i < reqs.size(); i += stride) {
        const auto& r = reqs[i];
        if (r.cls < 0) continue;
        const auto k = static_cast<std::size_t>(r.cls);
        ttft[k].push_back(ttft_of(r, st[i]));
        e2e[k].push_back(st[i].finish - r.arrival_s);
        if (has_tpot(r)) tpot[k].push_back(tpot_of(r, st[i]));
        if (within_slo(in.classes[k].slo, r, st[i])) within[k] += 1;
        input[k] += r.input;
        output[k] += r.output;
    }
    for (std::size_t k = 0; k < n; ++k) {
        auto& c = out[k];
        c.name = in.classes[k].name;
        c.share = in.classes[k].share;
        c.requests = static_cast<std::int64_t>(e2e[k].size());
        if (c.requests > 0) {
            c.mean_input = input[k] / static_cast<double>(c.requests);
            c.mean_output = output[k] / static_cast<double>(c.requests);
            if (in.classes[k].slo.any()) c.slo_attainment = within[k] / static_cast<double>(c.requests);
        }
        c.ttft_s = distribution(ttft[k]);
        c.tpot_s = distribution(tpot[k]);
        c.e2e_latency_s = distribution(e2e[k]);
        c.slo_met = slo_misses(in.classes[k].slo, c.ttft_s, c.tpot_s).empty();
    }
    return out;
}

// Iteration time summed over the replicas: by kind (carrying a prefill or decode only, compute-bound),
// weighted by the batch, and held back by the reason admission stopped.
struct IterationTotals {
    double prefill_time = 0, prefill_compute = 0, decode_time = 0, decode_compute = 0;
    double batch_time = 0, batch_weighted = 0;
    double kv_held = 0, seats_held = 0, budget_held = 0;

    void add(double dt, Held held, bool compute_bound, bool prefill, double running) {
        batch_time += dt;
        batch_weighted += dt * running;
        if (held == Held::kv) kv_held += dt;
        if (held == Held::seats) seats_held += dt;
        if (held == Held::tokens) budget_held += dt;
        (prefill ? prefill_time : decode_time) += dt;
        if (compute_bound) (prefill ? prefill_compute : decode_compute) += dt;
    }
    void into(ServingResult& res) const {
        res.mean_batch = batch_time > 0 ? batch_weighted / batch_time : 0;
        res.prefill_compute_fraction = prefill_time > 0 ? prefill_compute / prefill_time : 0;
        res.decode_compute_fraction = decode_time > 0 ? decode_compute / decode_time : 0;
        res.prefill_iteration_s = prefill_time;
        res.decode_iteration_s = decode_time;
        if (batch_time > 0) {
            res.kv_held_fraction = kv_held / batch_time;
            res.seats_held_fraction = seats_held / batch_time;
            res.budget_held_fraction = budget_held / batch_time;
        }
    }
};

// The replicas an autoscaler holds (inference.autoscale; docs/serving.md "Autoscaling"): which serve, which
// start (their cold start), which drain (no new requests; released when their last one finishes), the
// requests in the system sampled at each decision over the policy's window, and the replica-time held.
class Fleet {
public:
    enum class State : std::uint8_t { off, starting, serving, draining };

    Fleet(const Autoscale& a, int replicas, double cold_start_s)
        : a_(a),
          state_(static_cast<std::size_t>(replicas), State::off),
          since_(static_cast<std::size_t>(replicas), 0.0),
          ready_(static_cast<std::size_t>(replicas), 0.0) {
        r_.cold_start_s = cold_start_s;
        for (int k = 0; k < a.min_replicas; ++k) state_[static_cast<std::size_t>(k)] = State::serving;
        note(0.0);
    }

    [[nodiscard]] bool serving(std::size_t k) const { return state_[k] == State::serving; }
    // The next decision's time, and the first starting replica's ready time (infinity when none).
    [[nodiscard]] double next_tick() const { return ticks_ * a_.interval_s; }
    [[nodiscard]] double next_ready() const { return next_ready_; }
    // The starting replicas ready by t begin to serve.
    void make_ready(double t) {
        for (std::size_t k = 0; k < state_.size(); ++k)
            if (state_[k] == State::starting && ready_[k] <= t) state_[k] = State::serving;
        update_next_ready();
    }
    // A draining replica with nothing routed to it and nothing running is released at t.
    void release_if_idle(std::size_t k, const ReplicaLoad& load, bool running, double t) {
        if (state_[k] != State::draining || load.requests > 0 || running) return;
        free_slot(k, t);
        note(t);
    }
    // The decision at t: the requests in the system (`outstanding`) averaged over the window give the
    // replicas wanted; more are taken from the draining ones, then started; fewer drop the starting ones,
    // then drain the least loaded.
    void decide(double t, double outstanding, const std::vector<ReplicaLoad>& load,
                const std::function<bool(std::size_t)>& running) {
        if (++ticks_ > kMaxTicks)
            throw ConfigError(
                fmt::format("/inference/autoscale/interval_s: {:g}: the stream needs more than {} "
                            "decisions: expected a longer interval",
                            a_.interval_s, kMaxTicks));
        samples_.emplace_back(t, outstanding);
        sum_ += outstanding;
        while (!samples_.empty() && samples_.front().first <= t - a_.window_s) {
            sum_ -= samples_.front().second;
            samples_.pop_front();
        }
        const double mean = sum_ / static_cast<double>(samples_.size());
        const int asked = std::clamp(static_cast<int>(std::min(1e9, std::ceil(mean / a_.target_outstanding - 1e-9))),
                                     a_.min_replicas, a_.max_replicas);
        // Up at once; down to the most any decision of the past scale_down_delay_s asked for (HPA's window).
        while (!asked_.empty() && asked_.back().second <= asked) asked_.pop_back();
        asked_.emplace_back(t, asked);
        while (asked_.front().first <= t - a_.scale_down_delay_s && asked_.size() > 1) asked_.pop_front();
        const int want = asked_.front().second;
        int held = 0;
        for (const State x : state_) held += x == State::starting || x == State::serving;
        bool changed = false;
        for (std::size_t k = 0; k < state_.size() && held < want; ++k)
            if (state_[k] == State::draining) {
                state_[k] = State::serving;
                ++held;
                ++r_.scale_ups;
            }
        for (std::size_t k = 0; k < state_.size() && held < want; ++k)
            if (state_[k] == State::off) {
                state_[k] = State::starting;
                since_[k] = t;
                ready_[k] = t + r_.cold_start_s;
                ++held;
                ++r_.scale_ups;
                changed = true;
            }
        for (std::size_t k = state_.size(); k-- > 0 && held > want;)
            if (state_[k] == State::starting) {
                free_slot(k, t);
                --held;
                ++r_.scale_downs;
                changed = true;
            }
        while (held > want) {
            std::size_t pick = state_.size();
            for (std::size_t k = 0; k < state_.size(); ++k)
                if (state_[k] == State::serving && (pick == state_.size() || load[k].requests < load[pick].requests))
                    pick = k;
            state_[pick] = State::draining;
            --held;
            ++r_.scale_downs;
            if (load[pick].requests == 0 && !running(pick)) free_slot(pick, t);
            changed = true;
        }
        if (changed) note(t);
        update_next_ready();
    }
    // Every replica still held is released at `end` (the last finish); the totals for `gpus_per_replica`.
    AutoscaleResult finish(double end, int gpus_per_replica) {
        for (std::size_t k = 0; k < state_.size(); ++k)
            if (state_[k] != State::off) held_s_ += std::max(0.0, end - since_[k]);
        r_.replica_hours = held_s_ / 3600.0;
        r_.gpu_hours = r_.replica_hours * gpus_per_replica;
        r_.mean_replicas = end > 0 ? held_s_ / end : static_cast<double>(a_.min_replicas);
        return std::move(r_);
    }

private:
    // Decisions per simulation: a day at Knative's 2 s tick is 43,200.
    static constexpr std::int64_t kMaxTicks = 10'000'000;

    // Kept as the starting set changes (decide, make_ready), not scanned at every event of the loop.
    void update_next_ready() {
        next_ready_ = std::numeric_limits<double>::infinity();
        for (std::size_t k = 0; k < state_.size(); ++k)
            if (state_[k] == State::starting) next_ready_ = std::min(next_ready_, ready_[k]);
    }
    void free_slot(std::size_t k, double t) {
        held_s_ += std::max(0.0, t - since_[k]);
        state_[k] = State::off;
    }
    void note(double t) {
        int held = 0;
        for (const State x : state_) held += x != State::off;
        r_.peak_replicas = std::max(r_.peak_replicas, held);
        if (!r_.held.empty() && r_.held.back().second == held) return;
        if (!r_.held.empty() && r_.held.back().first == t)
            r_.held.back().second = held;
        else if (r_.held.size() < kMaxTicks)
            r_.held.emplace_back(t, held);
    }

    const Autoscale& a_;
    std::vector<State> state_;
    std::vector<double> since_, ready_;
    std::deque<std::pair<double, double>> samples_;
    std::deque<std::pair<double, int>> asked_;   // decisions of the delay, decreasing: its front the most
    double sum_ = 0, held_s_ = 0;
    double next_ready_ = std::numeric_limits<double>::infinity();   // the first starting replica's
    std::int64_t ticks_ = 0;
    AutoscaleResult r_;
};

// The replicas of a deployment served over time: the requests routed to them as they arrive, each
// replica's iterations composed by the scheduler policy (sim/scheduler) and priced (cost_models/inference
// iteration_cost). Events in time order: an arrival is routed before an iteration that ends at the same
// time, so a router sees every iteration that ended by then.
class ReplicaLoop {
public:
    // `offline`: every request queued at t = 0 (its saturated rates are measured).
    ReplicaLoop(const ServingJob& job, const std::vector<Request>& reqs, std::vector<RequestState>& st,
                const KvPool& pool, const ServingOptions& opt, bool offline)
        : job_(job),
          in_(job.inference),
          reqs_(reqs),
          st_(st),
          pool_(pool),
          opt_(opt),
          policy_(scheduler(job.inference.scheduler)),
          price_(job),
          emitted_(speculative_tokens_per_step(job.inference.speculative)),
          offline_(offline) {
        if (const auto& a = in_.autoscale; a.enabled() && !offline_) {
            // A starting replica reads its weights (every GPU's shard) at storage_GBps, then starts its engine.
            const auto mem = inference_memory(job.model, job.system, job.parallel, in_);
            const double replica_weights_bytes = mem.weights_bytes * job.parallel.tp * job.parallel.pp;
            cold_start_s_ = replica_weights_bytes / (a.storage_GBps * 1e9) + a.engine_start_s;
        }
    }

    // Serves the requests of `order` (in arrival order) on `count` replicas numbered from `first`, each
    // joining the replica `route` picks when it arrives (the first when route is null).
    void run(const std::vector<std::int32_t>& order, int count, int first, const RouterDef* route) {
        std::vector<Replica> reps;
        reps.reserve(static_cast<std::size_t>(count));
        for (int k = 0; k < count; ++k) reps.emplace_back(in_, pool_.blocks, reqs_, st_);
        std::vector<ReplicaLoad> load(static_cast<std::size_t>(count));
        std::vector<std::vector<std::uint32_t>> sent;   // per shared prefix: the replicas it was routed to
        using Event = std::pair<double, std::size_t>;   // (time, replica): ties go to the lower replica
        std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
        Rng draws(in_.seed ^ kRouterStream);
        // Autoscaling: only the serving replicas take arrivals (the router sees them alone); decisions and
        // cold starts ending are events before the arrivals and iterations of the same time.
        std::optional<Fleet> fleet;
        if (in_.autoscale.enabled() && !offline_) fleet.emplace(in_.autoscale, count, cold_start_s_);
        std::vector<std::size_t> serving_idx;
        std::vector<ReplicaLoad> serving_load;
        constexpr double kNever = std::numeric_limits<double>::infinity();
        for (std::size_t next = 0;;) {
            if (fleet) {
                const double t_arrival =
                    next < order.size() ? reqs_[static_cast<std::size_t>(order[next])].arrival_s : kNever;
                const double t_now = std::min(t_arrival, events.empty() ? kNever : events.top().first);
                const double t_ready = fleet->next_ready();
                const double t_tick = next < order.size() || !events.empty() ? fleet->next_tick() : kNever;
                if (t_ready < kNever && t_ready <= t_now && t_ready <= t_tick) {
                    fleet->make_ready(t_ready);
                    continue;
                }
                if (t_tick < kNever && t_tick <= t_now) {
                    double outstanding = 0;
                    for (const auto& l : load) outstanding += static_cast<double>(l.requests);
                    fleet->decide(t_tick, outstanding, load, [&](std::size_t k) { return reps[k].scheduled; });
                    continue;
                }
            }
            if (next < order.size() &&
                (events.empty() || reqs_[static_cast<std::size_t>(order[next])].arrival_s <= events.top().first)) {
                const auto id = static_cast<std::size_t>(order[next]);
                const Request& rq = reqs_[id];
                // Where this request's shared prefix was routed before, as the router's tree of prompts holds it.
                std::vector<std::uint32_t>* went = nullptr;
                if (route && route->reads_prefixes && rq.group >= 0) {
                    if (sent.empty()) sent.resize(static_cast<std::size_t>(in_.shared_prefix.groups));
                    went = &sent[static_cast<std::size_t>(rq.group)];
                    const double share = in_.shared_prefix.tokens_of(rq.input) / rq.input;
                    for (const auto r : *went) load[r].match = share;
                }
                std::size_t k = 0;
                if (fleet) {
                    serving_idx.clear();
                    serving_load.clear();
                    for (std::size_t r = 0; r < load.size(); ++r)
                        if (fleet->serving(r)) {
                            serving_idx.push_back(r);
                            serving_load.push_back(load[r]);
                        }
                    k = serving_idx[route->route(serving_load, next, draws.next())];
                } else if (route) {
                    k = route->route(load, next, draws.next());
                }
                if (went) {
                    for (const auto r : *went) load[r].match = 0;
                    if (std::find(went->begin(), went->end(), k) == went->end())
                        went->push_back(static_cast<std::uint32_t>(k));
                }
                ++next;
                Replica& x = reps[k];
                x.mine.push_back(static_cast<std::int32_t>(id));
                st_[id].replica = first + static_cast<std::int32_t>(k);
                load[k].requests += 1;
                load[k].tokens += reqs_[id].input;
                if (!x.scheduled) {   // idle: it looks for work when the request arrives
                    x.t = std::max(x.t, reqs_[id].arrival_s);
                    x.scheduled = true;
                    events.emplace(x.t, k);
                }
                continue;
            }
            if (events.empty()) break;
            const std::size_t k = events.top().second;
            events.pop();
            Replica& x = reps[k];
            x.scheduled = boundary(x, first + static_cast<int>(k), load[k]);
            if (x.scheduled) events.emplace(x.t, k);
            if (fleet) fleet->release_if_idle(k, load[k], x.scheduled, x.t);
        }
        for (std::size_t k = 0; k < reps.size(); ++k) {
            const Replica& x = reps[k];
            if (x.done < x.mine.size()) throw ConfigError("/inference: the scheduler made no progress");
            if (offline_) saturated.add(x.progress, x.t_saturated, x.peak);
            if (first + static_cast<int>(k) == 0 && x.t > 0)
                kv_occupancy_mean_ = x.occ_area / x.t / static_cast<double>(pool_.blocks);
            preemptions_ += x.rs.preemptions;
            prompt_tokens_ += x.rs.prompt_tokens;
            hit_tokens_ += x.rs.hit_tokens;
            end_all = std::max(end_all, x.t);
        }
        if (fleet) autoscale_ = fleet->finish(end_all, job_.parallel.tp * job_.parallel.pp);
    }

    // The iteration totals, KV occupancy, peak batch, preemptions and timeline, into `res`.
    void into(ServingResult& res) {
        totals_.into(res);
        res.kv_occupancy_max = kv_occupancy_max_;
        res.kv_occupancy_mean = kv_occupancy_mean_;
        res.peak_batch = peak_batch_;
        res.preemptions = preemptions_;
        res.prefix_hit_fraction = prompt_tokens_ > 0 ? hit_tokens_ / prompt_tokens_ : 0.0;
        res.timeline = std::move(timeline_);
        res.autoscale = std::move(autoscale_);
    }

    SaturatedRates saturated;    // offline: the replicas' saturated rates
    double end_all = 0;          // the last replica's last iteration end
    double in_system_area = 0;   // summed time in system of the finished requests
    std::int64_t iterations = 0;

private:
    // Power of two choices' draws: a stream of its own, so routing leaves the arrivals and lengths alone.
    static constexpr std::uint64_t kRouterStream = 0x5EEDF00DCAFEULL;

    struct Replica {
        Replica(const InferenceConfig& in, std::int64_t blocks, const std::vector<Request>& reqs,
                std::vector<RequestState>& st)
            : rs(in, blocks, reqs, st) {}
        ReplicaScheduler rs;
        std::vector<std::int32_t> mine;   // the requests routed here, in arrival order
        std::size_t next_arrival = 0;     // of `mine`, the first not yet in the waiting queue
        std::size_t done = 0;
        double t = 0;             // the end of the iteration in flight, or when it next looks for work
        bool scheduled = false;   // an event at t is queued
        bool in_flight = false;   // an iteration ending at t is composed and not yet applied
        bool waited = false;      // the iteration in flight began with a request waiting
        double occ_area = 0;      // KV blocks in use x time
        double t_saturated = 0;   // end of the last iteration that began with a request waiting
        double peak = 0;          // most sequences in one of its iterations
        CompletionSeries progress;
        // Fast decode steps (arm, fast_apply, fast_compose, settle): while every running sequence decodes one
        // token per iteration and none finishes, no request waits and none arrives, an iteration is the last
        // one with n more tokens of context: it is applied and composed in O(1), the sequences' own counts
        // (generated tokens, KV blocks) settled when the run of such steps ends. The events, their order and
        // every number are the per-sequence loop's.
        struct FastDecode {
            bool armed = false;
            bool blocks = false;         // steps take KV blocks (on-demand admission)
            double n = 0;                // running sequences, all decoding
            double kv_tokens = 0;        // the context they attend to in the iteration last composed
            double min_left = 0;         // fewest output tokens left, when armed
            std::int64_t applied = 0;    // iterations applied since armed
            std::int64_t composed = 0;   // iterations composed since armed
            // Steps at which sequences take a block: each one first at m = 16·blocks − context (when armed),
            // then every kKvBlockTokens steps; `bucket[m % 16]` counts those past their first, `later` holds
            // first steps beyond the first 16, in order.
            std::array<std::int64_t, kKvBlockTokens> bucket{};
            std::vector<std::int64_t> later;
            std::size_t later_at = 0;
        } fast;
    };

    // The replica at its time t: the iteration in flight applied, the requests arrived by t queued, and the
    // next iteration composed and priced. False when it has nothing to run until a request arrives.
    bool boundary(Replica& x, int rep, ReplicaLoad& load) {
        auto& rs = x.rs;
        if (x.in_flight) {
            x.in_flight = false;
            if (!fast_apply(x, load)) {
                settle(x);
                const Progress step = apply_iteration(rs, st_, reqs_, x.t, emitted_, x.done, in_system_area);
                load.requests -= static_cast<std::int64_t>(step.requests);
                load.tokens += step.output_tokens - step.finished_tokens;
                if (offline_) {
                    x.progress.add(step);
                    if (x.waited) x.t_saturated = x.t;
                }
            }
        }
        while (x.next_arrival < x.mine.size() &&
               reqs_[static_cast<std::size_t>(x.mine[x.next_arrival])].arrival_s <= x.t)
            rs.waiting.push_back(rs.fresh(x.mine[x.next_arrival++]));
        if (rs.running.empty() && rs.waiting.empty()) return false;
        x.waited = !rs.waiting.empty();
        IterationBatch b;
        Held held = Held::none;
        if (!fast_compose(x, b)) {
            settle(x);
            held = policy_.compose(rs, b, x.t);
            if (b.tokens() <= 0) return false;   // nothing can run until a request arrives
            arm(x, b);
        }
        sequence_steps_ += static_cast<double>(rs.running.size());
        if (++iterations > opt_.max_iterations || sequence_steps_ > opt_.max_sequence_steps)
            throw ConfigError(
                fmt::format("/inference/requests: {}: the simulation passed its work limit of {} "
                            "iterations or {:.3g} sequence-steps (preemptions recompute): expected fewer "
                            "requests",
                            in_.requests, opt_.max_iterations, opt_.max_sequence_steps));
        const auto cost = price_(b);
        double dt = cost.time_s;
        if (b.decode_seqs > 0) dt += draft_cost_s(job_, b.decode_seqs, b.decode_kv_tokens / b.decode_seqs);
        const double t0 = x.t;
        x.t += dt;
        const double used = static_cast<double>(pool_.blocks - rs.free_blocks);
        x.occ_area += dt * used;
        kv_occupancy_max_ = std::max(kv_occupancy_max_, used / static_cast<double>(pool_.blocks));
        const auto running = static_cast<double>(rs.running.size());
        totals_.add(dt, held, cost.compute_bound(), b.prefill_tokens > 0, running);
        peak_batch_ = std::max(peak_batch_, static_cast<std::int64_t>(rs.running.size()));
        x.peak = std::max(x.peak, running);
        if (opt_.timeline)
            timeline_.push_back({t0, x.t, rep, static_cast<std::int32_t>(b.prefill_tokens),
                                 static_cast<std::int32_t>(b.decode_seqs), cost.compute_bound()});
        x.in_flight = true;
        return true;
    }

    // After a composed iteration that steps every running sequence by one decode token, with none waiting:
    // the fast steps' state, when at least one can follow (online, one token per step, no speculation).
    void arm(Replica& x, const IterationBatch& b) {
        auto& f = x.fast;
        const auto& rs = x.rs;
        const auto n = static_cast<double>(rs.running.size());
        if (!opt_.fast_decode_steps || offline_ || emitted_ != 1.0 || b.decode_tokens_per_seq != 1.0 ||
            in_.speculative.enabled || b.prefill_tokens > 0 || b.decode_seqs != n || !rs.waiting.empty() ||
            !(rs.min_left >= 3) || !std::isfinite(rs.min_left))
            return;
        f = {};
        f.armed = true;
        f.n = n;
        f.kv_tokens = b.decode_kv_tokens;
        f.min_left = rs.min_left;
        // Under reservation a request holds blocks for its whole output from admission: no step takes one.
        f.blocks = !in_.kv_reserve;
        if (!f.blocks) return;
        for (const auto& q : rs.running) {
            const std::int64_t m = first_block_step(q);
            if (m < 1) {   // a step short of its block (never after decodes): the per-sequence loop decides
                f.armed = false;
                return;
            }
            if (m <= kKvBlockTokens)
                ++f.bucket[static_cast<std::size_t>(m % kKvBlockTokens)];
            else if (static_cast<double>(m) < f.min_left)
                f.later.push_back(m);
        }
        std::sort(f.later.begin(), f.later.end());
    }

    // The step (counted from the iteration armed on) at which `q` first needs another KV block, from its counts
    // as they were armed: 16·(blocks held) − context, at least 1 (the armed iteration's step had its block).
    std::int64_t first_block_step(const Seq& q) const {
        const auto& r = reqs_[static_cast<std::size_t>(q.req)];
        const double ctx = r.input + st_[static_cast<std::size_t>(q.req)].generated;
        return static_cast<std::int64_t>(static_cast<double>((q.blocks + q.cached) * kKvBlockTokens) - ctx);
    }

    // The iteration in flight applied in O(1): every sequence one more token, none finishing.
    bool fast_apply(Replica& x, ReplicaLoad& load) {
        auto& f = x.fast;
        if (!f.armed || f.min_left - static_cast<double>(f.applied) < 2) return false;
        ++f.applied;
        load.tokens += f.n;   // each sequence's token, as apply_iteration counts it; none finished
        return true;
    }

    // The next iteration composed in O(1): the same sequences, each with one more token of context, the
    // blocks of those crossing into a new one taken from the free ones.
    bool fast_compose(Replica& x, IterationBatch& b) {
        auto& f = x.fast;
        auto& rs = x.rs;
        if (!f.armed || !rs.waiting.empty()) return false;
        const std::int64_t m = f.composed + 1;
        std::int64_t need = 0;
        if (f.blocks) {
            while (f.later_at < f.later.size() && f.later[f.later_at] <= m)
                ++f.bucket[static_cast<std::size_t>(f.later[f.later_at++] % kKvBlockTokens)];
            need = f.bucket[static_cast<std::size_t>(m % kKvBlockTokens)];
            if (need > rs.free_blocks) return false;
        }
        poll_interrupt();   // as ReplicaScheduler::begin does for every composed iteration
        rs.free_blocks -= need;
        f.composed = m;
        f.kv_tokens += f.n;
        b = IterationBatch{};
        b.decode_seqs = f.n;
        b.decode_kv_tokens = f.kv_tokens;
        return true;
    }

    // The sequences' own counts brought up to the fast steps taken, and the fast state dropped: before
    // anything reads them (the per-sequence apply, a composition, a preemption).
    void settle(Replica& x) {
        auto& f = x.fast;
        if (!f.armed) return;
        f.armed = false;
        for (auto& q : x.rs.running) {
            if (f.blocks) {
                const std::int64_t m = first_block_step(q);
                if (f.composed >= m) q.blocks += 1 + (f.composed - m) / kKvBlockTokens;
            }
            st_[static_cast<std::size_t>(q.req)].generated += static_cast<double>(f.applied);
        }
    }

    const ServingJob& job_;
    const InferenceConfig& in_;
    const std::vector<Request>& reqs_;
    std::vector<RequestState>& st_;
    const KvPool& pool_;
    const ServingOptions& opt_;
    const SchedulerDef& policy_;
    IterationPricer price_;
    double emitted_ = 1;   // tokens a decode step produces per sequence
    bool offline_ = false;
    double sequence_steps_ = 0;
    IterationTotals totals_;
    double kv_occupancy_max_ = 0, kv_occupancy_mean_ = 0;
    std::int64_t peak_batch_ = 0, preemptions_ = 0;
    double prompt_tokens_ = 0, hit_tokens_ = 0;
    std::vector<ServingIteration> timeline_;
    double cold_start_s_ = 0;
    std::optional<AutoscaleResult> autoscale_;
};

}   // namespace

namespace {

// Under autoscaling, each window's replicas held averaged over its time up to `end` (a profile's slice over
// every period the stream spans): the step function `held` integrated through its running area. Left at -1
// when the windows times the periods spanned pass kMaxWindowCells (a command's work stays bounded).
void replicas_per_window(const std::vector<std::pair<double, int>>& held, const WindowPlan& plan, double end,
                         std::vector<ServingWindow>& windows) {
    constexpr double kMaxWindowCells = 1e7;
    if (held.empty() || windows.empty() || !(end > 0)) return;
    std::vector<double> area(held.size(), 0.0);   // of held over [0, held[i].first)
    for (std::size_t i = 1; i < held.size(); ++i)
        area[i] = area[i - 1] + (held[i].first - held[i - 1].first) * held[i - 1].second;
    const auto upto = [&](double t) {   // of held over [0, t)
        const auto it = std::upper_bound(held.begin(), held.end(), t,
                                         [](double x, const std::pair<double, int>& h) { return x < h.first; });
        if (it == held.begin()) return 0.0;
        const auto i = static_cast<std::size_t>(it - held.begin()) - 1;
        return area[i] + (t - held[i].first) * held[i].second;
    };
    const double periods = plan.period_s > 0 ? std::ceil(end / plan.period_s) : 1.0;
    if (periods * static_cast<double>(windows.size()) > kMaxWindowCells) return;
    const double period = plan.period_s > 0 ? plan.period_s : 0.0;
    for (std::size_t j = 0; j < windows.size(); ++j) {
        const double start = static_cast<double>(j) * plan.width_s;
        double sum = 0, span = 0;
        for (double p = 0; p < periods; p += 1) {
            const double a = p * period + start, b = std::min(a + plan.width_s, end);
            if (!(b > a)) continue;
            sum += upto(b) - upto(a);
            span += b - a;
        }
        if (span > 0) windows[j].mean_replicas = sum / span;
    }
}

// Each arrival reads every replica's load: bounded as the sequence-steps are, before anything runs.
void check_router_work(const InferenceConfig& in, const RouterDef& route, int replicas, std::size_t requests,
                       const ServingOptions& opt, bool autoscaled = false) {
    // An autoscaler reads every replica's load too, whatever the router.
    const double loads_read = router_loads_read(route.uses_load || autoscaled, replicas, static_cast<double>(requests));
    if (loads_read > opt.max_sequence_steps)
        throw ConfigError(fmt::format(
            "/inference/router: \"{}\" over {} replicas and {} requests reads {:.3g} replica loads, past the "
            "serving simulator's work limit ({:.3g}): expected fewer requests or replicas, or \"round-robin\"",
            to_string(in.router), replicas, requests, loads_read, opt.max_sequence_steps));
}

// Serves the requests of `order` (in arrival order) on `replicas` replicas. Round robin sees no load: each
// replica runs alone on its share (only `sampled`'s when it is >= 0). A router that reads the replicas'
// load runs them together, every replica simulated.
void serve_stream(ReplicaLoop& loop, const std::vector<std::int32_t>& order, int replicas, const RouterDef& route,
                  int sampled, bool autoscaled = false) {
    if (route.uses_load || autoscaled) {   // an autoscaler's replicas share the stream as the fleet changes
        loop.run(order, replicas, 0, &route);
        return;
    }
    for (int rep = std::max(0, sampled); rep < (sampled >= 0 ? sampled + 1 : replicas); ++rep) {
        // This replica's requests: every replicas-th one (round robin).
        std::vector<std::int32_t> mine;
        for (std::size_t i = static_cast<std::size_t>(rep); i < order.size(); i += static_cast<std::size_t>(replicas))
            mine.push_back(order[i]);
        loop.run(mine, 1, rep, nullptr);
    }
}

// Whether the measured percentiles meet the scenario's SLO (into res.slo_met).
void judge_slo(const InferenceConfig& in, ServingResult& res) {
    if (!stream_slo_misses(in, res).empty()) res.slo_met = false;
    // Past capacity the percentiles grow with the stream's length: no SLO is met there, whatever it names.
    if (in.slo.any() && !res.steadiness.keeps_up) res.slo_met = false;
}

double percentile(const Distribution& d, int p) { return p == 90 ? d.p90 : d.p99; }

std::vector<std::int32_t> in_order(std::size_t n) {
    std::vector<std::int32_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::int32_t>(i);
    return order;
}

ServingResult simulate_disaggregated(const ServingJob& job, const ServingOptions& opt);

}   // namespace

std::vector<SloMiss> slo_misses(const ServingSlo& slo, const Distribution& ttft_s, const Distribution& tpot_s) {
    std::vector<SloMiss> out;
    for (const auto& t : slo.targets()) {
        const double measured = percentile(t.ttft ? ttft_s : tpot_s, t.percentile);
        if (measured > t.seconds) out.push_back({t, measured});
    }
    return out;
}

std::vector<StreamSloMiss> stream_slo_misses(const InferenceConfig& in, const ServingResult& r) {
    std::vector<StreamSloMiss> out;
    if (r.classes.empty()) {
        for (const auto& m : slo_misses(in.slo, r.ttft_s, r.tpot_s)) out.push_back({"", m});
        return out;
    }
    for (std::size_t k = 0; k < r.classes.size() && k < in.classes.size(); ++k)
        for (const auto& m : slo_misses(in.classes[k].slo, r.classes[k].ttft_s, r.classes[k].tpot_s))
            out.push_back({r.classes[k].name, m});
    return out;
}

double stream_slo_ratio(const InferenceConfig& in, bool ttft, const ServingResult& r) {
    if (r.classes.empty()) return slo_ratio(in.slo, ttft, r.ttft_s, r.tpot_s);
    double worst = 0;
    for (std::size_t k = 0; k < r.classes.size() && k < in.classes.size(); ++k)
        worst = std::max(worst, slo_ratio(in.classes[k].slo, ttft, r.classes[k].ttft_s, r.classes[k].tpot_s));
    return worst;
}

double slo_ratio(const ServingSlo& slo, bool ttft, const Distribution& ttft_s, const Distribution& tpot_s) {
    double worst = 0;
    for (const auto& t : slo.targets())
        if (t.ttft == ttft) worst = std::max(worst, percentile(ttft ? ttft_s : tpot_s, t.percentile) / t.seconds);
    return worst;
}

ParallelConfig prefill_layout(const Disaggregation& d) {
    ParallelConfig p;
    p.tp = std::max(1, d.prefill_tp);
    p.dp = std::max(1, d.prefill_gpus / p.tp);
    p.ep = std::max(1, d.prefill_ep);
    return p;
}

InferenceConfig pool_inference(const InferenceConfig& in, bool prefill) {
    InferenceConfig p = in;
    p.disaggregation = {};
    if (prefill) p.speculative = {};
    return p;
}

ServingResult simulate_serving(const ServingJob& job, const ServingOptions& opt) {
    if (job.inference.disaggregation.enabled()) return simulate_disaggregated(job, opt);
    const auto& in = job.inference;
    ServingResult res;
    const auto reqs = request_stream(in);
    const WindowPlan windows = window_plan(in, reqs);   // refused before anything runs when too many
    const int replicas = job.replicas();
    res.replicas = replicas;
    res.requests = static_cast<std::int64_t>(reqs.size());
    const KvPool pool = kv_pool(job);
    res.kv_blocks = pool.blocks;
    const auto& sp = in.speculative;
    res.spec_tokens_per_step = speculative_tokens_per_step(sp);   // produced per decode sequence
    const RouterDef& route = router(in.router);
    const bool offline = in.qps <= 0;
    // An offline run (the deployment's throughput, which the reports compare a stream with) holds every replica.
    const bool autoscaled = in.autoscale.enabled() && !offline;
    check_router_work(in, route, replicas, reqs.size(), opt, autoscaled);
    check_stream(in, reqs, pool, decode_step_tokens(sp), res.spec_tokens_per_step, opt);

    std::vector<RequestState> st(reqs.size());
    ReplicaLoop loop(job, reqs, st, pool, opt, offline);
    const int sampled =
        route.uses_load || autoscaled ? -1 : (opt.sample_replica >= 0 ? opt.sample_replica % replicas : -1);
    res.sampled_replica = sampled;
    serve_stream(loop, in_order(reqs.size()), replicas, route, sampled, autoscaled);
    loop.into(res);
    const SaturatedRates& saturated = loop.saturated;
    const double end_all = loop.end_all, in_system_area = loop.in_system_area;
    const std::int64_t iterations = loop.iterations;
    // Measures over requests (the simulated replica's when one was sampled).
    const std::size_t first = sampled >= 0 ? static_cast<std::size_t>(sampled) : 0;
    const std::size_t stride = sampled >= 0 ? static_cast<std::size_t>(replicas) : 1;
    const double scale = sampled < 0              ? 1.0
                         : opt.fleet_replicas > 0 ? opt.fleet_replicas
                                                  : replicas;   // to the deployment's
    const RequestMeasures m = request_measures(reqs, st, first, stride, res);
    res.classes = class_results(in, reqs, st, first, stride);
    const double simulated = static_cast<double>(res.requests);
    const double out_tokens = m.output_tokens, in_tokens = m.input_tokens;
    res.steadiness = steadiness(reqs, st, first, stride, scale, in.qps > 0, in.rate_profile);
    res.windows = stream_windows(in, windows, reqs, st, first, stride, scale);
    if (res.autoscale) replicas_per_window(res.autoscale->held, windows, end_all, res.windows);
    res.makespan_s = end_all;
    res.iterations = iterations;
    if (end_all > 0) {
        res.requests_per_s = scale * simulated / end_all;
        res.output_tokens_per_s = scale * out_tokens / end_all;
        res.input_tokens_per_s = scale * in_tokens / end_all;
        res.mean_in_system = scale * in_system_area / end_all;
    }
    if (offline) {
        res.steadiness.applies = true;
        res.steadiness.long_enough = saturated.measured;
        res.steadiness.saturated_s = saturated.span_s;
        if (saturated.measured) {
            res.requests_per_s = scale * saturated.rates.requests;
            res.output_tokens_per_s = scale * saturated.rates.output_tokens;
            res.input_tokens_per_s = scale * saturated.rates.input_tokens;
            res.steadiness.served_qps = res.requests_per_s;
        }
    }
    res.output_tokens_per_s_per_gpu = res.output_tokens_per_s / job.gpus();
    judge_slo(in, res);
    return res;
}

namespace {

// A disaggregated deployment's iteration statistics from its pools': the decode pool's batch and KV cache,
// the held shares weighted by each pool's iteration time, the decode replicas' timeline tracks after the
// prefill replicas'.
void merge_pools(ServingResult& res, ServingResult& pr, const ServingResult& dr, int prefill_replicas) {
    res.mean_batch = dr.mean_batch;
    res.kv_occupancy_mean = dr.kv_occupancy_mean;
    res.kv_occupancy_max = dr.kv_occupancy_max;
    res.peak_batch = dr.peak_batch;
    res.preemptions = pr.preemptions + dr.preemptions;
    res.prefill_compute_fraction = pr.prefill_compute_fraction;
    res.decode_compute_fraction = dr.decode_compute_fraction;
    res.prefill_iteration_s = pr.prefill_iteration_s + dr.prefill_iteration_s;
    res.decode_iteration_s = pr.decode_iteration_s + dr.decode_iteration_s;
    const double tp = pr.prefill_iteration_s + pr.decode_iteration_s;
    const double td = dr.prefill_iteration_s + dr.decode_iteration_s;
    auto mix = [&](double a, double b) { return tp + td > 0 ? (a * tp + b * td) / (tp + td) : 0.0; };
    res.kv_held_fraction = mix(pr.kv_held_fraction, dr.kv_held_fraction);
    res.seats_held_fraction = mix(pr.seats_held_fraction, dr.seats_held_fraction);
    res.budget_held_fraction = mix(pr.budget_held_fraction, dr.budget_held_fraction);
    res.timeline = std::move(pr.timeline);
    for (auto it : dr.timeline) {
        it.replica += prefill_replicas;
        res.timeline.push_back(it);
    }
}

// Disaggregated prefill and decode (docs/serving.md "Disaggregated prefill and decode"): the stream's
// prompts are served by the prefill pool (each request prefilled, its first token sampled there); each
// prompt's KV cache then leaves over its prefill replica's links, one transfer at a time per replica, at
// the slower side's bytes per GPU over the link's rate; the request joins the decode pool when it lands,
// admitted with its cache (it decodes at once) and generating the rest of its output. TTFT is the prefill
// pool's; TPOT spans the transfer and the decode pool's queue.
ServingResult simulate_disaggregated(const ServingJob& job, const ServingOptions& opt) {
    const auto& in = job.inference;
    const auto& dg = in.disaggregation;
    ServingResult res;
    const auto reqs = request_stream(in);
    const WindowPlan windows = window_plan(in, reqs);   // refused before anything runs when too many
    const std::size_t n = reqs.size();
    res.requests = static_cast<std::int64_t>(n);
    const bool offline = in.qps <= 0;

    // The pools: the prefill pool makes one token per request (no speculation); the decode pool is the
    // scenario's layout.
    const ParallelConfig prefill_parallel = prefill_layout(dg);
    const InferenceConfig prefill_in = pool_inference(in, true), decode_in = pool_inference(in, false);
    const ServingJob prefill{job.model, job.system, prefill_parallel, prefill_in};
    const ServingJob decode{job.model, job.system, job.parallel, decode_in};
    const int prefill_replicas = prefill.replicas(), decode_replicas = decode.replicas();
    const KvPool prefill_pool = kv_pool(prefill), decode_pool = kv_pool(decode);
    res.replicas = decode_replicas;
    res.kv_blocks = decode_pool.blocks;
    res.spec_tokens_per_step = speculative_tokens_per_step(in.speculative);
    const RouterDef& route = router(in.router);
    check_router_work(in, route, std::max(prefill_replicas, decode_replicas), n, opt);

    // One copy of the stream and one state per request serve both pools (the work bound counts requests):
    // the prompts, each cut to its first token, become the decode pool's stream once their caches land.
    std::vector<Request> stream = reqs;
    for (auto& r : stream) r.output = 1;
    check_stream(prefill_in, stream, prefill_pool, 1.0, 1.0, opt);
    check_stream(decode_in, reqs, decode_pool, decode_step_tokens(in.speculative), res.spec_tokens_per_step, opt);

    // 1. The prefill pool: each request's first token (and its admission) is the user's.
    std::vector<RequestState> st(n);
    ReplicaLoop pre(prefill, stream, st, prefill_pool, opt, offline);
    serve_stream(pre, in_order(n), prefill_replicas, route, -1);

    // 2. The KV transfers, first finished first, one at a time on each prefill replica's links.
    const double bytes_per_token = std::max(prefill_pool.bytes_per_token, decode_pool.bytes_per_token);
    const double link_Bps = dg.link_GBps * 1e9;
    if (!(link_Bps > 0))
        throw ConfigError(
            fmt::format("/inference/disaggregation/link_GBps: {}: expected a KV-transfer rate > 0 GB/s "
                        "(the system states none for {} GPUs)",
                        dg.link_GBps, job.gpus() + dg.prefill_gpus));
    std::vector<std::int32_t> order = in_order(n);
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
        return st[static_cast<std::size_t>(a)].finish < st[static_cast<std::size_t>(b)].finish;
    });
    std::vector<double> link_free(static_cast<std::size_t>(prefill_replicas), 0.0);
    std::vector<double> transfer_s;
    transfer_s.reserve(n);
    double link_busy_s = 0, bytes_moved = 0;
    for (const std::int32_t id : order) {
        const auto i = static_cast<std::size_t>(id);
        const double bytes = reqs[i].input * bytes_per_token;
        const double busy = bytes / link_Bps;
        auto& free_at = link_free[static_cast<std::size_t>(std::max(0, st[i].replica))];
        const double start = std::max(st[i].finish, free_at);
        free_at = start + busy;
        stream[i].arrival_s = start + busy + dg.link_latency_s;   // at the decode pool
        stream[i].output = reqs[i].output;
        transfer_s.push_back(stream[i].arrival_s - st[i].finish);
        link_busy_s += busy;
        bytes_moved += bytes;
    }

    // 3. The decode pool: the requests with tokens left to generate, in the order their caches land, each
    // with its first token (generated = 1) and its cache; a one-token request ended on the prefill pool.
    std::erase_if(order, [&](std::int32_t id) { return reqs[static_cast<std::size_t>(id)].output <= 1; });
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
        return stream[static_cast<std::size_t>(a)].arrival_s < stream[static_cast<std::size_t>(b)].arrival_s;
    });
    for (const std::int32_t id : order) {
        auto& s = st[static_cast<std::size_t>(id)];
        s.finish = -1;
        s.kv_held = true;
    }
    // Offline, the decode pool measures its own saturated rate while landed caches wait for it (its
    // bottleneck case): its rate from the first landing to its last token counts its fill and drain.
    ReplicaLoop dec(decode, stream, st, decode_pool, opt, offline);
    serve_stream(dec, order, decode_replicas, route, -1);
    ServingResult pr, dr;
    pre.into(pr);
    dec.into(dr);
    merge_pools(res, pr, dr, prefill_replicas);
    res.iterations = pre.iterations + dec.iterations;

    const RequestMeasures m = request_measures(reqs, st, 0, 1, res);
    res.classes = class_results(in, reqs, st, 0, 1);
    res.steadiness = steadiness(reqs, st, 0, 1, 1.0, in.qps > 0, in.rate_profile);
    res.windows = stream_windows(in, windows, reqs, st, 0, 1, 1.0);
    const double end_all = std::max(pre.end_all, dec.end_all);
    res.makespan_s = end_all;
    double in_system = 0;
    for (std::size_t i = 0; i < n; ++i) in_system += st[i].finish - reqs[i].arrival_s;
    if (end_all > 0) {
        res.requests_per_s = static_cast<double>(n) / end_all;
        res.output_tokens_per_s = m.output_tokens / end_all;
        res.input_tokens_per_s = m.input_tokens / end_all;
        res.mean_in_system = in_system / end_all;
    }
    if (offline && !order.empty()) {
        // Every prompt queued at t = 0: the deployment's rate is its slower pool's, the prefill pool's
        // saturated rate or the decode pool's from the first landing to its last token (the makespan's
        // ramp-up before the first landing is no steady state).
        const double t0 = stream[static_cast<std::size_t>(order.front())].arrival_s;
        double rate = dec.saturated.measured && dec.saturated.rates.requests > 0 ? dec.saturated.rates.requests
                      : dec.end_all > t0 ? static_cast<double>(n) / (dec.end_all - t0)
                                         : res.requests_per_s;
        if (pre.saturated.measured) rate = std::min(rate, pre.saturated.rates.requests);
        if (res.requests_per_s > 0) {
            const double k = rate / res.requests_per_s;
            res.output_tokens_per_s *= k;
            res.input_tokens_per_s *= k;
        }
        res.requests_per_s = rate;
    }
    res.output_tokens_per_s_per_gpu = res.output_tokens_per_s / (job.gpus() + dg.prefill_gpus);

    DisaggregatedPools d;
    d.prefill = {prefill_replicas, dg.prefill_tp, pr.mean_batch, pre.iterations, pr.preemptions, 0, 0};
    d.decode = {
        decode_replicas, job.parallel.tp, dr.mean_batch, dec.iterations, dr.preemptions, dr.kv_occupancy_mean, 0};
    if (end_all > 0) {
        d.prefill.busy_fraction = (pr.prefill_iteration_s + pr.decode_iteration_s) / (prefill_replicas * end_all);
        d.decode.busy_fraction = (dr.prefill_iteration_s + dr.decode_iteration_s) / (decode_replicas * end_all);
        d.link_busy_fraction = link_busy_s / (prefill_replicas * end_all);
    }
    d.transfer_s = distribution(transfer_s);
    d.link_GBps = dg.link_GBps;
    d.transfer_bytes_mean = n > 0 ? bytes_moved / static_cast<double>(n) : 0;
    res.disaggregated = d;
    judge_slo(in, res);
    return res;
}

}   // namespace

std::vector<std::int64_t> capacity_max_batches(const InferenceConfig& in) {
    const std::int64_t m = in.max_batch;
    if (m <= 0) return {0, 256, 128};   // KV-limited, vLLM's default max_num_seqs, its half
    std::vector<std::int64_t> out{m};
    if (m / 2 >= 1) out.push_back(m / 2);
    out.push_back(2 * m);
    return out;
}

std::vector<std::int64_t> capacity_chunks(const InferenceConfig& in) {
    std::vector<std::int64_t> out{in.max_batch_tokens};
    for (std::int64_t c : {std::int64_t{0}, std::int64_t{2048}, std::int64_t{8192}})
        if (c != in.max_batch_tokens) out.push_back(c);
    return out;
}

Scenario capacity_scenario(const Scenario& base, const CapacityCandidate& c) {
    Scenario s = base;
    s.inference.batching = Batching::continuous;
    s.inference.weight_precision = c.weight_precision;
    s.inference.kv_precision = c.kv_precision;
    s.inference.max_batch = c.max_batch;
    s.inference.max_batch_tokens = c.max_batch_tokens;
    s.parallel = ParallelConfig{};
    s.parallel.tp = c.tp;
    s.parallel.pp = c.pp;
    s.parallel.dp = c.replicas;
    s.gpus = c.gpus();
    return s;
}

namespace {

// One (tp, pp, precision) group of the capacity search: its max_batch x chunk variants.
struct GroupOutcome {
    std::optional<CapacityCandidate> best;
    std::int64_t simulations = 0, variants = 0;
    double most_per_replica_qps = 0;   // the largest offline rate of one replica seen (for the reason)
};

// Judges candidate `c` (its result, whether it meets) on a stream spanning kCapacityStreamS of arrivals at
// `qps` (at most kCapacityMaxRequests requests): one sampled replica's share of it unless `whole`.
// While searching, a router that reads the replicas' load is judged as round robin, one sampled replica:
// balancing on load serves a fleet at least as well as turns do, so the replicas found bound its own, and
// simulating every replica of every probe took minutes a candidate at thousands of requests/s (and failed
// at the work limit). Its own routing judges the winner whole (confirm_whole), unless that is past the work
// limit of check_router_work too (`routed_round_robin`). A fleet whose stream passes the cap is judged as
// its probes were, even `whole`: the whole deployment's capped stream gives each replica too few requests
// to miss.
void judge_candidate(const Scenario& base, CapacityCandidate& c, bool whole) {
    Scenario sc = capacity_scenario(base, c);
    sc.inference.requests = capacity_stream_requests(base.inference);
    c.routed_round_robin =
        whole && router_past_work_limit(sc.inference.router, c.replicas, static_cast<double>(sc.inference.requests));
    if (!whole || c.routed_round_robin) sc.inference.router = RouterPolicy::round_robin;
    const Scenario probe = sampled_probe_scenario(sc, kCapacityStreamS, kCapacityMaxRequests);
    ServingOptions o;
    if (whole && probe.parallel.dp == sc.parallel.dp) {
        c.result = simulate_serving(sc.serving_job(), o);
    } else {
        o.sample_replica = 0;
        o.fleet_replicas = c.replicas;
        c.result = simulate_serving(probe.serving_job(), o);
    }
    c.meets = c.result.slo_met;
}

// The fewest replicas of `c` (its layout and variant) from `lo` to `hi` meeting the SLO at base's qps, judged
// on one sampled replica's share: more replicas never hurt latency, so an exponential step up from `lo`
// then a bisection. None when `hi` replicas miss.
std::optional<CapacityCandidate> fewest_sampled_replicas(const Scenario& base, CapacityCandidate c, int lo, int hi,
                                                         std::int64_t& simulations) {
    auto meets = [&](CapacityCandidate& x) {
        judge_candidate(base, x, false);
        ++simulations;
        return x.meets;
    };
    std::optional<CapacityCandidate> found;
    int miss = lo - 1;
    for (int r = lo;;) {
        c.replicas = r;
        if (meets(c)) {
            found = c;
            break;
        }
        miss = r;
        if (r >= hi) break;
        r = std::min(hi, std::max(r + 1, 2 * r));
    }
    if (!found) return std::nullopt;
    while (found->replicas - miss > 1) {
        c.replicas = miss + (found->replicas - miss) / 2;
        if (meets(c))
            found = c;
        else
            miss = c.replicas;
    }
    return found;
}

// Confirms `w` on the whole deployment (the search judged one sampled replica): while it misses, the next
// replica count is taken (a few times, at most max_gpus). Returns whether it meets.
bool confirm_whole(const Scenario& base, CapacityCandidate& w, int max_gpus, std::int64_t& simulations) {
    for (int i = 0; i < 4; ++i) {
        judge_candidate(base, w, true);
        ++simulations;
        if (w.meets || (w.replicas + 1) * w.tp * w.pp > max_gpus) break;
        ++w.replicas;
    }
    w.judged_whole = true;
    return w.meets;
}

GroupOutcome search_group(const Scenario& base, const CapacityCandidate& proto,
                          const std::vector<std::int64_t>& batches, const std::vector<std::int64_t>& chunks,
                          int max_gpus) {
    const auto& in0 = base.inference;
    const double step_tokens = decode_step_tokens(in0.speculative);
    GroupOutcome g;
    const int most = std::max(1, max_gpus / (proto.tp * proto.pp));
    for (std::int64_t mb : batches)
        for (std::int64_t chunk : chunks) {
            if (chunk > 0 && static_cast<double>(chunk) < step_tokens) continue;
            CapacityCandidate c = proto;
            c.max_batch = mb;
            c.max_batch_tokens = chunk;
            ++g.variants;
            // One replica's offline throughput (every request queued at once) bounds the replicas from
            // below: a replica cannot keep up with more than it serves flat out (its drain makes the bound
            // low, so the search starts a little under it).
            Scenario off = capacity_scenario(base, c);
            off.inference.qps = 0;
            off.inference.requests = std::min<std::int64_t>(in0.requests, 3000);
            double cap = 0;
            try {
                cap = simulate_serving(off.serving_job()).requests_per_s;
            } catch (const ConfigError&) {
                continue;
            }
            ++g.simulations;
            if (!(cap > 0)) continue;
            g.most_per_replica_qps = std::max(g.most_per_replica_qps, cap);
            // Replicas: the fewest meeting the SLO, between the bound and the GPUs allowed (fewer than the
            // group's best so far).
            const int hi_limit = g.best ? g.best->replicas - 1 : most;
            const double need = std::floor(0.8 * in0.qps / cap);
            if (need > most) continue;   // more replicas than the GPUs allowed could not keep up
            const int lo = static_cast<int>(std::clamp(need, 1.0, static_cast<double>(most)));
            if (lo > hi_limit) continue;
            auto found = fewest_sampled_replicas(base, c, lo, hi_limit, g.simulations);
            if (!found) continue;
            g.best = *found;
        }
    return g;
}

}   // namespace

double arrival_dispersion(const InferenceConfig& in) {
    return in.arrivals ? 1.0 : std::max(1.0, in.arrival_cv * in.arrival_cv);
}

void refuse_uncovered_profile(const InferenceConfig& in, double qps, std::int64_t max_requests) {
    throw ConfigError(fmt::format(
        "/inference/rate_profile/period_s: {:g}: a stream spanning the period at {:.4g} req/s needs about {:.3g} "
        "requests, past the {} one judged simulation may take, so its later slices would go unjudged: expected a "
        "shorter period (the same levels over an hour: each slice still spans many times the time in system)",
        in.rate_profile.period_s, qps, std::ceil(qps * in.rate_profile.period_s * arrival_dispersion(in)),
        max_requests));
}

double judged_span_s(const InferenceConfig& in, double span_s) {
    return in.rate_profile.enabled() ? std::max(span_s, in.rate_profile.period_s) : span_s;
}

double wanted_stream_requests(const InferenceConfig& in, double qps, double span_s) {
    return std::ceil(qps * judged_span_s(in, span_s) * arrival_dispersion(in));
}

double router_loads_read(bool reads_loads, std::int64_t replicas, double requests) {
    return reads_loads ? static_cast<double>(replicas) * requests : 0.0;
}

bool router_past_work_limit(RouterPolicy r, std::int64_t replicas, double requests, double limit_loads) {
    return router_loads_read(router(r).uses_load, replicas, requests) > limit_loads;
}

Scenario sampled_probe_scenario(const Scenario& s, double span_s, std::int64_t max_requests) {
    const auto& in = s.inference;
    const int replicas = s.parallel.dp * s.parallel.cp;
    const double want = wanted_stream_requests(in, in.qps, span_s);
    const double cap = static_cast<double>(max_requests);
    const bool independent = !router(in.router).uses_load && !in.autoscale.enabled() && !in.disaggregation.enabled() &&
                             !in.rate_profile.enabled() && !in.arrivals && s.parallel.cp == 1;
    if (!independent || replicas <= 1 || !(in.qps > 0) || !(want > cap)) return s;
    const int fewer = std::max(1, static_cast<int>(std::floor(replicas * cap / want)));
    const double share = static_cast<double>(fewer) / replicas;
    Scenario r = s;
    r.parallel.dp = fewer;
    r.gpus = r.parallel.world();
    r.inference.qps = in.qps * share;
    r.inference.requests = static_cast<std::int64_t>(
        std::min(std::max(static_cast<double>(in.requests) * share, std::ceil(want * share)), cap));
    return r;
}

std::int64_t capacity_stream_requests(const InferenceConfig& in) {
    // A rate profile's stream spans its whole period (every slice judged), or the question is refused.
    const double want = wanted_stream_requests(in, in.qps, kCapacityStreamS);
    if (in.rate_profile.enabled() && want > static_cast<double>(kCapacityMaxRequests))
        refuse_uncovered_profile(in, in.qps, kCapacityMaxRequests);
    return static_cast<std::int64_t>(
        std::min(std::max(static_cast<double>(in.requests), want), static_cast<double>(kCapacityMaxRequests)));
}

void refuse_expert_parallel(const Scenario& s, std::string_view who) {
    const auto refuse = [&](const char* pointer, int ep, const char* replicas) {
        throw ConfigError(
            fmt::format("{}: {}: {} lays out {} without expert parallelism; expected 1, or `llmsim "
                        "estimate` (with --qps max for the capacity) on each expert-parallel "
                        "deployment to compare",
                        pointer, ep, who, replicas));
    };
    if (s.inference.disaggregation.prefill_ep > 1)
        refuse("/inference/disaggregation/prefill_ep", s.inference.disaggregation.prefill_ep, "prefill replicas");
    if (s.parallel.ep > 1) refuse("/parallel/ep", s.parallel.ep, "replicas");
}

void refuse_autoscale(const Scenario& s, std::string_view who) {
    if (s.inference.autoscale.enabled())
        throw ConfigError(
            fmt::format("/inference/autoscale: {} sizes fixed deployments: expected no autoscale "
                        "(`llmsim estimate` runs the autoscaled fleet on a stream)",
                        who));
}

std::vector<CapacityCandidate> capacity_groups(const Scenario& base, int max_gpus) {
    if (base.inference.disaggregation.enabled())
        throw ConfigError(
            "/inference/disaggregation: this search sizes colocated deployments (every replica prefills and "
            "decodes); pools are sized by fewest_pools (`llmsim search` on the scenario; docs/serving.md "
            "\"Disaggregated prefill and decode\")");
    const auto& in0 = base.inference;
    std::vector<Precision> precisions{in0.weight_precision};
    if (in0.weight_precision != Precision::fp8 && base.system.gpu.peak(Precision::fp8) > 0)
        precisions.push_back(Precision::fp8);
    const std::int64_t longest_blocks = admission_blocks(in0, longest_request(in0));
    std::vector<CapacityCandidate> groups;
    const int domain = std::max(1, base.system.scaleup_domain);
    for (int tp = 1; tp <= std::min(domain, max_gpus); tp *= 2) {
        if (tp_rules(base.model, tp) != 0) continue;   // heads must divide over tp (hardware_db/layout_rules)
        for (Precision prec : precisions) {
            // pp: the smallest power of two at which a request fits the KV cache; a deeper pipeline adds
            // GPUs per replica and stage-balance loss (cost_models/inference).
            for (int pp = 1; pp <= base.model.layers && tp * pp <= max_gpus; pp *= 2) {
                if (pp_rules(base.model, pp, 1) != 0) continue;
                CapacityCandidate proto;
                proto.tp = tp;
                proto.pp = pp;
                proto.weight_precision = prec;
                proto.kv_precision = prec == Precision::fp8 ? Precision::fp8 : in0.kv_precision;
                const auto pool = kv_pool(capacity_scenario(base, proto).serving_job());
                if (pool.blocks < longest_blocks) continue;   // the simulator would refuse the stream
                groups.push_back(proto);
                break;
            }
        }
    }
    return groups;
}

CapacityResult serving_capacity_search(const Scenario& base, int max_gpus, int threads,
                                       const std::function<void(std::size_t, std::size_t)>& progress) {
    const auto& in0 = base.inference;
    if (!(in0.qps > 0))
        throw ConfigError("/inference/qps: missing or 0: expected the arrival rate the deployment must hold");
    if (!in0.slo.any())
        throw ConfigError("/inference/slo: missing: expected ttft_p99_s, tpot_p99_s, ttft_p90_s and/or tpot_p90_s");
    CapacityResult out;
    const auto batches = capacity_max_batches(in0);
    const auto chunks = capacity_chunks(in0);
    // The groups (tp, pp, precision), in a fixed order; searched in parallel, gathered in this order.
    const std::vector<CapacityCandidate> groups = capacity_groups(base, max_gpus);
    std::vector<GroupOutcome> outcomes(groups.size());
    parallel_for(
        groups.size(), threads,
        [&](std::size_t i) { outcomes[i] = search_group(base, groups[i], batches, chunks, max_gpus); }, progress);
    for (std::size_t i = 0; i < groups.size(); ++i) {
        out.simulations += outcomes[i].simulations;
        out.variants += outcomes[i].variants;
        if (outcomes[i].best) out.best.push_back(*outcomes[i].best);
    }
    std::stable_sort(out.best.begin(), out.best.end(), [](const CapacityCandidate& a, const CapacityCandidate& b) {
        if (a.gpus() != b.gpus()) return a.gpus() < b.gpus();
        return a.result.tpot_s.p99 < b.result.tpot_s.p99;
    });
    if (out.best.empty()) {
        double most = 0;
        for (const auto& o : outcomes) most = std::max(most, o.most_per_replica_qps);
        out.why_none =
            groups.empty()
                ? fmt::format("no layout of at most {} GPUs holds one request's KV cache", max_gpus)
                : fmt::format(
                      "no deployment of at most {} GPUs meets the SLO at {:.4g} req/s (one replica serves at "
                      "most {:.4g} req/s offline): expected more GPUs (--max-gpus), a lower rate or a looser "
                      "SLO",
                      max_gpus, in0.qps, most);
        return out;
    }
    // The answer on the whole deployment (the search judged one sampled replica): each candidate in order of
    // its sampled GPUs is judged whole, the next replica count taken while it misses (confirm_whole); one whose
    // sampled GPUs are not below the fewest confirmed cannot need fewer, so the confirmations stop there. (Only
    // the first was confirmed until 2026-11-29: a 12-GPU tp 4 that needed 16 whole was answered while a 12-GPU
    // tp 2 met whole at 14.) Then one replica fewer than the answer must miss.
    std::optional<std::size_t> winner;
    for (std::size_t i = 0; i < out.best.size(); ++i) {
        CapacityCandidate& c = out.best[i];
        if (winner && c.gpus() >= out.best[*winner].gpus()) break;
        if (confirm_whole(base, c, max_gpus, out.simulations) && (!winner || c.gpus() < out.best[*winner].gpus()))
            winner = i;
    }
    if (!winner) {
        out.why_none = fmt::format("the best deployment found ({} GPUs) misses the SLO on the whole deployment",
                                   out.best.front().gpus());
        out.best.clear();
        return out;
    }
    // The answer first, then the others in order of their GPUs (confirmed ones at their whole count).
    std::rotate(out.best.begin(), out.best.begin() + static_cast<std::ptrdiff_t>(*winner),
                out.best.begin() + static_cast<std::ptrdiff_t>(*winner) + 1);
    std::stable_sort(out.best.begin() + 1, out.best.end(),
                     [](const CapacityCandidate& a, const CapacityCandidate& b) { return a.gpus() < b.gpus(); });
    CapacityCandidate& w = out.best.front();
    if (w.replicas > 1) {
        CapacityCandidate c = w;
        c.replicas -= 1;
        judge_candidate(base, c, true);
        ++out.simulations;
        out.fewer = c;
    }
    return out;
}

std::optional<CapacityCandidate> fewest_replicas(const Scenario& base, const CapacityCandidate& c, int from,
                                                 int max_gpus, std::int64_t& simulations) {
    if (!(base.inference.qps > 0))
        throw ConfigError("/inference/qps: missing or 0: expected the arrival rate the deployment must hold");
    if (!base.inference.slo.any())
        throw ConfigError("/inference/slo: missing: expected ttft_p99_s, tpot_p99_s, ttft_p90_s and/or tpot_p90_s");
    const int most = std::max(1, max_gpus / (c.tp * c.pp));
    const int lo = std::clamp(from, 1, most);
    auto found = fewest_sampled_replicas(base, c, lo, most, simulations);
    if (!found || !confirm_whole(base, *found, max_gpus, simulations)) return std::nullopt;
    return found;
}

Scenario pool_scenario(const Scenario& base, int prefill, int decode) {
    Scenario s = base;
    auto& d = s.inference.disaggregation;
    d.prefill_gpus = prefill * d.prefill_tp;
    s.parallel.dp = decode;
    s.gpus = d.prefill_gpus + s.parallel.world();
    resolve_disaggregation_link(s);   // more GPUs than one scale-up domain: the network's
    return s;
}

PoolSearch fewest_pools(const Scenario& base, int max_gpus) {
    const auto& in = base.inference;
    if (!in.disaggregation.enabled())
        throw ConfigError("/inference/disaggregation: missing: expected the prefill pool's tp to size pools");
    if (!(in.qps > 0))
        throw ConfigError("/inference/qps: missing or 0: expected the arrival rate the deployment must hold");
    if (!in.slo.any())
        throw ConfigError("/inference/slo: missing: expected ttft_p99_s, tpot_p99_s, ttft_p90_s and/or tpot_p90_s");
    PoolSearch out;
    const int gp = std::max(1, in.disaggregation.prefill_tp);
    const int gd = std::max(1, base.parallel.model_parallel());
    if (gp + gd > max_gpus) {
        out.why_none =
            fmt::format("one prefill replica ({} GPUs) and one decode replica ({}) exceed {} GPUs", gp, gd, max_gpus);
        return out;
    }
    Scenario at = base;
    at.inference.requests = capacity_stream_requests(in);
    auto judge = [&](int p, int d) {
        PoolCandidate c;
        c.prefill_replicas = p;
        c.decode_replicas = d;
        c.prefill_tp = gp;
        c.decode_gpus_per_replica = gd;
        c.result = simulate_serving(pool_scenario(at, p, d).serving_job());
        ++out.simulations;
        c.meets = c.result.slo_met;
        return c;
    };
    // The fewest n in [1, most] for which ok(n), by an exponential step up from 1 then a bisection.
    auto fewest = [](int most, const std::function<bool(int)>& ok) -> std::optional<int> {
        int miss = 0, hit = 1;
        while (!ok(hit)) {
            miss = hit;
            if (hit >= most) return std::nullopt;
            hit = std::min(most, 2 * hit);
        }
        while (hit - miss > 1) {
            const int mid = miss + (hit - miss) / 2;
            (ok(mid) ? hit : miss) = mid;
        }
        return hit;
    };
    // 1. The prefill pool, the decode pool given every GPU left.
    const auto prefill = fewest((max_gpus - gd) / gp, [&](int p) {
        const auto c = judge(p, (max_gpus - p * gp) / gd);
        return c.result.steadiness.keeps_up && stream_slo_ratio(in, true, c.result) <= 1;
    });
    if (!prefill) {
        out.why_none = fmt::format("no prefill pool within {} GPUs meets the TTFT target and keeps up at {:.4g} req/s",
                                   max_gpus, in.qps);
        return out;
    }
    // 2. The decode pool beside it.
    std::optional<PoolCandidate> best;
    const auto decode = fewest((max_gpus - *prefill * gp) / gd, [&](int d) {
        auto c = judge(*prefill, d);
        const bool meets = c.meets;
        if (meets && (!best || d < best->decode_replicas)) best = std::move(c);   // the answer: the fewest meeting
        return meets;
    });
    if (!decode || !best) {
        out.why_none =
            fmt::format("with {} prefill replicas, no decode pool within {} GPUs meets the SLO at {:.4g} req/s",
                        *prefill, max_gpus, in.qps);
        return out;
    }
    out.best = std::move(best);
    return out;
}

}   // namespace llmsim::sim
