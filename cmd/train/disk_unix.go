//go:build unix

package main

import "golang.org/x/sys/unix"

// freeBytes is the space an unprivileged user may still fill in the file
// system of dir, and whether it could be read.
func freeBytes(dir string) (int64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
