//go:build unix

package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// mayFollow refuses to follow the symbolic link at path, in directory dir,
// where Linux's fs.protected_symlinks would: when dir is sticky and
// world-writable and the link belongs to neither this process's user nor
// dir's owner. The kernel applies that rule to the links it follows itself;
// Write follows the last links of a path by hand (to make its temporary
// file beside the final file), so it applies the rule here, whatever the
// system's setting.
func mayFollow(path, dir string, link fs.FileInfo) error {
	ls, ok := link.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	d, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("the directory %s of the symbolic link %s: %w", dir, path, err)
	}
	ds, ok := d.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	sticky := d.Mode()&fs.ModeSticky != 0 && d.Mode().Perm()&0o002 != 0
	if !sticky || ls.Uid == uint32(os.Geteuid()) || ls.Uid == ds.Uid {
		return nil
	}
	return fmt.Errorf("%s is a symbolic link in %s, a sticky world-writable directory, and belongs to another user (uid %d): "+
		"such a link is not followed (as Linux's fs.protected_symlinks does not), since anyone can plant one there; "+
		"remove it, or write to a path outside that directory", path, dir, ls.Uid)
}
