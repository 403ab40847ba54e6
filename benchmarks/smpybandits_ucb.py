"""Single-agent UCB with SMPyBandits, timed; run with the Python of an environment that has it.

Prints one JSON line: {"steps": T, "seconds": s}. Rewards use the same convention as mamab
(Bernoulli, reward = u < mu) so both libraries do the same work.
"""

import json
import sys
import time

import numpy as np
from SMPyBandits.Policies import UCB


def main(n_arms: int, horizon: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    means = rng.random(n_arms)
    noise = rng.random(horizon)
    policy = UCB(n_arms)
    policy.startGame()
    start = time.perf_counter()
    for t in range(horizon):
        arm = policy.choice()
        policy.getReward(arm, float(noise[t] < means[arm]))
    print(json.dumps({"steps": horizon, "seconds": time.perf_counter() - start}))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
