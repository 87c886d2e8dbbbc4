package device

import (
	"errors"
	"fmt"
	"github.com/gokeras/gokeras/device/driver"
	"time"

	"gorgonia.org/tensor"
)

// CopyStats describes one copy: where from, where to, how many bytes and
// how long the transfer took. Duration covers moving the data only, not
// allocating the destination.
type CopyStats struct {
	From, To Spec
	Bytes    int64
	Duration time.Duration
}

// BytesPerSecond is the copy's throughput, or 0 if it took no measurable
// time.
func (c CopyStats) BytesPerSecond() float64 {
	if c.Duration <= 0 {
		return 0
	}
	return float64(c.Bytes) / c.Duration.Seconds()
}

// String reports the copy in one line, e.g.
// "copied 4.0 MB /CPU:0 -> /GPU:0 in 1.2ms (3.3 GB/s)". Sizes use decimal
// units (1 MB = 1,000,000 bytes); the rate is left out when the copy took
// no measurable time.
func (c CopyStats) String() string {
	s := fmt.Sprintf("copied %s %s -> %s in %s", formatBytes(float64(c.Bytes)), c.From.Short(), c.To.Short(), formatDuration(c.Duration))
	if rate := c.BytesPerSecond(); rate > 0 {
		s += fmt.Sprintf(" (%s/s)", formatBytes(rate))
	}
	return s
}

// Place copies host data onto the device named by spec, like
// tf.identity under tf.device(spec): the result never shares memory with
// d, even on the CPU. The device must exist (no soft placement: resolve
// the spec with Resolve first if you want it). Only float32 tensors are
// supported; views and transposes are materialised first.
func Place(d *tensor.Dense, spec string) (*Tensor, CopyStats, error) {
	src, err := hostView(d)
	if err != nil {
		return nil, CopyStats{}, err
	}
	return Copy(src, spec)
}

// Copy copies t to the device named by to and returns the copy, which
// shares no memory with t, and what the copy cost. Copying to the same
// device makes a second, independent tensor there.
//
// Host to host is a memmove. Data going to or from a device with its own
// memory goes through that driver's driver.Allocator and driver.Buffer; between two such
// devices it goes directly when the destination buffer is a driver.PeerCopier and
// through host memory otherwise.
func Copy(t *Tensor, to string) (*Tensor, CopyStats, error) {
	if err := t.usable(); err != nil {
		return nil, CopyStats{}, err
	}
	dst, err := ParseSpec(to)
	if err != nil {
		return nil, CopyStats{}, err
	}
	if err := checkDevice(dst); err != nil {
		return nil, CopyStats{}, err // it names the device and the fix
	}
	out := &Tensor{device: dst, shape: t.Shape(), size: t.size}
	stats := CopyStats{From: t.device, To: dst, Bytes: t.Bytes()}

	alloc, deviceMemory := allocatorFor(dst.Kind)
	if !deviceMemory {
		out.host = make([]float32, t.size)
		start := time.Now()
		if err := t.copyToHost(out.host); err != nil {
			return nil, CopyStats{}, err
		}
		stats.Duration = time.Since(start)
		return out, stats, nil
	}

	buf, err := alloc.Alloc(dst.Index, t.Bytes())
	if err != nil {
		return nil, CopyStats{}, fmt.Errorf("device: allocating %s on %s: %w", formatBytes(float64(t.Bytes())), dst.Short(), err)
	}
	if buf.Bytes() != t.Bytes() {
		_ = buf.Free() // the size error is the one to report
		return nil, CopyStats{}, fmt.Errorf("device: the %s driver allocated %d bytes, want %d", dst.Kind, buf.Bytes(), t.Bytes())
	}
	start := time.Now()
	if err := t.copyToBuffer(buf); err != nil {
		_ = buf.Free()
		return nil, CopyStats{}, fmt.Errorf("device: copying %s -> %s: %w", t.device.Short(), dst.Short(), err)
	}
	stats.Duration = time.Since(start)
	out.buf = buf
	return out, stats, nil
}

// copyToHost copies t's data into dst, which holds t.size values.
func (t *Tensor) copyToHost(dst []float32) error {
	if t.buf == nil {
		copy(dst, t.host)
		return nil
	}
	if err := t.buf.CopyToHost(floatBytes(dst)); err != nil {
		return fmt.Errorf("device: copying %s -> host: %w", t.device.Short(), err)
	}
	return nil
}

// copyToBuffer copies t's data into the device buffer dst.
func (t *Tensor) copyToBuffer(dst driver.Buffer) error {
	if t.buf == nil {
		return dst.CopyFromHost(floatBytes(t.host))
	}
	if peer, ok := dst.(driver.PeerCopier); ok {
		err := peer.CopyFromPeer(t.buf)
		if !errors.Is(err, errors.ErrUnsupported) {
			return err // done, or failed for real
		}
	}
	staging := make([]byte, t.Bytes())
	if err := t.buf.CopyToHost(staging); err != nil {
		return fmt.Errorf("staging through host memory: %w", err)
	}
	return dst.CopyFromHost(staging)
}

// formatBytes writes a byte count (or rate) with a decimal unit.
func formatBytes(b float64) string {
	if b < 1000 {
		return fmt.Sprintf("%.0f B", b)
	}
	var unit string
	for _, unit = range []string{"kB", "MB", "GB", "TB"} {
		b /= 1000
		if b < 1000 {
			break
		}
	}
	return fmt.Sprintf("%.1f %s", b, unit)
}

// formatDuration writes a duration with about two significant digits.
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case d < time.Millisecond:
		return fmt.Sprintf("%.1fµs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
}
