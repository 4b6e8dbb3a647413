#!/usr/bin/env python3
"""Plots a `quiver bench` run: throughput against clients, and latency percentiles against clients, per workload
and path (one PNG each), plus one-client latency of every system per workload.

Usage: plot.py results.json OUT_DIR
"""
import json, os, sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main():
    with open(sys.argv[1]) as f:
        r = json.load(f)
    out = sys.argv[2]
    ladder = r["ladder"]
    workloads = sorted({p["workload"] for p in ladder})
    if ladder:
        fig, ax = plt.subplots(figsize=(10, 6))
        for w in workloads:
            for path, style in (("wire", "-o"), ("embedded", "--x")):
                pts = sorted((p["clients"], p["qps"]) for p in ladder if p["workload"] == w and p["path"] == path)
                if pts:
                    ax.plot([c for c, _ in pts], [q for _, q in pts], style, label=f"{w} ({path})")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("concurrent clients")
        ax.set_ylabel("requests / s")
        ax.set_title(f"Quiver throughput ({r['mode']}, {r['machine']['cores']} cores)")
        ax.legend(fontsize=6, ncol=2)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "throughput.png"), dpi=110)
        plt.close(fig)
        for w in workloads:
            fig, ax = plt.subplots(figsize=(7, 4.5))
            for q in ("p50", "p90", "p95", "p99"):
                pts = sorted((p["clients"], p["client"][q]) for p in ladder if p["workload"] == w and p["path"] == "wire")
                ax.plot([c for c, _ in pts], [v for _, v in pts], "-o", label=f"{q} (wire, client side)")
            pts = sorted((p["clients"], p["server"]["p99"]) for p in ladder if p["workload"] == w and p["path"] == "wire")
            ax.plot([c for c, _ in pts], [v for _, v in pts], ":", label="p99 (server side)")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("concurrent clients")
            ax.set_ylabel("latency, ms")
            ax.set_title(f"{w}: latency percentiles")
            ax.legend(fontsize=7)
            fig.tight_layout()
            fig.savefig(os.path.join(out, f"latency-{w}.png"), dpi=110)
            plt.close(fig)
    single = r["single"]
    if single:
        keys = [(s["dataset"], s["workload"]) for s in single if s["system"] == "quiver"]
        systems = sorted({s["system"] for s in single}, key=lambda s: (s != "quiver", s))
        fig, ax = plt.subplots(figsize=(12, 0.35 * len(keys) + 2))
        height = 0.8 / max(len(systems), 1)
        for i, system in enumerate(systems):
            vals = []
            for k in keys:
                m = [s["latency_ms"]["mean"] for s in single if s["system"] == system and (s["dataset"], s["workload"]) == k]
                vals.append(m[0] if m else 0)
            ax.barh([j + i * height for j in range(len(keys))], vals, height=height, label=system)
        ax.set_yticks([j + 0.4 for j in range(len(keys))])
        ax.set_yticklabels([f"{d}: {w}" for d, w in keys], fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel("mean latency, ms (one client, same start vertices; log scale)")
        ax.invert_yaxis()
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(out, "single-client.png"), dpi=110)
        plt.close(fig)


if __name__ == "__main__":
    main()
