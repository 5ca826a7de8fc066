#!/usr/bin/env python3
"""Writes the project's example arrival trace, scenarios/traces/chat-day.csv (docs/serving.md "Traces").

A made-up chat service's day compressed into 20 minutes, for trying `inference.arrivals`; not a
measurement. Arrivals: a non-homogeneous Poisson process whose rate follows the day (a sinusoid between
0.3x and 1.7x of its mean, the trough at the start) with bursts (a two-state Markov-modulated Poisson
process: 8% of the time at 3x), drawn by thinning. Lengths: lognormal prompts (median 600 tokens, sigma
0.9, 16..8192) and outputs (median 180, sigma 0.7, 4..2048), independent of each other and of time.
Seeded: the same file every run. Standard library only.

    python3 scripts/make-example-trace.py [--rate 8] [--minutes 20] [--seed 1] > scenarios/traces/chat-day.csv
"""
import argparse
import math
import random
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rate", type=float, default=8.0, help="mean requests per second")
    ap.add_argument("--minutes", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    span = 60.0 * a.minutes
    peak = a.rate * 1.7 * 3.0   # the thinning envelope: the day's crest in a burst
    burst, t, out = False, 0.0, []
    next_switch = rng.expovariate(1 / 40.0)
    while True:
        t += rng.expovariate(peak)
        if t >= span:
            break
        while t >= next_switch:   # bursts of ~3.5 s mean, 8% of the time
            burst = not burst
            next_switch += rng.expovariate(1 / 3.5 if burst else 1 / 40.0)
        day = 1.0 - 0.7 * math.cos(2 * math.pi * t / span)
        rate = a.rate * day * (3.0 if burst else 1.0) / (1.0 + 0.08 * 2.0)
        if rng.random() * peak < rate:
            inp = min(8192, max(16, round(rng.lognormvariate(math.log(600), 0.9))))
            outp = min(2048, max(4, round(rng.lognormvariate(math.log(180), 0.7))))
            out.append((t, inp, outp))
    w = sys.stdout
    w.write("arrival_s,input_tokens,output_tokens\n")
    for t, i, o in out:
        w.write(f"{t:.4f},{i},{o}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
