package callbacks

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"

	"github.com/gokeras/gokeras/internal/formats/pyformat"
	"github.com/gokeras/gokeras/internal/sys/atomicfile"
	"github.com/gokeras/gokeras/nn"
)

// CSVLogger writes each epoch's figures to a CSV file, like
// keras.callbacks.CSVLogger: a header "epoch" then the figures' names in
// sorted order (epoch,accuracy,loss,val_accuracy,val_loss), one row per
// epoch with epochs counted from 0, values as Python prints them, lines
// ended by "\r\n" (Python's csv module) and "NA" for a figure missing in the
// epoch training stopped at. Make one with NewCSVLogger.
//
// Unlike Keras, which appends to an open file, the file is rewritten
// atomically at the end of each epoch, so it is always a complete CSV.
type CSVLogger struct {
	nn.CallbackBase
	// Filename is the CSV file written.
	Filename string
	// Separator between fields (default ',').
	Separator rune
	// Append keeps the rows of an existing file and adds to them, without
	// a second header (default false: the file is started anew).
	Append bool
	// ResumeEpoch, with Append, is the epoch (from 0) a resumed run starts
	// at (Fit's InitialEpoch): the file's rows of that epoch and later are
	// dropped before the first new row, since the run trains those epochs
	// again. A run resumed from a checkpoint older than the file's last row
	// (its save failed, or was killed) then replaces those rows instead of
	// repeating them. 0 keeps every row, as Keras' append does.
	ResumeEpoch int

	keys    []string
	content bytes.Buffer
}

// NewCSVLogger makes a CSVLogger with Keras' defaults that writes to
// filename.
func NewCSVLogger(filename string) *CSVLogger {
	return &CSVLogger{Filename: filename, Separator: ','}
}

// OnTrainBegin checks the settings and, with Append, reads the rows
// already in the file.
func (c *CSVLogger) OnTrainBegin(nn.Logs) error {
	if c.Filename == "" {
		return errors.New("CSVLogger: no filename given: set Filename, e.g. \"log.csv\"")
	}
	if c.Separator == 0 {
		c.Separator = ','
	}
	c.keys = nil
	c.content.Reset()
	if c.Append {
		old, err := os.ReadFile(c.Filename)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("CSVLogger: %w", err)
		}
		c.content.Write(old)
		if c.ResumeEpoch > 0 {
			return c.keepEpochsBefore(c.ResumeEpoch)
		}
	}
	return nil
}

// OnEpochEnd adds the epoch's row and rewrites the file.
func (c *CSVLogger) OnEpochEnd(epoch int, logs nn.Logs) error {
	w := csv.NewWriter(&c.content)
	w.Comma, w.UseCRLF = c.Separator, true
	if c.keys == nil {
		c.keys = slices.Sorted(maps.Keys(logs))
		if c.content.Len() == 0 { // Keras writes no header when appending to a non-empty file
			if err := w.Write(append([]string{"epoch"}, c.keys...)); err != nil {
				return fmt.Errorf("CSVLogger: %w", err)
			}
		}
	}
	row := []string{strconv.Itoa(epoch)}
	for _, k := range c.keys {
		if v, ok := logs[k]; ok {
			row = append(row, pyformat.Repr(v))
		} else {
			row = append(row, "NA")
		}
	}
	if err := w.Write(row); err != nil {
		return fmt.Errorf("CSVLogger: %w", err)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("CSVLogger: %w", err)
	}
	if err := atomicfile.WriteBytes(c.Filename, c.content.Bytes()); err != nil {
		return fmt.Errorf("CSVLogger: %w", err)
	}
	return nil
}

// keepEpochsBefore drops, from the content an appended file brought, the
// first row of an epoch at or after epoch and every row after it (see
// ResumeEpoch). The header and the rows before stay as they were written.
func (c *CSVLogger) keepEpochsBefore(epoch int) error {
	if c.content.Len() == 0 {
		return nil
	}
	r := csv.NewReader(bytes.NewReader(c.content.Bytes()))
	r.Comma, r.FieldsPerRecord, r.ReuseRecord = c.Separator, -1, true
	for {
		start := r.InputOffset()
		rec, err := r.Read()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("CSVLogger: %s, appended to: %w (remove it, or log to another file)", c.Filename, err)
		}
		if e, err := strconv.Atoi(rec[0]); err == nil && e >= epoch {
			c.content.Truncate(int(start))
			return nil
		}
	}
}
