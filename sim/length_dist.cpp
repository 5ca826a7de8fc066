#include "sim/length_dist.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace llmsim::sim {

namespace {

using Kind = LengthDist::Kind;

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kSqrt2Pi = 2.5066282746310002;
constexpr double kSqrt3 = 1.7320508075688772;

double pdf(double x) { return std::isfinite(x) ? std::exp(-0.5 * x * x) / kSqrt2Pi : 0.0; }
double cdf(double x) { return 0.5 * std::erfc(-x / kSqrt2); }
// P(a < Z < b) for a standard normal Z, from the nearer tail so that it keeps its digits far out.
double mass(double a, double b) {
    if (a > 0) return 0.5 * (std::erfc(a / kSqrt2) - std::erfc(b / kSqrt2));
    return cdf(b) - cdf(a);
}

// Φ⁻¹(p) for p in (0, 1): Acklam's rational approximation (relative error 1.15e-9) and one Halley step
// on erfc, which brings it to double precision.
double inverse_cdf(double p) {
    static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                                   1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
    static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                   6.680131188771972e+01, -1.328068155288572e+01};
    static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                   -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
    static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                   3.754408661907416e+00};
    p = std::clamp(p, 1e-300, 1.0 - 1e-16);
    auto tail = [&](double q) {
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    };
    double x;
    if (p < 0.02425) {
        x = tail(std::sqrt(-2.0 * std::log(p)));
    } else if (p > 1.0 - 0.02425) {
        x = -tail(std::sqrt(-2.0 * std::log1p(-p)));
    } else {
        const double q = p - 0.5, r = q * q;
        x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
            (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
    }
    const double e = cdf(x) - p;
    const double u = e * kSqrt2Pi * std::exp(0.5 * x * x);
    if (std::isfinite(u)) x -= u / (1.0 + 0.5 * x * u);
    return x;
}

struct Moments {
    double mean = 0, stdev = 0, in_range = 0;
};

// Mean, stdev and in-range probability of the family with (location, scale), restricted to [A, B]
// (continuous, 0 < A < B).
Moments restricted(Kind k, double loc, double scale, double A, double B) {
    Moments r;
    switch (k) {
        case Kind::fixed: r = {loc, 0.0, 1.0}; break;
        case Kind::normal: {
            const double a = (A - loc) / scale, b = (B - loc) / scale;
            r.in_range = mass(a, b);
            if (!(r.in_range > 0)) break;
            const double dd = (pdf(a) - pdf(b)) / r.in_range;
            r.mean = loc + scale * dd;
            r.stdev = scale * std::sqrt(std::max(0.0, 1.0 + (a * pdf(a) - b * pdf(b)) / r.in_range - dd * dd));
            break;
        }
        case Kind::lognormal: {
            // E[X^k | A < X < B] = exp(kμ + k²σ²/2) · P(a − kσ < Z < b − kσ) / P(a < Z < b).
            const double a = (std::log(A) - loc) / scale, b = (std::log(B) - loc) / scale;
            r.in_range = mass(a, b);
            if (!(r.in_range > 0)) break;
            const double lz = std::log(r.in_range);
            const double e1 = std::exp(loc + 0.5 * scale * scale + std::log(mass(a - scale, b - scale)) - lz);
            const double e2 =
                std::exp(2.0 * loc + 2.0 * scale * scale + std::log(mass(a - 2.0 * scale, b - 2.0 * scale)) - lz);
            r.mean = e1;
            r.stdev = std::sqrt(std::max(0.0, e2 - e1 * e1));
            break;
        }
        case Kind::uniform: {
            const double l = std::max(A, loc - scale), h = std::min(B, loc + scale);
            if (h <= l) {
                r.mean = loc < A ? A : B;   // what the restriction tends to as the overlap vanishes
                break;
            }
            r = {0.5 * (l + h), (h - l) / (2.0 * kSqrt3), (h - l) / (2.0 * scale)};
            break;
        }
        case Kind::exponential: {
            // Density ∝ exp(−x/θ) on [A, B]: A plus an exponential cut at L = B − A.
            const double th = scale, L = B - A, x = L / th;
            r.in_range = std::exp(-A / th) * -std::expm1(-x);
            const double cut = x > 700 ? 0.0 : 1.0 / std::expm1(x);   // e^{−x} / (1 − e^{−x})
            const double mean_y = th - L * cut;
            const double second = 2.0 * th * th - (L * L + 2.0 * L * th) * cut;
            r.mean = A + mean_y;
            r.stdev = std::sqrt(std::max(0.0, second - mean_y * mean_y));
            break;
        }
    }
    return r;
}

// Bisection for the x in [lo, hi] where f (increasing) reaches `target`; the nearer end if it does not.
template <class F>
double bisect(F f, double lo, double hi, double target, double rel_tol, int iterations) {
    for (int i = 0; i < iterations; ++i) {
        const double mid = 0.5 * (lo + hi);
        const double v = f(mid);
        if (std::abs(v - target) <= rel_tol * std::abs(target)) return mid;
        (v < target ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
}

}   // namespace

std::int32_t LengthSampling::length(double u) const {
    const double A = lo - 0.5, B = hi + 0.5;
    // The standard normal restricted to [za, zb] at quantile u, from the nearer tail.
    auto z = [&] {
        const double v = za >= 0 ? -inverse_cdf(ta - u * (ta - tb)) : inverse_cdf(ta + u * (tb - ta));
        return std::clamp(v, za, zb);
    };
    double x = location;
    switch (kind) {
        case Kind::fixed: break;
        case Kind::normal: x = location + scale * z(); break;
        case Kind::lognormal: x = std::exp(location + scale * z()); break;
        case Kind::uniform: {
            const double l = std::max(A, location - scale), h = std::min(B, location + scale);
            x = h > l ? l + u * (h - l) : location;
            break;
        }
        case Kind::exponential: {
            // The falling exponential from A at quantile u, or its mirror from B at 1 − u (still monotone
            // increasing in u).
            const double q = rising ? 1.0 - u : u;
            const double y = -scale * std::log1p(q * std::expm1(-(B - A) / scale));
            x = rising ? B - y : A + y;
            break;
        }
    }
    return static_cast<std::int32_t>(std::clamp(std::round(x), lo, hi));
}

LengthSampling length_sampling(const LengthDist& d) {
    LengthSampling r;
    r.lo = std::max(1.0, std::ceil(d.min));
    r.hi = std::max(r.lo, std::floor(d.max));
    const double m = std::clamp(d.mean, r.lo, r.hi);
    r.location = r.mean = m;
    if (d.is_fixed() || r.hi <= r.lo) return r;
    r.kind = d.kind;
    // A length rounds to a whole token in [lo, hi] exactly when the draw is in [lo − ½, hi + ½).
    const double A = r.lo - 0.5, B = r.hi + 0.5;
    const double s = d.stdev;
    auto mean_at = [&](double scale) {   // the location whose restriction has mean m at this scale
        auto f = [&](double loc) { return restricted(d.kind, loc, scale, A, B).mean; };
        switch (d.kind) {
            case Kind::normal: return bisect(f, A - 35.0 * scale, B + 35.0 * scale, m, 1e-12, 200);
            case Kind::lognormal:
                return bisect(f, std::log(A) - 35.0 * scale, std::log(B) + 35.0 * scale, m, 1e-12, 200);
            default: return bisect(f, A - scale, B + scale, m, 1e-12, 200);   // uniform
        }
    };
    if (d.kind == Kind::exponential) {
        // A falling exponential restricted to [A, B] reaches the means in (A, (A + B)/2); above the
        // midpoint its mirror image, a rising one, with the mirrored mean A + B − m.
        r.location = 0;
        r.rising = m > 0.5 * (A + B);
        const double target = r.rising ? A + B - m : m;
        const double span = B - A;
        r.scale = std::exp(bisect([&](double lt) { return restricted(d.kind, 0, std::exp(lt), A, B).mean; },
                                  std::log(1e-3 * (target - A)), std::log(1e6 * span), target, 1e-12, 200));
    } else {
        // The untruncated parameters of the stated moments; the restriction changes nothing when the
        // bounds hold (almost) all of the mass.
        const double scale0 = d.kind == Kind::lognormal ? std::sqrt(std::log1p(s * s / (m * m)))
                              : d.kind == Kind::uniform ? kSqrt3 * s
                                                        : s;
        const double loc0 = d.kind == Kind::lognormal ? std::log(m) - 0.5 * scale0 * scale0 : m;
        const auto plain = restricted(d.kind, loc0, scale0, A, B);
        if (plain.in_range > 1.0 - 1e-12) {
            r.location = loc0;
            r.scale = scale0;
        } else {
            // The stdev of the restriction, its mean held at m, grows with the scale; past the scale at
            // which the mean can still be held (the restriction tends to an exponential or uniform shape
            // on the bounds), the scale counts as too large.
            const double lo_s = std::log(d.kind == Kind::lognormal ? 1e-3 : 1e-3 * scale0);
            const double hi_s = std::log(d.kind == Kind::lognormal ? 4.0 : 100.0 * scale0);
            const double ls = bisect(
                [&](double l) {
                    const double sc = std::exp(l);
                    const auto t = restricted(d.kind, mean_at(sc), sc, A, B);
                    return std::abs(t.mean - m) <= 1e-6 * m ? t.stdev : std::numeric_limits<double>::infinity();
                },
                lo_s, hi_s, s, 1e-9, 100);
            r.scale = std::exp(ls);
            r.location = mean_at(r.scale);
        }
    }
    if (d.kind == Kind::normal || d.kind == Kind::lognormal) {
        const bool log = d.kind == Kind::lognormal;
        r.za = ((log ? std::log(A) : A) - r.location) / r.scale;
        r.zb = ((log ? std::log(B) : B) - r.location) / r.scale;
        const bool upper = r.za >= 0;
        r.ta = upper ? 0.5 * std::erfc(r.za / kSqrt2) : cdf(r.za);
        r.tb = upper ? 0.5 * std::erfc(r.zb / kSqrt2) : cdf(r.zb);
    }
    const auto got = restricted(d.kind, r.location, r.scale, A, B);
    r.in_range = got.in_range;
    r.mean = r.rising ? A + B - got.mean : got.mean;
    r.stdev = got.stdev;
    return r;
}

}   // namespace llmsim::sim
