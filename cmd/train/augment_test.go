package main

import (
	"regexp"
	"strings"
	"testing"
)

// train --augment puts RandomFlip and RandomTranslation first in the cnn
// (a Sequential) and resnet20 (a functional model) and trains on /CPU:0;
// the flips and shifts change training (a control: the same run without
// --augment ends at another loss); --load-model refuses it.
func TestTrainAugment(t *testing.T) {
	isolate(t)
	common := []string{"--synthetic", "--synthetic-samples", "96", "--seed", "3", "--device=/CPU:0", "--verbose", "2", "--epochs", "1"}
	loss := regexp.MustCompile(`(?m)^3/3 - .* - loss: \S+`)
	var losses []string
	for _, args := range [][]string{{"--model", "cnn", "--augment"}, {"--model", "cnn"}} {
		r := runTrain(t, append(common, args...)...)
		if r.err != nil {
			t.Fatalf("train %s: %v\n%s", strings.Join(args, " "), r.err, r.stderr)
		}
		augmented := strings.Contains(r.stdout, " random_flip (RandomFlip) ") && strings.Contains(r.stdout, " random_translation (RandomT") // Keras cuts the column
		if augmented != (len(args) == 3) {
			t.Errorf("train %s: the summary shows augmentation layers: %t\n%s", strings.Join(args, " "), augmented, r.stdout)
		}
		l := loss.FindString(r.stdout)
		if l == "" {
			t.Fatalf("train %s: no epoch line:\n%s", strings.Join(args, " "), r.stdout)
		}
		losses = append(losses, l[strings.LastIndex(l, "loss: "):])
	}
	if losses[0] == losses[1] {
		t.Errorf("%s with and without --augment: the augmentation did nothing", losses[0])
	}

	r := runTrain(t, append(common, "--model", "resnet20", "--augment", "--steps-per-epoch", "1", "--batch-size", "16")...)
	if r.err != nil {
		t.Fatalf("train --model resnet20 --augment: %v\n%s", r.err, r.stderr)
	}
	if !strings.Contains(r.stdout, "random_flip (RandomFlip)") || !strings.Contains(r.stdout, "['random_translation[0][0]']") {
		t.Errorf("the ResNet's summary does not start with the augmentation:\n%s", r.stdout)
	}
	r = runTrain(t, "--load-model", "m.safetensors", "--augment", "--epochs", "0")
	if r.err == nil || !strings.Contains(r.err.Error(), "--load-model and --augment exclude each other") {
		t.Errorf("--load-model --augment: %v", r.err)
	}
}
