#!/usr/bin/env python3
"""Read a gokeras TensorBoard log directory with TensorBoard's own reader.

    python3 scripts/check-tensorboard.py LOGDIR

LOGDIR is what callbacks.TensorBoard (train --tensorboard LOGDIR) wrote:
LOGDIR/train and LOGDIR/validation, each with events.out.tfevents.* files.
Each run is read with tensorboard.backend.event_processing.event_accumulator
(or, without the tensorboard package but with TensorFlow, with
tf.compat.v1.train.summary_iterator), and every scalar is printed as

    RUN TAG STEP VALUE

followed by a count of each run's histograms (whose buckets must add up to
their num). It exits 0 when the runs read, 1 when LOGDIR holds no event
file, the reader raises or no scalar is found, and 2 on a bad command
line. (TensorBoard's reader logs a damaged record and stops at it rather
than raising: look for its warning, or for missing scalars.) When neither TensorBoard nor TensorFlow can be imported it
says it is skipping and exits 0: the check needs their reader.
"""

import os
import sys


def runs_of(logdir):
    """The directories under logdir that hold event files, as run names."""
    runs = []
    for root, _dirs, files in os.walk(logdir):
        if any(f.startswith("events.out.tfevents.") for f in files):
            runs.append(os.path.relpath(root, logdir))
    return sorted(runs)


def read_with_tensorboard(event_accumulator, run_dir):
    """Scalars [(tag, step, value)], histograms {tag: count} and the file
    version, read with TensorBoard's EventAccumulator."""
    acc = event_accumulator.EventAccumulator(
        run_dir,
        size_guidance={event_accumulator.SCALARS: 0, event_accumulator.HISTOGRAMS: 0},
    )
    acc.Reload()
    tags = acc.Tags()
    scalars = []
    for tag in tags.get("scalars", []):
        for ev in acc.Scalars(tag):
            scalars.append((tag, ev.step, ev.value))
    histograms = {}
    for tag in tags.get("histograms", []):
        events = acc.Histograms(tag)
        for ev in events:
            h = ev.histogram_value
            if sum(h.bucket) != h.num:
                raise ValueError(f"{tag} at step {ev.step}: buckets count {sum(h.bucket)}, num is {h.num}")
        histograms[tag] = len(events)
    return scalars, histograms, getattr(acc, "file_version", None)


def read_with_tensorflow(tf, run_dir):
    """The same as read_with_tensorboard, with TensorFlow's summary_iterator."""
    scalars, histograms, version = [], {}, None
    for name in sorted(os.listdir(run_dir)):
        if not name.startswith("events.out.tfevents."):
            continue
        for event in tf.compat.v1.train.summary_iterator(os.path.join(run_dir, name)):
            if event.file_version:
                version = event.file_version
            for value in event.summary.value:
                kind = value.WhichOneof("value")
                if kind == "simple_value":
                    scalars.append((value.tag, event.step, value.simple_value))
                elif kind == "histo":
                    if sum(value.histo.bucket) != value.histo.num:
                        raise ValueError(f"{value.tag} at step {event.step}: buckets count "
                                         f"{sum(value.histo.bucket)}, num is {value.histo.num}")
                    histograms[value.tag] = histograms.get(value.tag, 0) + 1
    return scalars, histograms, version


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    logdir = argv[1]
    reader = None
    try:
        from tensorboard.backend.event_processing import event_accumulator

        def reader(run_dir):
            return read_with_tensorboard(event_accumulator, run_dir)
        how = "tensorboard's event_accumulator"
    except ImportError:
        try:
            import tensorflow as tf

            def reader(run_dir):
                return read_with_tensorflow(tf, run_dir)
            how = "tf.compat.v1.train.summary_iterator"
        except ImportError:
            pass
    if reader is None:
        print("check-tensorboard: skipping: neither tensorboard nor tensorflow can be imported "
              "(pip install tensorboard to run this check)")
        return 0

    runs = runs_of(logdir)
    if not runs:
        print(f"check-tensorboard: {logdir} holds no events.out.tfevents.* file", file=sys.stderr)
        return 1
    print(f"check-tensorboard: reading {logdir} with {how}")
    total = 0
    for run in runs:
        try:
            scalars, histograms, version = reader(os.path.join(logdir, run))
        except Exception as e:  # a damaged file: say which run, fail
            print(f"check-tensorboard: run {run}: {type(e).__name__}: {e}", file=sys.stderr)
            return 1
        if version is not None:
            print(f"{run} file_version {version}")
        for tag, step, value in sorted(scalars, key=lambda s: (s[0], s[1])):
            print(f"{run} {tag} {step} {value:.6g}")
        for tag in sorted(histograms):
            print(f"{run} {tag} histograms: {histograms[tag]}")
        total += len(scalars)
    if total == 0:
        print(f"check-tensorboard: no scalar in {logdir}", file=sys.stderr)
        return 1
    print(f"check-tensorboard: {total} scalars in {len(runs)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
