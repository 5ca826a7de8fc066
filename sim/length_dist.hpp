// Request lengths drawn from a distribution with bounds (docs/serving.md "The request stream").
//
// A scenario states a length distribution by the mean and stdev of the lengths and the bounds they lie
// in (`min`, `max`), as one reads them off a dataset. Drawing from the family with that mean and stdev
// and clamping to the bounds would not give that mean: MLPerf's Llama-2-70B outputs (lognormal, mean
// 291.9, stdev 229.8, at most 1024) come out 3.5% short. So the lengths are drawn from the family
// restricted to the bounds (a truncated distribution, sampled exactly by its inverse CDF), with the
// parameters that give the restricted distribution the stated mean and, as near as the family reaches
// within the bounds, the stated stdev (exponential: the mean only).
#pragma once

#include <cstdint>

#include "hardware_db/specs.hpp"

namespace llmsim::sim {

struct LengthSampling {
    LengthDist::Kind kind = LengthDist::Kind::fixed;
    // normal: mean and stdev of the untruncated normal; lognormal: those of log(length); uniform: centre
    // and half-width; exponential: 0 and the untruncated mean; fixed: the length and 0.
    double location = 0, scale = 0;
    // exponential only: the density rises towards `hi` (∝ exp(+x/scale)), the mirror image of the
    // falling one. A falling exponential restricted to [lo, hi] has its mean below the midpoint; a mean
    // above it (55.5 in [1, 64]) is the mirror's, so every mean inside the bounds is kept.
    bool rising = false;
    double lo = 1, hi = 1;        // whole-token bounds of the lengths drawn
    double in_range = 1;          // the untruncated family's probability of a length inside the bounds
    double mean = 0, stdev = 0;   // of the lengths drawn (rounding to whole tokens aside)
    // For the draw, set once by length_sampling (normal, lognormal): the bounds in standard-normal units
    // and their probabilities counted from the nearer tail (the upper one when za >= 0).
    double za = 0, zb = 0, ta = 0, tb = 0;

    // The length for a uniform variate u in (0, 1): monotone in u, a whole token in [lo, hi].
    [[nodiscard]] std::int32_t length(double u) const;
};

// Solved by nested bisections on the restricted distribution's closed-form moments (the location for
// the mean at each scale, the scale for the stdev). Never throws; every field is finite.
[[nodiscard]] LengthSampling length_sampling(const LengthDist& d);

}   // namespace llmsim::sim
