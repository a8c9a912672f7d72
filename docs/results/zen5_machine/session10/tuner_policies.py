#!/usr/bin/env python3
"""The call tuner's rule for choosing under noise, simulated (docs/performance.md, tenth session).
A model of src/core/call_tuner.cc's choose() for one shape with three candidates, driven like the
planner bench's rows (12 calls to learn, 12 timed). Each call takes its algorithm's time times
e^N(0, sigma), one call in twenty 3x slower, with an optional drift common to all algorithms.
Policies: samples per candidate before choosing, the window whose median is an algorithm's time
(of an even count: the lower middle), and the switch rule (5% faster than the running algorithm's
median; 'spread': also below the running one's lower quartile). Printed: the share of rows whose
timed calls ran over 10% slower than the fastest, the share of rows that ran more than one
algorithm in the timed calls, and the calls it takes to follow a change (the fastest becomes 1.3x
slower than another after 400 calls; median of 41 runs). Usage: tuner_policies.py [ROWS]"""
import math
import random
import statistics
import sys

MARGIN, EXPLORE, REEXPLORE, BUDGET = 0.95, 1.5, 32, 0.05


def rank(samples, q):
    s = sorted(samples)
    return s[int(q * (len(s) - 1))]


class Tuner:
    def __init__(self, samples, window, spread):
        self.need, self.window, self.spread = samples, window, spread
        self.recent = [[] for _ in range(3)]
        self.count = [0, 0, 0]
        self.warmed = [False] * 3
        self.calls, self.steady = 0, -1

    def learn(self, a, us):
        if not self.warmed[a]:
            self.warmed[a] = True
            return
        self.recent[a] = (self.recent[a] + [us])[-self.window:]
        self.count[a] += 1

    def us(self, a):
        return rank(self.recent[a], 0.5)

    def choose(self, model, predicted):
        call = self.calls
        self.calls += 1
        model_us = max(predicted[model], self.us(model)) if self.count[model] else predicted[model]
        cand = [a for a in range(3) if a == model or predicted[a] <= EXPLORE * model_us]
        runs = lambda a: self.count[a] + self.warmed[a]
        todo = [a for a in cand if self.count[a] < self.need]
        if todo:
            return min(todo, key=lambda a: (runs(a), a != model, predicted[a]))
        best = min((a for a in cand if self.count[a]), key=self.us)
        st = self.steady
        if st >= 0 and st != best and st in cand and self.count[st]:
            keep = self.us(best) > MARGIN * self.us(st)
            if self.spread:
                keep = keep or self.us(best) >= rank(self.recent[st], 0.25)
            if keep:
                best = st
        self.steady = best
        if call % REEXPLORE == REEXPLORE - 1:
            others = [a for a in cand if a != best and self.count[a]]
            if others:
                turn = call // REEXPLORE
                o = others[turn % len(others)]
                stride = math.ceil((self.us(o) / self.us(best) - 1) / (REEXPLORE * BUDGET))
                every = int(min(stride, 1024)) if stride > 1 else 1
                if (turn // len(others)) % every == every - 1:
                    return o
        return best


def call_time(rng, t, sigma):
    return t * math.exp(rng.gauss(0, sigma)) * (3 if rng.random() < 0.05 else 1)


def rows(policy, rng, n, gap, sigma, drift):
    slow = mixed = 0
    for row in range(n):
        truth = [1.6, 1.0, 1 + gap] if row % 2 == 0 else [1.6, 1 + gap, 1.0]
        tuner, level, ran = Tuner(*policy), 1.0, []
        for _ in range(24):
            a = tuner.choose(1, [12, 10, 11])
            level *= math.exp(rng.gauss(0, drift))
            tuner.learn(a, call_time(rng, truth[a] * level, sigma))
            ran.append(a)
        slow += sum(truth[a] for a in ran[12:]) / 12 > 1.1
        mixed += len(set(ran[12:])) > 1
    return slow / n, mixed / n


def follow(policy, seed, sigma=0.3, flip=400, n=1200):
    rng, tuner, ran = random.Random(seed), Tuner(*policy), []
    for i in range(n):
        truth = [1.6, 1.0, 1.3] if i < flip else [1.6, 1.3, 1.0]
        a = tuner.choose(1, [12, 10, 11])
        tuner.learn(a, call_time(rng, truth[a], sigma))
        ran.append(a)
    for i in range(flip, n - 64):
        if sum(a == 2 for a in ran[i:i + 64]) >= 58:
            return i - flip
    return n


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    policies = {"before: 2 samples, median of 3": (2, 3, False),
                "3 samples, median of 7": (3, 7, False),
                "now: 3 samples, median of 7, spread": (3, 7, True),
                "3 samples, median of 5, spread": (3, 5, True),
                "2 samples, median of 7, spread": (2, 7, True)}
    print("policy | rows over 10% slow, gap 0.2 / 0.3 / 0.5 (sigma 0.3) | 0.3 with sigma 0.15 | "
          "0.3 with drift | rows mixing, gap 0.3 | calls to follow a change")
    for name, p in policies.items():
        rng = random.Random(7)
        cells = [rows(p, rng, n, g, 0.3, 0.0) for g in (0.2, 0.3, 0.5)]
        calm = rows(p, rng, n, 0.3, 0.15, 0.0)
        drift = rows(p, rng, n, 0.3, 0.3, 0.03)
        fol = statistics.median(follow(p, s) for s in range(41))
        print(f"{name} | " + " / ".join(f"{c[0]:.2f}" for c in cells) +
              f" | {calm[0]:.2f} | {drift[0]:.2f} | {cells[1][1]:.2f} | {fol:.0f}")


if __name__ == "__main__":
    main()
