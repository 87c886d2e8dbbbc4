#!/usr/bin/env python3
"""Sets the CNN parity check's figures on the real gokeras beside those on
the control (every loss gradient scaled by 32/33): how far the real code's
worst step stays below each tolerance, and how far the control's smallest
step lies above it.

    cnn_parity_margins.py REAL.json CONTROL.json

The files are what bench/parity_cnn.py --figures writes (bench/parity.sh
--figures DIR, bench/cnn-parity-control.sh). For each figure the check
holds to a tolerance it prints the real run's worst step and the control's
smallest, and the margins tolerance / real worst and control smallest /
tolerance (both above 1 where the check separates the two), and at how
many of the control's steps the figure is beyond tolerance. Exits 1 if a
deciding figure's real worst exceeds its tolerance (the hidden layers'
figure may at as many steps as parity_cnn.py allows near-ties, within its
factor of the tolerance) or if no deciding figure of the control fails,
else 0.
"""
import json
import sys


def series(d):
    """{figure: (per-step values, tolerance, decides, note)} of one run."""
    t = d["tolerances"]
    steps = d["per_step"]
    out = next(n for n, f in steps[0]["layers"].items() if f["output"])
    hidden = [n for n, f in steps[0]["layers"].items() if not f["output"]]
    # The hidden layers' figure may pass one near-tie step (parity_cnn.py
    # --near-tie-steps, --near-tie-factor); files from before it had none.
    ties = (t.get("near_tie_steps", 0), t.get("near_tie_factor", 1.0))
    s = {
        "loss, relative": ([r["loss_rel"] for r in steps], t["loss"], True,
                           "a forward pass: a gradient error does not reach it"),
        f"output layer ({out}) / its weights": ([r["layers"][out]["weights"] for r in steps], t["weights"], True, ""),
        f"output layer ({out}) / its step": ([r["layers"][out]["step"] for r in steps], t["output_step"], True, ""),
        # "decide": with parity_cnn.py --or-float64 (resnet20), the nearer
        # of PyTorch's float32 and float64 replays; else the float32 one.
        "other layers / their step (worst)": ([max(r["layers"][n].get("decide", r["layers"][n]["step"])
                                                    for n in hidden) for r in steps],
                                              t["step"], True, "", ties),
        "all weights / weights (information)": ([r["model"] for r in steps], t["weights"], False,
                                                "not a criterion: near-ties reach it at large steps"),
    }
    if steps[0]["moving"]:
        s["moving statistics / themselves"] = ([max(f["weights"] for f in r["moving"].values()) for r in steps],
                                               t["moving"], True, "a forward pass: a gradient error does not reach it")
    return s


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    with open(sys.argv[1]) as f:
        real = json.load(f)
    with open(sys.argv[2]) as f:
        ctl = json.load(f)
    if (real["variant"], real["steps"]) != (ctl["variant"], ctl["steps"]):
        raise SystemExit(f"{sys.argv[1]} is variant {real['variant']}, {real['steps']} steps; "
                         f"{sys.argv[2]} variant {ctl['variant']}, {ctl['steps']} steps")
    rs, cs = series(real), series(ctl)
    print(f"MARGINS, variant {real['variant']}, {real['steps']} steps, lr {real['learning_rate']}, batch "
          f"{real['batch_size']}: the real gokeras' worst step against the control's smallest (every loss gradient "
          f"scaled by 32/33)")
    print(f"  {'figure':<40}  {'tolerance':>9}  {'real worst':>10}  {'(step)':>6}  {'tol/real':>8}  "
          f"{'ctl smallest':>12}  {'(step)':>6}  {'ctl/tol':>8}  {'ctl steps beyond':>16}")
    real_ok, ctl_fails = True, False
    for name, (v, tol, decides, note, *tie) in rs.items():
        steps, factor = tie[0] if tie else (0, 1.0)
        c = cs[name][0]
        jr = max(range(len(v)), key=lambda i: v[i])
        jc = min(range(len(c)), key=lambda i: c[i])
        beyond = sum(1 for x in c if not x <= tol)
        print(f"  {name:<40}  {tol:>9.0e}  {v[jr]:>10.2e}  {jr + 1:>6}  {tol / v[jr] if v[jr] > 0 else float('inf'):>8.1f}  "
              f"{c[jc]:>12.2e}  {jc + 1:>6}  {c[jc] / tol:>8.2f}  {beyond:>7} of {len(c):<6}" + (f"  ({note})" if note else ""))
        if decides:
            # Beyond tolerance: at most steps steps, each within factor
            # times it (a near-tie's reroute).
            over = [x for x in v if not x <= tol]
            real_ok &= len(over) <= steps and all(x <= factor * tol for x in over)
            if over and real_ok:
                print(f"  {'':<40}  {len(over)} step(s) of the real run beyond tolerance, within {factor:g} times it: "
                      f"allowed as near-ties (at most {steps})")
            ctl_fails |= beyond > steps or any(not x <= factor * tol for x in c)
    print(f"  real: {'every deciding figure within tolerance (near-ties allowed)' if real_ok else 'BEYOND TOLERANCE'}; "
          f"control: {'fails' if ctl_fails else 'PASSES: the check does not see a 3% gradient error'}")
    sys.exit(0 if real_ok and ctl_fails else 1)


if __name__ == "__main__":
    main()
