"""The one configuration `duel.py` and `kernel_profile.py` time: its command-line arguments."""

from __future__ import annotations

import argparse


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    """ALGORITHM AGENTS ARMS HORIZON [--graph G] [--edge-prob P] [--loss Q]."""
    parser.add_argument("algorithm")
    parser.add_argument("agents", type=int)
    parser.add_argument("arms", type=int)
    parser.add_argument("horizon", type=int)
    parser.add_argument("--graph", default="erdos-renyi")
    parser.add_argument("--edge-prob", type=float, help="Erdős–Rényi edge probability")
    parser.add_argument("--loss", type=float, default=0.0, help="message loss probability")


def config_fields(args: argparse.Namespace) -> dict:
    """The ``Config`` fields of the parsed arguments, seed 1 (JSON-ready for a worker)."""
    return {
        "algorithm": args.algorithm,
        "agents": args.agents,
        "arms": args.arms,
        "horizon": args.horizon,
        "graph": args.graph,
        "edge_prob": args.edge_prob,
        "loss": args.loss,
        "seed": 1,
    }
